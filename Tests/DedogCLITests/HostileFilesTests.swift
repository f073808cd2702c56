import Foundation
import Testing
import DedogImage
import DedogTestSupport

/// The file system can be hostile too: link loops, folders named like photos, dangling links, no permission.
@Suite struct HostileFilesTests {
    @Test func classifyWalksLinkLoopsAndOddEntriesAndFinishes() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("dedog-hostile-\(getpid())")
        try? fm.removeItem(at: dir)
        try fm.createDirectory(at: dir.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: dir) }
        try fm.copyItem(at: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"),
                        to: dir.appendingPathComponent("a/b/dog.jpg"))
        try fm.createSymbolicLink(at: dir.appendingPathComponent("a/b/loop"), withDestinationURL: dir.appendingPathComponent("a"))
        try fm.createSymbolicLink(at: dir.appendingPathComponent("a/self"), withDestinationURL: dir.appendingPathComponent("a/self"))
        try fm.createSymbolicLink(at: dir.appendingPathComponent("a/dangling.jpg"), withDestinationURL: dir.appendingPathComponent("gone.jpg"))
        try fm.createDirectory(at: dir.appendingPathComponent("a/folder.jpg"), withIntermediateDirectories: true)
        try Data().write(to: dir.appendingPathComponent("a/empty.jpg"))

        let r = try CLI.run(["classify", "-k", "1", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("\(dir.path)/a/b/dog.jpg: Beagle ("))
        #expect(r.stdout.split(separator: "\n").count == 2, "one photo, classified once: \(r.stdout)")
        #expect(r.stderr.contains("skipping \(dir.path)/a/empty.jpg: empty file"))
    }

    @Test func namedFolderOrMissingFileFailsWithExitOne() throws {
        let r = try CLI.run(["classify", "datasets/samples/beagle.jpg", "no/such/photo.jpg"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("dedog: error: no/such/photo.jpg: no such file or folder"))
        #expect(r.stdout.hasPrefix("datasets/samples/beagle.jpg: Beagle ("))
    }
}

/// Linux file names are bytes; Swift strings hold only UTF-8. Such files are reported, never silently lost.
@Suite struct FileNameTests {
    @Test func namesThatAreNotUTF8AreReported() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-names-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = try Data(contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"))
        try photo.write(to: dir.appendingPathComponent("good.jpg"))
        // "café.jpg" in Latin-1: the é is the single byte 0xE9.
        let latin1 = Array(dir.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".jpg".utf8) + [0]
        let fd = latin1.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: latin1.count) { open($0, O_CREAT | O_WRONLY, 0o644) }
        }
        try #require(fd >= 0)
        _ = photo.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)

        let walked = try CLI.run(["classify", "-k", "1", dir.path])
        #expect(walked.status == 0)
        #expect(walked.stdout.hasPrefix("\(dir.path)/good.jpg: Beagle"))
        #expect(walked.stderr == "dedog: warning: skipping \(dir.path)/caf\u{FFFD}.jpg: its name is not valid UTF-8, "
                + "so dedog cannot open it; rename it\n")

        let script = "exec \"$@\" \"$(printf '%s/caf\\xe9.jpg' \"$DIR\")\""
        let named = try CLI.run(["classify"], environment: ["DIR": dir.path], launcher: ["/bin/bash", "-c", script, "bash"])
        #expect(named.status == 1)
        #expect(named.stderr.hasPrefix("dedog: error: \(dir.path)/caf\u{FFFD}.jpg: its name is not valid UTF-8"), "\(named.stderr)")
    }
}

/// Output that cannot be written, and file names that try to talk to the terminal.
@Suite struct OutputTests {
    @Test func resultsToAFullDiskExitWithThree() throws {
        for arguments in [["breeds", "list"], ["classify", "datasets/samples/beagle.jpg"]] {
            let r = try CLI.run(arguments, launcher: ["/bin/bash", "-c", "exec \"$@\" > /dev/full", "bash"])
            #expect(!r.signalled)
            #expect(r.status == 3, "\(arguments): \(r.stderr)")
            #expect(r.stderr == "dedog: error: cannot write the results to standard output "
                    + "(the disk is full; free some space).\n")
        }
    }

    @Test func controlCharactersInFileNamesAreShownEscaped() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-escapes-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // A name that would retitle the terminal window, and one that would turn the error text red.
        try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"),
                                         to: dir.appendingPathComponent("evil\u{1B}]0;pwned\u{7}.jpg"))
        let r = try CLI.run(["classify", "-k", "1", dir.path, dir.appendingPathComponent("gone\u{1B}[31m.jpg").path])
        #expect(r.stdout.hasPrefix("\(dir.path)/evil\\u{1B}]0;pwned\\u{7}.jpg: Beagle"), "\(r.stdout)")
        #expect(r.stderr.hasPrefix("dedog: error: \(dir.path)/gone\\u{1B}[31m.jpg: no such file or folder"), "\(r.stderr)")
        #expect(!r.stdout.contains("\u{1B}") && !r.stderr.contains("\u{1B}"))
        // JSON escapes them its own way and stays valid.
        let json = try CLI.run(["classify", "--json", "-k", "1", dir.path])
        #expect(json.stdout.contains(#"evil\u001b]0;pwned\u0007.jpg"#), "\(json.stdout)")
    }
}

