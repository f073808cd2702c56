import DedogSidecar
import DedogTestSupport
import Foundation
import Testing

/// Sidecars merged, not replaced: the user's keywords and darktable's history stay through tagging, re-tagging
/// and removal; dedog takes out only what it added.
@Suite struct SidecarTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-sidecar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func photo(_ name: String = "rex.jpg") -> String { folder.appendingPathComponent(name).path }

    @Test func tagRetagAndRemoveKeepTheUsersKeywordsAndDarktablesHistory() throws {
        let path = photo() + ".xmp"
        try Data(XMPFixtures.darktableSidecar.utf8).write(to: URL(fileURLWithPath: path))
        let beagle = [["Animals", "Dogs"], ["Animals", "Dogs", "Beagle"]]

        let first = try Sidecar(photo: photo())
        #expect(first.existed && first.path == path && !first.createdByDedog)
        #expect(try first.replaceDedogTags(with: beagle, writer: "m1"))
        try first.save()

        let tagged = try Sidecar(photo: photo())
        #expect(tagged.writer == "m1")
        #expect(tagged.values(XMPNamespace.digiKam, "TagsList") == ["Animals/Dogs", "Animals/Dogs/Beagle"])
        #expect(tagged.values(XMPNamespace.lightroom, "hierarchicalSubject") == ["Places|Šumava", "Animals|Dogs", "Animals|Dogs|Beagle"])
        #expect(tagged.values(XMPNamespace.microsoftPhoto, "LastKeywordXMP") == ["Animals/Dogs", "Animals/Dogs/Beagle"])
        // "Beagle" was the user's already: not added twice, and not recorded as dedog's.
        #expect(tagged.values(XMPNamespace.dublinCore, "subject") == ["holiday", "Beagle", "Dogs"])
        #expect(tagged.dedogTags == ["Animals/Dogs", "Animals/Dogs/Beagle"])
        // The history's values stay (exempi may write an attribute as an element; exiv2 reads the history back
        // in TagCommandTests).
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for kept in ["exposure", "colorin", "gz48eJxjZBgFo2AU", "0000000000000000"] {
            #expect(text.contains(kept), "\(kept) lost:\n\(text)")
        }
        // The same answer again changes nothing.
        #expect(try !tagged.replaceDedogTags(with: beagle, writer: "m1"))

        // Another model's answer replaces dedog's keywords, and only those.
        let again = try Sidecar(photo: photo())
        #expect(try again.replaceDedogTags(with: [["Animals", "Dogs"], ["Animals", "Dogs", "Basset"]], writer: "m2"))
        try again.save()
        let retagged = try Sidecar(photo: photo())
        #expect(retagged.values(XMPNamespace.dublinCore, "subject") == ["holiday", "Beagle", "Dogs", "Basset"])
        #expect(retagged.values(XMPNamespace.digiKam, "TagsList") == ["Animals/Dogs", "Animals/Dogs/Basset"])

        // Removal leaves the file as the user had it (in content), and the file stays: dedog did not make it.
        #expect(try retagged.removeDedogTags())
        #expect(!retagged.isEmptyApartFromDedog)
        try retagged.save()
        let removed = try Sidecar(photo: photo())
        #expect(removed.values(XMPNamespace.dublinCore, "subject") == ["holiday", "Beagle"])
        #expect(removed.values(XMPNamespace.lightroom, "hierarchicalSubject") == ["Places|Šumava"])
        #expect(removed.values(XMPNamespace.digiKam, "TagsList").isEmpty)
        #expect(removed.writer == nil && removed.dedogTags.isEmpty)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("gz48eJxjZBgFo2AU"))
    }

    @Test func aSidecarDedogMadeIsEmptyOnceItsKeywordsAreOut() throws {
        let made = try Sidecar(photo: photo())
        #expect(!made.existed)
        try made.replaceDedogTags(with: [["Zvířata", "Psi"], ["Zvířata", "Psi", "Bígl"]], writer: "m1")
        try made.save()
        let read = try Sidecar(photo: photo())
        #expect(read.createdByDedog)
        #expect(read.values(XMPNamespace.dublinCore, "subject") == ["Psi", "Bígl"])
        try read.removeDedogTags()
        #expect(read.isEmptyApartFromDedog)
        // A keyword the user added meanwhile keeps it.
        let kept = try Sidecar(photo: photo())
        _ = try kept.replaceDedogTags(with: [["Zvířata", "Psi"]], writer: "m1")
        #expect(!kept.isEmptyApartFromDedog)
    }

    /// photo.xmp is used when it is the only sidecar (digiKam and Immich read it); photo.jpg.xmp otherwise.
    @Test func theSidecarsName() throws {
        #expect(try Sidecar(photo: photo("a.jpg")).path == photo("a.jpg.xmp"))
        FileManager.default.createFile(atPath: photo("b.xmp"), contents: Data(XMPFixtures.darktableSidecar.utf8))
        #expect(try Sidecar(photo: photo("b.jpg")).path == photo("b.xmp"))
        FileManager.default.createFile(atPath: photo("b.jpg.xmp"), contents: Data(XMPFixtures.darktableSidecar.utf8))
        #expect(try Sidecar(photo: photo("b.jpg")).path == photo("b.jpg.xmp"))
        // A folder with a dot in its name does not count as the photo's extension.
        try FileManager.default.createDirectory(atPath: photo("c.d"), withIntermediateDirectories: true)
        #expect(try Sidecar(photo: photo("c.d/photo")).path == photo("c.d/photo.xmp"))
    }

    @Test func filesThatAreNoSidecarAreLeftAlone() throws {
        for (name, bytes) in [("text.jpg", "hello, not XMP"), ("cut.jpg", String(XMPFixtures.darktableSidecar.prefix(300))),
                              ("html.jpg", "<html><body>no</body></html>"), ("empty.jpg", ""),
                              ("rdf.jpg", "<?xml version=\"1.0\"?>\n<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF")] {
            #expect(throws: SidecarError.notXMP(path: photo(name) + ".xmp")) {
                FileManager.default.createFile(atPath: photo(name) + ".xmp", contents: Data(bytes.utf8))
                return try Sidecar(photo: photo(name))
            }
            #expect(try String(contentsOfFile: photo(name) + ".xmp", encoding: .utf8) == bytes)
        }
        try FileManager.default.createSymbolicLink(atPath: photo("link.jpg") + ".xmp", withDestinationPath: "/etc/hostname")
        #expect(throws: SidecarError.symbolicLink(path: photo("link.jpg") + ".xmp")) { try Sidecar(photo: photo("link.jpg")) }
    }
}
