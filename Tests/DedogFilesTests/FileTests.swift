import Foundation
import Testing
import DedogFiles

/// A scratch folder for one test, removed at the end.
struct Scratch {
    let path: String

    init(_ name: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-files-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String = "x") throws {
        let file = path + "/" + name
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    func link(_ name: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: target)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct FileReaderTests {
    @Test func readsRegularFilesWhole() throws {
        let s = try Scratch("read")
        defer { s.remove() }
        try s.write("a.txt", "hello")
        #expect(try FileReader.read(s.path + "/a.txt", limit: 5) == Array("hello".utf8))
        #expect(try FileReader.readData(s.path + "/a.txt", limit: 5) == Data("hello".utf8))
        #expect(try FileReader.head(s.path + "/a.txt", count: 2) == Array("he".utf8))
        #expect(try FileReader.head(s.path + "/a.txt", count: 99) == Array("hello".utf8))
    }

    /// Mapped (from any size, here) or read (below `mapFrom`), the bytes are the file's; an empty file is read, as
    /// nothing can be mapped; and a mapped file replaced by renaming keeps the bytes it had (dedog's writers do so).
    @Test func mapsFilesWholeAndKeepsThemWhenReplaced() throws {
        let s = try Scratch("map")
        defer { s.remove() }
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: s.path + "/model.bin"))
        try s.write("empty", "")
        let mapped = try FileReader.mappedData(s.path + "/model.bin", limit: 100_000, mapFrom: 1)
        #expect(mapped == Data(bytes))
        #expect(try FileReader.mappedData(s.path + "/model.bin", limit: 100_000) == Data(bytes))  // below 2 MB: read
        #expect(try FileReader.mappedData(s.path + "/empty", limit: 9, mapFrom: 0) == Data())
        #expect(throws: FileError.tooLarge(bytes: 100_000, limit: 99_999)) {
            try FileReader.mappedData(s.path + "/model.bin", limit: 99_999, mapFrom: 1)
        }
        try AtomicFile.write(Array("new".utf8), to: s.path + "/model.bin")
        #expect(mapped == Data(bytes))
        #expect(throws: FileError.notRegularFile(kind: "a device")) { try FileReader.mappedData("/dev/zero", limit: 9, mapFrom: 1) }
        #expect(throws: FileError.isFolder) { try FileReader.mappedData(s.path, limit: 9, mapFrom: 1) }
    }

    @Test func refusesWhatIsNotARegularFileOrTooLarge() throws {
        let s = try Scratch("refuse")
        defer { s.remove() }
        try s.write("big.bin", "123456")
        #expect(mkfifo(s.path + "/pipe", 0o644) == 0)
        try s.link("loop", to: "loop")
        #expect(throws: FileError.tooLarge(bytes: 6, limit: 5)) { try FileReader.read(s.path + "/big.bin", limit: 5) }
        #expect(throws: FileError.notRegularFile(kind: "a named pipe")) { try FileReader.read(s.path + "/pipe", limit: 9) }
        #expect(throws: FileError.notRegularFile(kind: "a device")) { try FileReader.read("/dev/zero", limit: 9) }
        #expect(throws: FileError.isFolder) { try FileReader.read(s.path, limit: 9) }
        #expect(throws: FileError.notFound) { try FileReader.read(s.path + "/none", limit: 9) }
        #expect(throws: FileError.linkLoop) { try FileReader.read(s.path + "/loop", limit: 9) }
    }
}

@Suite struct AtomicFileTests {
    @Test func replacesTheFileAndLeavesNothingElse() throws {
        let s = try Scratch("atomic")
        defer { s.remove() }
        try s.write("model.bin", "old")
        try AtomicFile.write(Array("new".utf8), to: s.path + "/model.bin")
        #expect(try String(contentsOfFile: s.path + "/model.bin", encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path) == ["model.bin"])
    }

    @Test func failuresAreNamedAndTheOldFileKept() throws {
        #expect(throws: FileError.noFolder(path: "/nonexistent/folder")) {
            try AtomicFile.write(Array("x".utf8), to: "/nonexistent/folder/model.bin")
        }
        let s = try Scratch("atomic-fail")
        defer { s.remove() }
        try s.write("plain", "a file, not a folder")
        #expect(throws: FileError.noFolder(path: s.path + "/plain")) {
            try AtomicFile.write(Array("x".utf8), to: s.path + "/plain/model.bin")
        }
    }
}

@Suite struct FolderWalkTests {
    @Test func listsFilesOnceAndReportsTheRest() throws {
        let s = try Scratch("walk")
        defer { s.remove() }
        try s.write("b/2.jpg")
        try s.write("a/1.jpg")
        try s.write(".hidden/3.jpg")
        try s.write("a/.DS_Store")
        try s.link("a/again.jpg", to: "1.jpg")          // a link to a listed file: not listed again
        try FileManager.default.createDirectory(atPath: s.path + "/c", withIntermediateDirectories: true)
        try s.link("c/first.jpg", to: "../b/2.jpg")        // likewise
        try s.link("c/one.jpg", to: "../.hidden/3.jpg")    // a file reached only by links: listed once, by the first
        try s.link("c/two.jpg", to: "../.hidden/3.jpg")
        try FileManager.default.linkItem(atPath: s.path + "/a/1.jpg", toPath: s.path + "/a/hard.jpg")  // a second name
        try s.link("a/up", to: "..")                    // a loop through a folder link: not followed
        try s.link("b/self.jpg", to: "self.jpg")        // a loop of links: reported
        try s.link("b/gone.jpg", to: "nothing.jpg")     // dangling: reported
        #expect(mkfifo(s.path + "/b/pipe.jpg", 0o644) == 0)

        let listing = FolderWalk.list(s.path + "/")
        #expect(listing.files == [s.path + "/a/1.jpg", s.path + "/a/hard.jpg", s.path + "/b/2.jpg", s.path + "/c/one.jpg"])
        let problems = Dictionary(uniqueKeysWithValues: listing.problems.map { ($0.path, $0.reason) })
        #expect(problems == [
            s.path + "/b/self.jpg": "it is a loop of symbolic links",
            s.path + "/b/gone.jpg": "no such file (it is a symbolic link to a missing file)",
            s.path + "/b/pipe.jpg": "it is a named pipe, not a regular file",
        ])
    }
}