/// Broken model files and unwritable outputs give a clear message and a documented exit status.
@Suite struct HostileModelTests {
    @Test func brokenModelFilesExitWithTwo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-bad-models-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try Data(contentsOf: SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors"))
        let cases: [(String, Data, String)] = [
            ("empty.safetensors", Data(), "not a valid safetensors file"),
            ("text.safetensors", Data("hello, dog".utf8), "not a valid safetensors file"),
            ("truncated.safetensors", good.prefix(good.count / 2), "not a valid safetensors file"),
            ("header-only.safetensors", good.prefix(100), "not a valid safetensors file"),
        ]
        for (name, bytes, message) in cases {
            let file = dir.appendingPathComponent(name)
            try bytes.write(to: file)
            let r = try CLI.run(["classify", "--model", file.path, "datasets/samples/beagle.jpg"])
            #expect(r.status == 2, "\(name)")
            #expect(r.stderr.contains(message), "\(name): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }

    @Test func trainingWalksLinkLoopsInTheDataset() throws {
        let data = try SyntheticDataset(name: "train-loops")
        defer { data.remove() }
        let fm = FileManager.default
        try fm.createSymbolicLink(at: data.root.appendingPathComponent("discs/loop"), withDestinationURL: data.root)
        try fm.createSymbolicLink(at: data.root.appendingPathComponent("checks/self"),
                                  withDestinationURL: data.root.appendingPathComponent("checks/self"))
        let output = data.root.appendingPathComponent("model.safetensors")
        let r = try CLI.run(["train", data.root.path, "--output", output.path, "--no-cache", "--val-fraction", "0.25",
                             "--epochs", "5"])
        #expect(r.status == 1, "the corrupt PNG of the synthetic set is reported: \(r.stderr)")
        #expect(r.stdout.contains("Trained on 24 images of 3 classes, checked by 5-fold cross-validation."), "\(r.stdout)")
        #expect(fm.fileExists(atPath: output.path))
    }

    @Test func splitFilesThatAreNotFilesAreRefused() throws {
        let data = try SyntheticDataset(name: "split-device")
        defer { data.remove() }
        let r = try CLI.run(["train", data.root.path, "--split", "/dev/zero", "--no-cache", "--output", "/tmp/unused.safetensors"],
                            timeout: 60)
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: /dev/zero: cannot use the split file: it is a device, not a regular file.\n")
    }

    @Test func trainingRefusesAnUnwritableOutputBeforeWorking() throws {
        let data = try SyntheticDataset(name: "unwritable")
        defer { data.remove() }
        let r = try CLI.run(["train", data.root.path, "--output", "/nonexistent/folder/model.safetensors", "--no-cache"])
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: /nonexistent/folder/model.safetensors: cannot write the model file "
                + "(the folder /nonexistent/folder does not exist); the previous file, if any, is untouched.\n")
        let folder = try CLI.run(["train", data.root.path, "--output", data.root.path, "--no-cache"])
        #expect(folder.status == 1)
        #expect(folder.stderr == "dedog: error: \(data.root.path): cannot write the model file (it is a folder; give a file "
                + "name such as mydogs.safetensors); the previous file, if any, is untouched.\n")
    }
}

/// Limits are errors with a message, never an OOM kill.
@Suite struct ResourceLimitTests {
    @Test func trainingOverTheMemoryLimitIsRefusedBeforeAnyWork() throws {
        let data = try SyntheticDataset(name: "max-memory")
        defer { data.remove() }
        let output = data.root.appendingPathComponent("model.safetensors")
        let r = try CLI.run(["train", data.root.path, "--output", output.path, "--no-cache", "--max-memory", "150M"])
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: training on 25 images needs about 201 MB of memory, over the limit of 150 MB. "
                + "Use fewer images (--split) or views (--augment none), or raise --max-memory.\n")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func memorySizesAreParsedOrRefused() throws {
        let data = try SyntheticDataset(name: "max-memory-parse")
        defer { data.remove() }
        for bad in ["12parsecs", "-1G", "0", ""] {
            let r = try CLI.run(["train", data.root.path, "--max-memory", bad])
            #expect(r.status == 64, "\(bad): \(r.stderr)")
        }
        let r = try CLI.run(["evaluate", "models/dedog-breeds.safetensors", data.root.path, "--no-cache", "--max-memory", "0.1G"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("dedog: error: evaluating 25 images needs about 201 MB of memory, over the limit of 102 MB"))
    }
}

/// The command line adds to a library's error which flag changes it (`Advice`; the memory limit's advice is
/// checked above).
@Suite struct AdviceTests {
    @Test func aPhotoOverThePixelLimitNamesTheFlag() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-advice-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("big.jpg")
        let image = try RGBImage(width: 1200, height: 1000, pixels: [UInt8](repeating: 90, count: 1200 * 1000 * 3))
        try Data(JPEGEncoder.encode(image)).write(to: photo)
        let r = try CLI.run(["classify", photo.path, "--max-megapixels", "1"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("dedog: error: \(photo.path): image is 1200×1000 = 1200000 pixels, over the limit of 1000000. "
                + "Shrink it first or raise the limit with --max-megapixels.\n"), "\(r.stderr)")
    }
}
