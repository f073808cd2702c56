import DedogTestSupport
import Foundation
import Testing

/// The readers of XMP the tests use, when installed.
enum XMPReaders {
    static let exiftool = "/usr/bin/exiftool", exiv2 = "/usr/bin/exiv2"
    static let missing: String? = [exiftool, exiv2].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } ? nil
        : "exiftool or exiv2 is missing: scripts/test installs them (scripts/install-deps --tag-readers)"
}

/// `dedog tag` read back by the readers the photo managers use: exiftool (Immich) and exiv2 (digiKam,
/// darktable). A darktable sidecar with the user's keywords keeps both through tag, re-tag and --remove; every
/// bad input is said and the rest goes on.
@Suite(.serialized, .enabled(if: XMPReaders.missing == nil, Comment(rawValue: XMPReaders.missing ?? "")))
final class TagCommandTests {
    static let exiftool = XMPReaders.exiftool, exiv2 = XMPReaders.exiv2
    static let beagle = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
    static let noise = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png")
    static let damaged = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/bad-huffman.jpg")

    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-tag-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func place(_ source: URL, as name: String) throws -> String {
        let target = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source, to: target)
        return target.path
    }

    /// The keywords as exiftool gives them to Immich (which reads TagsList, then HierarchicalSubject, then Keywords).
    func exiftool(_ sidecar: String) throws -> [String: [String]] {
        let r = try Tool.run(Self.exiftool, ["-j", "-XMP-digiKam:TagsList", "-XMP-lr:HierarchicalSubject", "-XMP-dc:Subject",
                                             "-XMP-microsoft:LastKeywordXMP", sidecar])
        #expect(r.status == 0, "exiftool failed on \(sidecar)")
        let object = (try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [[String: Any]])?.first ?? [:]
        var keywords: [String: [String]] = [:]
        for (key, value) in object where key != "SourceFile" {
            keywords[key] = (value as? [Any])?.map { "\($0)" } ?? ["\(value)"]
        }
        return keywords
    }

    /// Every XMP property exiv2 reads (digiKam's and darktable's library), as `key: value`.
    func exiv2(_ sidecar: String) throws -> [String: String] {
        let r = try Tool.run(Self.exiv2, ["-PXkv", sidecar])
        #expect(r.status == 0, "exiv2 failed on \(sidecar)")
        var properties: [String: String] = [:]
        for line in r.output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2 { properties[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return properties
    }

    @Test func aBeagleIsTaggedWhereEveryReaderFindsIt() throws {
        let photo = try place(Self.beagle, as: "walks/rex.jpg")
        _ = try place(Self.noise, as: "walks/noise.png")
        let r = try CLI.run(["tag", folder.appendingPathComponent("walks").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\(photo): Animals/Dogs, Animals/Dogs/Beagle → \(photo).xmp (new)\n"), "\(r.stdout)")
        #expect(r.stdout.contains("noise.png: no dog; nothing written\n"))
        #expect(r.stdout.hasSuffix("Summary — photos: 2 · with a dog: 1 · dogs: 1 · tags written: 2 · sidecars written: 1 · "
                                   + "unchanged: 0 · tagged before: 0 · seen before: 0 · no dog: 1 · skipped: 0 · failed: 0\n"), "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("walks/noise.png.xmp").path))
        #expect(FileManager.default.contentsEqual(atPath: photo, andPath: Self.beagle.path), "the photo itself changed")

        #expect(try exiftool(photo + ".xmp") == ["TagsList": ["Animals/Dogs", "Animals/Dogs/Beagle"],
                                                  "HierarchicalSubject": ["Animals|Dogs", "Animals|Dogs|Beagle"],
                                                  "Subject": ["Dogs", "Beagle"],
                                                  "LastKeywordXMP": ["Animals/Dogs", "Animals/Dogs/Beagle"]])
        let read = try exiv2(photo + ".xmp")
        #expect(read["Xmp.digiKam.TagsList"] == "Animals/Dogs, Animals/Dogs/Beagle")
        #expect(read["Xmp.lr.hierarchicalSubject"] == "Animals|Dogs, Animals|Dogs|Beagle")
        #expect(read["Xmp.MicrosoftPhoto.LastKeywordXMP"] == "Animals/Dogs, Animals/Dogs/Beagle")
        #expect(read["Xmp.dc.subject"] == "Dogs, Beagle")

        // A folder of photos with their sidecars: classify passes over the sidecars without a warning.
        let classified = try CLI.run(["classify", folder.appendingPathComponent("walks").path])
        #expect(classified.status == 0 && classified.stderr.isEmpty, "\(classified.stderr)")

        // Again with the same model: skipped (the record says so), and the file is not rewritten; without the record,
        // the sidecar says so.
        let before = try FileManager.default.attributesOfItem(atPath: photo + ".xmp")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: photo + ".xmp"))
        let again = try CLI.run(["tag", photo])
        #expect(again.status == 0)
        #expect(again.stdout == "\(photo): Animals/Dogs, Animals/Dogs/Beagle, looked at before (\(photo).xmp); skipped\n")
        let unrecorded = try CLI.run(["tag", "--no-record", photo])
        #expect(unrecorded.stdout == "\(photo): tagged by this model before (\(photo).xmp); skipped (--force tags it again)\n")
        let after = try FileManager.default.attributesOfItem(atPath: photo + ".xmp")
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int)
        #expect(try Data(contentsOf: URL(fileURLWithPath: photo + ".xmp")) == bytes)

        // In Czech, under a root of the user's: dedog's keywords are replaced, and the dry run says so first.
        let dry = try CLI.run(["tag", "--force", "--lang", "cs", "--root", "Mazlíčci/Psi", "--dry-run", photo])
        #expect(dry.stdout.hasPrefix("\(photo): Mazlíčci/Psi, Mazlíčci/Psi/beagle → \(photo).xmp\n"), "\(dry.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: photo + ".xmp")) == bytes, "a dry run wrote")
        _ = try CLI.run(["tag", "--force", "--lang", "cs", "--root", "Mazlíčci/Psi", photo])
        #expect(try exiftool(photo + ".xmp")["TagsList"] == ["Mazlíčci/Psi", "Mazlíčci/Psi/beagle"])

        // --remove deletes the sidecar dedog made, which holds nothing else.
        let removed = try CLI.run(["tag", "--remove", folder.appendingPathComponent("walks").path])
        #expect(removed.status == 0)
        #expect(removed.stdout.contains("\(photo): remove Mazlíčci/Psi, Mazlíčci/Psi/beagle; delete \(photo).xmp "
                                        + "(dedog made it and nothing else is in it)\n"), "\(removed.stdout)")
        #expect(!FileManager.default.fileExists(atPath: photo + ".xmp"))
    }

    @Test func darktablesHistoryAndTheUsersKeywordsStayThroughTagRetagAndRemove() throws {
        let photo = try place(Self.beagle, as: "raw/IMG_0042.jpg")
        let sidecar = photo + ".xmp"
        try Data(XMPFixtures.darktableSidecar.utf8).write(to: URL(fileURLWithPath: sidecar))
        func history() throws -> [String?] {
            let read = try exiv2(sidecar)
            return ["Xmp.darktable.history[1]/darktable:operation", "Xmp.darktable.history[2]/darktable:operation",
                    "Xmp.darktable.history[2]/darktable:params", "Xmp.darktable.history_end"].map { read[$0] }
        }
        let expected: [String?] = ["exposure", "colorin", "gz48eJxjZBgFo2AU", "2"]
        #expect(try history() == expected)

        #expect(try CLI.run(["tag", photo]).status == 0)
        var keywords = try exiftool(sidecar)
        #expect(keywords["Subject"] == ["holiday", "Beagle", "Dogs"])
        #expect(keywords["HierarchicalSubject"] == ["Places|Šumava", "Animals|Dogs", "Animals|Dogs|Beagle"])
        #expect(keywords["TagsList"] == ["Animals/Dogs", "Animals/Dogs/Beagle"])
        #expect(try history() == expected)

        #expect(try CLI.run(["tag", "--force", "--lang", "cs", photo]).status == 0)
        keywords = try exiftool(sidecar)
        #expect(keywords["Subject"] == ["holiday", "Beagle", "Psi", "beagle"])
        #expect(keywords["HierarchicalSubject"] == ["Places|Šumava", "Zvířata|Psi", "Zvířata|Psi|beagle"])
        #expect(try history() == expected)

        let removed = try CLI.run(["tag", "--remove", photo])
        #expect(removed.stdout == "\(photo): remove Zvířata/Psi, Zvířata/Psi/beagle from \(sidecar)\n")
        keywords = try exiftool(sidecar)
        #expect(keywords == ["Subject": ["holiday", "Beagle"], "HierarchicalSubject": ["Places|Šumava"]])
        #expect(try history() == expected)
        #expect(try exiv2(sidecar).keys.filter { $0.hasPrefix("Xmp.dedog.") }.isEmpty)
    }

    /// With --lang cs the breeds, the root, each photo's line and the summary are Czech.
    @Test func inCzech() throws {
        let photo = try place(Self.beagle, as: "cs/rex.jpg")
        let noise = try place(Self.noise, as: "cs/x-šum.png")
        let r = try CLI.run(["tag", "--lang", "cs", folder.appendingPathComponent("cs").path])
        #expect(r.status == 0)
        #expect(r.stdout == "\(photo): Zvířata/Psi, Zvířata/Psi/beagle → \(photo).xmp (nový)\n\(noise): žádný pes; nic nezapsáno\n"
                + "Souhrn — fotek: 2 · se psem: 1 · psů: 1 · zapsaných štítků: 2 · zapsaných souborů XMP: 1 · beze změny: 0 · "
                + "označeno dříve: 0 · viděno dříve: 0 · bez psa: 1 · přeskočeno: 0 · nelze zpracovat: 0\n", "\(r.stdout)")
        let again = try CLI.run(["tag", "--lang", "cs", photo])
        #expect(again.stdout == "\(photo): Zvířata/Psi, Zvířata/Psi/beagle, viděno dříve (\(photo).xmp); přeskočeno\n")
        let unrecorded = try CLI.run(["tag", "--lang", "cs", "--no-record", photo])
        #expect(unrecorded.stdout == "\(photo): už označeno tímto modelem (\(photo).xmp); přeskočeno (--force označí znovu)\n")
        let removed = try CLI.run(["tag", "--lang", "cs", "--remove", photo])
        #expect(removed.stdout == "\(photo): odebráno Zvířata/Psi, Zvířata/Psi/beagle; \(photo).xmp smazán "
                + "(vytvořil ho dedog a nic jiného v něm není)\n", "\(removed.stdout)")
    }

    @Test func flagsThatCannotWorkAreRefused() throws {
        for (arguments, message) in [(["--min-probability", "1.5"], "--min-probability must be between 0 and 1 (0.8 for 80 %)."),
                                     (["--root", "/"], "--root must name at least one keyword, e.g. \"Animals/Dogs\"."),
                                     (["--remove", "--force"], "--remove and --force do not go together: --remove classifies nothing.")] {
            let r = try CLI.run(["tag"] + arguments + ["rex.jpg"])
            #expect(r.status == 64)
            #expect(r.stderr.contains(message), "\(r.stderr)")
        }
    }

    @Test func everyBadInputIsSaidAndTheRestGoesOn() throws {
        let good = try place(Self.beagle, as: "in/good.jpg")
        _ = try place(Self.damaged, as: "in/damaged.jpg")
        let junk = try place(Self.beagle, as: "in/junk.jpg")
        try Data("not XMP at all".utf8).write(to: URL(fileURLWithPath: junk + ".xmp"))
        let outside = try place(Self.beagle, as: "elsewhere/away.jpg")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("in/linked.jpg").path, withDestinationPath: outside)
        let linkedSidecar = try place(Self.beagle, as: "in/linkedsidecar.jpg")
        try FileManager.default.createSymbolicLink(atPath: linkedSidecar + ".xmp", withDestinationPath: "/etc/hostname")

        let r = try CLI.run(["tag", folder.appendingPathComponent("in").path])
        #expect(r.status == 1)
        let errors = r.stderr.split(separator: "\n").map(String.init)
        #expect(errors.contains { $0.hasPrefix("dedog: error: \(folder.path)/in/damaged.jpg: ") }, "\(r.stderr)")
        #expect(errors.contains("dedog: error: \(junk): \(junk).xmp is not an XMP sidecar (no XMP packet could be read from it); "
                                + "it was left as it is. Move it aside (or rename it) and run dedog tag again to write a new one."), "\(r.stderr)")
        #expect(errors.contains("dedog: error: \(folder.path)/in/linked.jpg: \(folder.path)/in/linked.jpg leads outside "
                                + "\(folder.path)/in through a symbolic link; dedog tag writes sidecars only inside the folders it is given "
                                + "(name the photo or its folder itself to tag it)."), "\(r.stderr)")
        #expect(errors.contains("dedog: error: \(linkedSidecar): \(linkedSidecar).xmp is a symbolic link; dedog writes only sidecars "
                                + "that are files, and left it as it is."), "\(r.stderr)")
        #expect(r.stdout.contains("\(good): Animals/Dogs, Animals/Dogs/Beagle → \(good).xmp (new)\n"), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("skipped: 0 · failed: 4\n"), "\(r.stdout)")
        #expect(try String(contentsOfFile: junk + ".xmp", encoding: .utf8) == "not XMP at all")
        #expect(!FileManager.default.fileExists(atPath: outside + ".xmp"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: linkedSidecar + ".xmp") == "/etc/hostname")
    }

    @Test(.enabled(if: HostileCorpusTests.canLockOut, "running as root where setpriv cannot drop CAP_DAC_OVERRIDE"))
    func aReadOnlyFolderIsSaid() throws {
        let photo = try place(Self.beagle, as: "locked/rex.jpg")
        let locked = folder.appendingPathComponent("locked").path
        chmod(locked, 0o555)
        defer { chmod(locked, 0o755) }
        let r = try CLI.run(["tag", photo], launcher: HostileCorpusTests.withoutFileOverride)
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: \(photo): cannot write \(photo).xmp: permission denied. Make the folder writable, "
                + "or tag a copy of the photos.\n", "\(r.stderr)")
    }

    /// Ctrl-C in the middle of a folder: the run stops between photos, says so and exits with 130; every sidecar is
    /// as it was (byte for byte) or complete (dedog's keywords and darktable's history), no temporary file is left,
    /// and running again tags the rest.
    @Test func anInterruptedRunLeavesEverySidecarWholeAndTheNextFinishes() throws {
        let photos = try (0..<40).map { try place(Self.beagle, as: "many/dog-\(String(format: "%02d", $0)).jpg") }
        for photo in photos where photo.hasSuffix("0.jpg") || photo.hasSuffix("5.jpg") {
            try Data(XMPFixtures.darktableSidecar.utf8).write(to: URL(fileURLWithPath: photo + ".xmp"))
        }
        let output = folder.appendingPathComponent("stdout.txt")
        let process = try CLI.start(["tag", "--threads", "1", folder.appendingPathComponent("many").path], stdout: output)
        let started = Date()
        while (try Data(contentsOf: output)).isEmpty && process.isRunning && Date().timeIntervalSince(started) < 60 {
            Thread.sleep(forTimeInterval: 0.002)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGINT)
        let done = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").count
        #expect(done >= 1 && done < 40, "the signal came after \(done) photos")

        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("many").path)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(names)")
        for photo in photos where FileManager.default.fileExists(atPath: photo + ".xmp") {
            let text = try String(contentsOfFile: photo + ".xmp", encoding: .utf8)
            if text == XMPFixtures.darktableSidecar { continue }
            #expect(try exiftool(photo + ".xmp")["TagsList"] == ["Animals/Dogs", "Animals/Dogs/Beagle"], "\(photo)")
            if text.contains("darktable") { #expect(try exiv2(photo + ".xmp")["Xmp.darktable.history_end"] == "2") }
        }
        let again = try CLI.run(["tag", folder.appendingPathComponent("many").path])
        #expect(again.status == 0)
        #expect(again.stdout.components(separatedBy: "looked at before").count - 1 == done, "\(again.stdout)")
        for photo in photos {
            #expect(try exiftool(photo + ".xmp")["TagsList"] == ["Animals/Dogs", "Animals/Dogs/Beagle"], "\(photo)")
        }
    }

    // MARK: The record of photos looked at

    /// Replaces `photo`'s bytes with bytes that are no photo, keeping its size and modification time: a run that
    /// reads it fails on it.
    func spoil(_ photo: String) throws {
        var info = stat()
        #expect(stat(photo, &info) == 0)
        try Data(repeating: 0x5A, count: Int(info.st_size)).write(to: URL(fileURLWithPath: photo))
        var times = [info.st_atim, info.st_mtim]  // to the nanosecond
        #expect(utimensat(AT_FDCWD, photo, &times, 0) == 0)
    }

    /// A second run over photos that did not change reads none of them, answering from the record (the photos are
    /// spoilt, their sizes and times kept, between the runs); a photo whose time changes is looked at again, even
    /// one whose sidecar says this model tagged it; so is every photo when another language asks.
    @Test func aRunWithNothingNewReadsNoPhotoAndAChangedOneIsLookedAtAgain() throws {
        let dog = try place(Self.beagle, as: "lib/rex.jpg"), noise = try place(Self.noise, as: "lib/noise.png")
        let library = folder.appendingPathComponent("lib").path, record = folder.appendingPathComponent("seen.sqlite").path
        let dry = try CLI.run(["tag", "--dry-run", "--record", record, library])
        #expect(dry.status == 0 && !FileManager.default.fileExists(atPath: record), "a dry run made a record")
        let first = try CLI.run(["tag", "--record", record, library])
        #expect(first.status == 0, "\(first.stderr)")
        try spoil(dog)
        try spoil(noise)
        let again = try CLI.run(["tag", "--record", record, library])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        #expect(again.stdout == "\(noise): no dog (looked at before, unchanged since); skipped\n"
                + "\(dog): Animals/Dogs, Animals/Dogs/Beagle, looked at before (\(dog).xmp); skipped\n"
                + "Summary — photos: 2 · with a dog: 0 · dogs: 0 · tags written: 0 · sidecars written: 0 · unchanged: 0 · "
                + "tagged before: 0 · seen before: 2 · no dog: 0 · skipped: 0 · failed: 0\n", "\(again.stdout)")

        // The spoilt noise photo's time changes: it is read, and is no photo now.
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: noise)
        let changed = try CLI.run(["tag", "--record", record, library])
        #expect(changed.stderr == "dedog: warning: skipping \(noise): not a JPEG, PNG, HEIC, AVIF or WebP image; it looks like text\n",
                "\(changed.stderr)")
        // The beagle back, a new file: looked at again although its sidecar says this model tagged it.
        try FileManager.default.removeItem(atPath: dog)
        try FileManager.default.copyItem(atPath: Self.beagle.path, toPath: dog)
        let back = try CLI.run(["tag", "--record", record, dog])
        #expect(back.stdout == "\(dog): Animals/Dogs, Animals/Dogs/Beagle, already in \(dog).xmp\n", "\(back.stdout)")
        // Another language: its keywords are written, not skipped.
        let czech = try CLI.run(["tag", "--record", record, "--lang", "cs", dog])
        #expect(czech.stdout == "\(dog): Zvířata/Psi, Zvířata/Psi/beagle → \(dog).xmp\n", "\(czech.stdout)")
        // The record forgotten: the photo this model tagged is still told by its sidecar.
        let forgot = try CLI.run(["tag", "--record", record, "--forget-seen", library])
        #expect(forgot.status == 0)
        #expect(forgot.stdout == "Forgot 2 photos (\(record)); dedog looks again next time at those this model did not tag "
                + "(--force at every one).\n", "\(forgot.stdout)")
        let after = try CLI.run(["tag", "--record", record, "--lang", "cs", dog])
        #expect(after.stdout.hasPrefix("\(dog): už označeno tímto modelem"), "\(after.stdout)")
    }

    /// Two machines tagging one library each keep the record of their own part: a run over the whole library with
    /// part 0's record looks again exactly at part 1's photos.
    @Test func eachShardRecordsItsOwnPart() throws {
        let photos = try (0..<6).map { try place(Self.noise, as: "shared/n\($0).png") }
        let library = folder.appendingPathComponent("shared").path
        let records = (0..<2).map { folder.appendingPathComponent("part-\($0).sqlite").path }
        var mine: [[String]] = []
        for k in 0..<2 {
            let r = try CLI.run(["tag", "--record", records[k], "--shard", "\(k)/2", library])
            #expect(r.status == 0, "\(r.stderr)")
            mine.append(photos.filter { r.stdout.contains("\($0): no dog; nothing written") })
        }
        #expect(Set(mine[0]).isDisjoint(with: mine[1]) && mine[0].count + mine[1].count == photos.count, "\(mine)")
        let whole = try CLI.run(["tag", "--record", records[0], library])
        for photo in photos {
            let seen = whole.stdout.contains("\(photo): no dog (looked at before, unchanged since); skipped")
            #expect(seen == mine[0].contains(photo), "\(photo): \(whole.stdout)")
        }
    }

    /// A record on a network share is refused, saying where to keep it instead; so is a file that is no record.
    @Test func aRecordThatCannotBeUsedIsSaid() throws {
        let photo = try place(Self.noise, as: "one/n.png")
        let junk = folder.appendingPathComponent("junk.sqlite").path
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: junk))
        let r = try CLI.run(["tag", "--record", junk, photo])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("dedog: error: the record of photos looked at, \(junk), is damaged ("), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("; delete it (dedog then looks at every photo again). Keep the record elsewhere with "
                                   + "--record FILE (on a local disk), or go without one with --no-record.\n"), "\(r.stderr)")
        let without = try CLI.run(["tag", "--no-record", photo])
        #expect(without.status == 0 && without.stdout.hasPrefix("\(photo): no dog; nothing written\n"), "\(without.stderr)")
    }

    /// Runs killed at any moment (SIGKILL, no chance to tidy up), and two runs at once on one library and record,
    /// leave a record the next run uses: every photo a run reported is known, and the photos' sidecars are whole.
    @Test func killedRunsAndTwoRunsAtOnceLeaveAUsableRecord() throws {
        let photos = try (0..<24).map { try place(Self.beagle, as: "night/dog-\(String(format: "%02d", $0)).jpg") }
        let library = folder.appendingPathComponent("night").path, record = folder.appendingPathComponent("seen.sqlite").path
        func start(_ output: URL) throws -> Process {
            try CLI.start(["tag", "--threads", "1", "--record", record, library], stdout: output)
        }
        func lines(_ output: URL) throws -> [String] {
            try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        // Killed three times, each after a few more photos.
        var reported = Set<String>()
        for round in 0..<3 {
            let output = folder.appendingPathComponent("kill-\(round).txt")
            let process = try start(output)
            let started = Date()
            while try lines(output).filter({ $0.hasSuffix("(new)") }).count < 2 && process.isRunning
                    && Date().timeIntervalSince(started) < 60 {
                Thread.sleep(forTimeInterval: 0.002)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            for line in try lines(output) where line.hasSuffix("(new)") { reported.insert(String(line.prefix { $0 != ":" })) }
        }
        #expect(reported.count >= 4 && reported.count < photos.count, "\(reported.count) photos reported before the kills")
        // Two at once finish the rest; both end well.
        let outputs = (0..<2).map { folder.appendingPathComponent("both-\($0).txt") }
        let both = try outputs.map(start)
        for process in both { process.waitUntilExit() }
        #expect(both.allSatisfy { $0.terminationStatus == 0 })
        for line in try outputs.flatMap(lines) where line.contains("looked at before") {
            #expect(!line.hasSuffix("(new)"))
        }
        for photo in reported {
            #expect(try outputs.allSatisfy { try lines($0).contains { $0.hasPrefix("\(photo): ") && $0.contains("looked at before") } },
                    "\(photo) was reported before a kill but not recorded")
        }
        let last = try CLI.run(["tag", "--record", record, library])
        #expect(last.status == 0)
        #expect(last.stdout.components(separatedBy: "looked at before").count - 1 == photos.count, "\(last.stdout)")
        for photo in photos {
            #expect(try exiftool(photo + ".xmp")["TagsList"] == ["Animals/Dogs", "Animals/Dogs/Beagle"], "\(photo)")
        }
    }

    // MARK: Watching folders

    /// `tag --watch`: a photo copied in and a photo written slowly (half of it, a pause longer than the settling
    /// time, the rest) are tagged whole; the folder removed and made again is watched again; SIGTERM stops it cleanly.
    @Test func watchTagsPhotosAsTheyArriveAndStopsOnSIGTERM() throws {
        let watched = folder.appendingPathComponent("incoming")
        try FileManager.default.createDirectory(at: watched, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("watch.out"), errors = folder.appendingPathComponent("watch.err")
        let process = try CLI.start(["tag", "--watch", "--record", folder.appendingPathComponent("seen.sqlite").path, watched.path],
                                    stdout: output, stderr: errors)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func text(_ file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        func waitFor(_ file: URL, _ wanted: String) -> Bool {
            let started = Date()
            while Date().timeIntervalSince(started) < 50 {
                if text(file).contains(wanted) { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }
        #expect(waitFor(errors, "dedog: watching \(watched.path); Ctrl-C stops"), "\(text(errors))")

        let copied = watched.appendingPathComponent("copied.jpg").path
        try FileManager.default.copyItem(atPath: Self.beagle.path, toPath: copied)
        let slow = watched.appendingPathComponent("slow.jpg").path
        let bytes = try Data(contentsOf: Self.beagle)
        let handle = try #require(FileHandle(forWritingAtPath: { FileManager.default.createFile(atPath: slow, contents: nil); return slow }()))
        try handle.write(contentsOf: bytes.prefix(bytes.count / 2))
        Thread.sleep(forTimeInterval: 2.5)
        try handle.write(contentsOf: bytes.dropFirst(bytes.count / 2))
        try handle.close()
        for photo in [copied, slow] {
            #expect(waitFor(output, "\(photo): Animals/Dogs, Animals/Dogs/Beagle → \(photo).xmp (new)"),
                    "\(text(output))")
        }
        // The folder removed and made again: watched again.
        try FileManager.default.removeItem(at: watched)
        Thread.sleep(forTimeInterval: 1)
        try FileManager.default.createDirectory(at: watched, withIntermediateDirectories: true)
        let later = watched.appendingPathComponent("later.jpg").path
        try FileManager.default.copyItem(atPath: Self.beagle.path, toPath: later)
        #expect(waitFor(output, "\(later): Animals/Dogs, Animals/Dogs/Beagle → \(later).xmp (new)"),
                "\(text(output))")

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let said = try String(contentsOf: errors, encoding: .utf8)
        #expect(said.hasSuffix("dedog: stopped watching; every sidecar is whole\n"), "\(said)")
        #expect(!said.contains("error:"), "\(said)")
        // The slow photo, made empty and closed before its writer opened it again, may have been seen half-way: then
        // it was said to be incomplete, and tagged whole when its writer closed it.
        for line in said.split(separator: "\n") where line.contains("warning") {
            #expect(line == "dedog: warning: \(slow): not complete yet; looked at again when it changes", "\(said)")
        }
        // Nothing was looked at twice, and no sidecar of dedog's own was taken for a photo.
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
    }

    @Test func watchingWhatIsNoFolderIsRefused() throws {
        let photo = try place(Self.beagle, as: "single/rex.jpg")
        let r = try CLI.run(["tag", "--watch", photo])
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: cannot watch for new photos: \(photo) is a file, not a folder; only folders can be "
                + "watched.\n", "\(r.stderr)")
        let both = try CLI.run(["tag", "--watch", "--remove", folder.path])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--watch tags the photos that arrive; it does not go with --remove or --forget-seen."))
    }
}
