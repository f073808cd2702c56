@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTestSupport
import Foundation
import Testing

/// Runs the built `dedog` binary and checks exact output and exit codes.
struct CLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// Killed by a signal (a crash), rather than exiting.
        var signalled = false
        /// Still running after the timeout, then killed: a hang.
        var timedOut = false
    }

    static let binary: URL = {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return here.appendingPathComponent("dedog")
    }()

    /// The data folder (`XDG_DATA_HOME`) of every command the tests run: dedog tag's record goes there.
    static let testData = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-cli-data-\(getpid())")

    /// The environment of every command the tests run, with `extra` over it: English unless a test asks otherwise
    /// (output follows the locale, and the machine's may be Czech), and dedog tag's record of the photos looked at
    /// in a folder of the tests', never the user's.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        let english = ["LC_ALL": "C.UTF-8", "LC_MESSAGES": "", "LANG": "C.UTF-8"]
        return ProcessInfo.processInfo.environment.merging(english) { $1 }.merging(["XDG_DATA_HOME": testData.path]) { $1 }
            .merging(extra) { $1 }
    }

    /// Starts `dedog arguments…` with the tests' environment and leaves it running: its output goes to `stdout`, its
    /// errors to `stderr` (each made empty first; nil: nowhere).
    static func start(_ arguments: [String], stdout: URL, stderr: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment()
        for file in [stdout] + (stderr.map { [$0] } ?? []) { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try stderr.map { try FileHandle(forWritingTo: $0) } ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `dedog arguments…`, behind `launcher` if given (e.g. `setpriv …`), killing it after `timeout` seconds.
    static func run(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = [],
                    timeout: Double = 300, in directory: URL = SharedData.packageRoot,
                    executable: URL = binary) throws -> Result {
        let process = Process()
        if launcher.isEmpty {
            process.executableURL = executable
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = launcher.dropFirst() + [executable.path] + arguments
        }
        process.currentDirectoryURL = directory
        process.environment = Self.environment(environment)
        // Output goes to files, not pipes: with many children exiting at once, pipe reads get EINTR, which
        // Foundation's readDataToEndOfFile does not survive.
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-cli-\(UUID().uuidString)")
        let outFile = capture.appendingPathExtension("out"), errFile = capture.appendingPathExtension("err")
        FileManager.default.createFile(atPath: outFile.path, contents: nil)
        FileManager.default.createFile(atPath: errFile.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        let out = try FileHandle(forWritingTo: outFile), err = try FileHandle(forWritingTo: errFile)
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let started = Date()
        process.waitUntilExit()
        watchdog.cancel()
        let stdout = try Data(contentsOf: outFile), stderr = try Data(contentsOf: errFile)
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self),
                      signalled: process.terminationReason == .uncaughtSignal,
                      timedOut: Date().timeIntervalSince(started) >= timeout)
    }
}

@Suite(.serialized) struct ClassifyCommandTests {
    @Test func classifiesTheBundledSample() throws {
        let r = try CLI.run(["classify", "datasets/samples/beagle.jpg", "--top", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("datasets/samples/beagle.jpg: Beagle ("))
        #expect(lines[1].hasPrefix("  1. Beagle "))
        #expect(lines[1].hasSuffix("small · 5.9–13.6 kg · 10–15 years · Great Britain"))
        #expect(r.stderr.isEmpty)
    }

    /// Bundled models by name: the default combines Lite1 and Lite2, `fast` is Lite0 alone; both find the beagle.
    /// A name that is no bundled model is taken as a file, and the message says so.
    @Test func modelsAreChosenByName() throws {
        for name in ["fast", "default"] {
            let r = try CLI.run(["classify", "--model", name, "--json", "-k", "1", "datasets/samples/beagle.jpg"])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stdout.contains(#""key":"n02088364-beagle""#), "\(name): \(r.stdout)")
        }
        let fast = try CLI.run(["classify", "--model", "fast", "--json", "datasets/samples/beagle.jpg"])
        let plain = try CLI.run(["classify", "--json", "datasets/samples/beagle.jpg"])
        let byFile = try CLI.run(["classify", "--model", "models/dedog-breeds-fast.safetensors", "--json", "datasets/samples/beagle.jpg"])
        #expect(fast.stdout == byFile.stdout)
        #expect(fast.stdout != plain.stdout, "the default is not the fast model")
        let env = try CLI.run(["classify", "--json", "datasets/samples/beagle.jpg"], environment: ["DEDOG_MODEL": "fast"])
        #expect(env.stdout == fast.stdout)

        let missing = try CLI.run(["classify", "--model", "fastest", "datasets/samples/beagle.jpg"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("fastest: cannot read"), "\(missing.stderr)")
    }

    @Test func jsonLinesHaveStableKeys() throws {
        let r = try CLI.run(["classify", "--json", "-k", "1", "datasets/samples/beagle.jpg", "no-such.jpg"])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let records = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        for record in records {
            #expect(Set(record.keys) == ["file", "verdict", "dogProbability", "similarity", "breeds", "lookalikes", "looksLike", "kind", "location", "dogs", "error"])
        }
        #expect(records[0]["verdict"] as? String == "dog")
        // The box where the network saw the beagle lies inside the photo (its size read from the file).
        let size = try ImageDecoder().decode(contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"))
        let box = try #require(records[0]["location"] as? [String: Any])
        let x = try #require(box["x"] as? Int), y = try #require(box["y"] as? Int)
        let w = try #require(box["width"] as? Int), h = try #require(box["height"] as? Int)
        #expect(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= size.width && y + h <= size.height, "\(box)")
        #expect(box["zoomed"] as? Bool == false, "the beagle fills its photo")
        #expect(records[1]["location"] is NSNull)
        #expect((records[0]["dogs"] as? [Any])?.isEmpty == true, "one dog")
        let breed = (records[0]["breeds"] as! [[String: Any]])[0]
        #expect(breed["key"] as? String == "n02088364-beagle")
        #expect(breed["name"] as? String == "Beagle")
        #expect((breed["breed"] as? [String: Any])?["id"] as? String == "beagle")
        #expect(records[1]["file"] as? String == "no-such.jpg")
        #expect(records[1]["error"] as? String == "no such file or folder")
        #expect(records[1]["verdict"] is NSNull)
    }

    @Test func badFilesAreReportedAndTheRestStillClassified() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-cli-\(getpid())")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"),
                                         to: dir.appendingPathComponent("sub/dog.png"))  // wrong extension on purpose
        try Data("notes".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0]).write(to: dir.appendingPathComponent("broken.jpg"))
        let r = try CLI.run(["classify", "-k", "1", dir.path])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 4)  // the result, its breed, and the summary of two inputs
        #expect(lines.first?.hasPrefix("\(dir.path)/sub/dog.png: Beagle (") == true)
        #expect(lines.dropFirst(2) == ["Summary — photos: 2 · breed named: 1 · unsure: 0 · no dog: 0 · failed: 1",
                                       "  Beagle  1"])
        #expect(r.stderr.contains("warning: skipping \(dir.path)/notes.txt: not a JPEG, PNG, HEIC, AVIF or WebP image"))
        #expect(r.stderr.contains("error: \(dir.path)/broken.jpg: the image data is truncated"))
        #expect(r.stderr.hasSuffix("dedog: error: 1 of 2 inputs could not be classified; 1 was.\n"))
    }

    @Test func labelsWithoutACatalogueEntryShowTheModelsName() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-empty-catalogue-\(getpid()).json")
        try Data(#"{"formatVersion":2,"sources":[],"vocabulary":{},"breeds":[]}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try CLI.run(["classify", "--catalogue", file.path, "-k", "1", "datasets/samples/beagle.jpg"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("datasets/samples/beagle.jpg: Beagle ("), "the model's label name")
        let json = try CLI.run(["classify", "--json", "--catalogue", file.path, "-k", "1", "datasets/samples/beagle.jpg"])
        let record = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect((record["breeds"] as! [[String: Any]])[0]["breed"] is NSNull)
    }

    @Test func modelErrorsExitWithTwo() throws {
        let r = try CLI.run(["classify", "--model", "/nonexistent.safetensors", "datasets/samples/beagle.jpg"])
        #expect(r.status == 2)
        #expect(r.stderr == "dedog: error: /nonexistent.safetensors: cannot read the model file (no such file).\n")
    }

    /// --kernels, else DEDOG_KERNELS, forces a kernel build (the flag wins); one this CPU cannot run, or no such
    /// build, is said plainly, with where the name came from.
    @Test func kernelSetFromTheFlagOrTheEnvironment() throws {
        let photo = ["classify", "datasets/samples/beagle.jpg"]
        let runs = KernelSet.supported.map(\.rawValue).joined(separator: ", ")
        for (arguments, environment) in [(photo, ["DEDOG_KERNELS": "portable"]), (photo + ["--kernels", "portable"], [:]),
                                         (photo + ["--kernels", "portable"], ["DEDOG_KERNELS": "sse9"])] {
            let forced = try CLI.run(arguments, environment: environment)
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(forced.stdout.hasPrefix("datasets/samples/beagle.jpg: Beagle"))
        }
        let wrong = try CLI.run(photo, environment: ["DEDOG_KERNELS": "sse9"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr == "dedog: error: DEDOG_KERNELS=sse9: no kernel set is called sse9; this CPU runs \(runs). "
                + "Name one of those, or leave it out for the fastest.\n")
        let flag = try CLI.run(photo + ["--kernels", "sse9"])
        #expect(flag.status == 2)
        #expect(flag.stderr.hasPrefix("dedog: error: --kernels sse9: no kernel set is called sse9"), "\(flag.stderr)")
        let evaluate = try CLI.run(["evaluate", "fast", "datasets/samples", "--kernels", "sse9"])
        #expect(evaluate.status == 2 && evaluate.stderr.hasPrefix("dedog: error: --kernels sse9: "), "\(evaluate.stderr)")
    }

    /// Ctrl-C while a big folder is classified: every line printed is whole (each parses as JSON), the command
    /// says it was interrupted and exits with 130.
    @Test func interruptedClassifyKeepsWholeLines() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-interrupt-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sample = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        for i in 0..<3000 {  // hard links: separate names, each classified
            try FileManager.default.linkItem(at: sample, to: folder.appendingPathComponent(String(format: "%04d.jpg", i)))
        }
        let stdout = folder.appendingPathComponent("out.jsonl"), stderr = folder.appendingPathComponent("err.txt")
        for file in [stdout, stderr] { FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["classify", "--json", "--threads", "1", folder.path]
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        let started = Date()
        while (try Data(contentsOf: stdout)).count < 2000 && process.isRunning && Date().timeIntervalSince(started) < 60 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 130)
        let text = try String(contentsOf: stdout, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "the output ends with a whole line")
        #expect(lines.count > 2 && lines.count < 3001)
        for line in lines.dropLast() {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "cut line: \(line)")
        }
        let message = try String(contentsOf: stderr, encoding: .utf8)
        #expect(message.hasSuffix("photos; the results printed are complete\n"), "\(message)")
    }

    @Test func usageErrorsExitWith64() throws {
        #expect(try CLI.run(["classify"]).status == 64)
        #expect(try CLI.run(["classify", "--top", "0", "x.jpg"]).status == 64)
    }

    @Test func helpTeaches() throws {
        let r = try CLI.run(["classify", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Examples:"))
        #expect(r.stdout.contains("--json"))
        #expect(try CLI.run(["--version"]).stdout == "0.1.0\n")
    }
}

@Suite struct TrainCommandTests {
    /// `--backbone` names bundled bases; several joined by + make one combined model that classify loads.
    @Test func backbonesAreChosenByName() throws {
        let data = try SyntheticDataset(name: "cli-backbones")
        defer { data.remove() }
        let output = data.root.appendingPathComponent("both.safetensors")
        let r = try CLI.run(["train", data.root.path, "--output", output.path, "--no-cache", "--val-fraction", "0.25",
                             "--epochs", "5", "--backbone", "lite0+lite1"])
        #expect(r.status == 1, "the corrupt PNG of the synthetic set is reported: \(r.stderr)")
        #expect(r.stdout.contains("\n  lite0: "), "\(r.stdout)")
        #expect(r.stdout.contains("\n  lite1: "), "\(r.stdout)")
        #expect(r.stdout.contains("Validation, backbones combined: 24 images"), "\(r.stdout)")
        let classify = try CLI.run(["classify", "--model", output.path, "--json",
                                    data.root.appendingPathComponent("checks").path])
        #expect(classify.status == 0, "\(classify.stderr)")
        #expect(classify.stdout.split(separator: "\n").count == 8)

        for (arguments, message) in [
            (["--backbone", "lite3"], "--backbone: \"lite3\" is not a backbone; use lite0, lite1, lite2 or several joined by +, e.g. lite1+lite2."),
            (["--backbone", "lite1+lite1"], "--backbone: each backbone can be named once."),
            (["--backbone", "lite0", "--base-model", "models/efficientnet-lite0-imagenet.safetensors"],
             "give one of --backbone, --base-model and --resume."),
        ] {
            let bad = try CLI.run(["train", data.root.path, "--output", output.path] + arguments)
            #expect(bad.status == 64, "\(arguments): \(bad.stderr)")
            #expect(bad.stderr.contains(message), "\(bad.stderr)")
        }
    }
}

/// A model trained on a small folder of photos without boxes finds each dog of a photo of two: it gets the dog
/// detector of its first backbone.
@Suite(.needsStanfordDogs) struct TrainedModelDetectorTests {
    @Test func aModelOfPhotosWithoutBoxesFindsBothDogs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-no-boxes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let train = try String(contentsOf: SharedData.stanfordDogs.appendingPathComponent("splits/train.txt"), encoding: .utf8)
            .split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        for breed in DogPhotos.testPair.map({ String($0.split(separator: "/")[0]) }) {
            let folder = root.appendingPathComponent("photos/" + breed)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for path in train.filter({ $0.hasPrefix(breed + "/") }).prefix(10) {
                try FileManager.default.copyItem(at: SharedData.stanfordDogs.appendingPathComponent(path),
                                                 to: folder.appendingPathComponent(String(path.split(separator: "/")[1])))
            }
        }
        let output = root.appendingPathComponent("mine.safetensors")
        let trained = try CLI.run(["train", root.appendingPathComponent("photos").path, "--output", output.path, "--no-cache",
                                   "--backbone", "lite0", "--epochs", "5", "--val-fraction", "0.2"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("Dog detector: the one of efficientnet-lite0"), "\(trained.stdout)")
        let made = try DogPhotos.sideBySide(DogPhotos.testPair)
        let photo = root.appendingPathComponent("two-dogs.jpg")
        try Data(JPEGEncoder.encode(made.image, quality: 92)).write(to: photo)
        let json = try CLI.run(["classify", "--model", output.path, "--json", photo.path])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let dogs = try #require(record["dogs"] as? [[String: Any]], "\(json.stdout)")
        let boxes = DogPhotos.boxes(ofDogs: dogs)
        try #require(boxes.count == 2, "\(json.stdout)")
        for (box, truth) in zip(boxes, made.boxes) { #expect(DogPhotos.overlap(box, truth) >= 0.5, "\(box) against \(truth)") }
        // Without the detector, one dog and its box from the activation map.
        let plain = try CLI.run(["train", root.appendingPathComponent("photos").path, "--output", output.path, "--no-cache",
                                 "--backbone", "lite0", "--epochs", "5", "--val-fraction", "0.2", "--no-detector"])
        #expect(plain.status == 0 && plain.stdout.contains("Dog detector: left out (--no-detector); classify locates one dog per photo"),
                "\(plain.stdout)")
        let one = try CLI.run(["classify", "--model", output.path, "--json", photo.path])
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])
        #expect((answer["dogs"] as? [Any])?.isEmpty == true, "\(one.stdout)")
    }
}

/// `learn` and `forget` change only a model file the user names, never a bundled model.
@Suite struct LearnCommandTests {
    @Test func theModelToChangeMustBeNamed() throws {
        for (arguments, message) in [
            (["learn", "x.jpg", "--breed", "beagle"], "give the model file to change with --model FILE"),
            (["learn", "x.jpg", "--breed", "beagle", "--model", "default"], "\"default\" is a bundled model, which dedog does not change"),
            (["learn", "x.jpg", "--breed", "beagle", "--model", "models/dedog-breeds-fast.safetensors"],
             "is a bundled model, which dedog does not change"),
            (["forget", "--model", "mine.safetensors"], "say what to forget: photos, --breed NAME or --all"),
        ] {
            let r = try CLI.run(arguments, environment: ["DEDOG_MODEL": ""])
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(r.stderr)")
        }
        // A copy of an ImageNet base is the user's own, but has no breed head to learn with.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-base-\(UUID().uuidString).safetensors")
        try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors"),
                                         to: base)
        defer { try? FileManager.default.removeItem(at: base) }
        let imagenetOnly = try CLI.run(["learn", "README.md", "--breed", "beagle", "--model", base.path])
        #expect(imagenetOnly.status == 2)
        #expect(imagenetOnly.stderr.contains("it has no breed head of its own"), "\(imagenetOnly.stderr)")
    }
}

/// `dedog quiz make` as a user runs it: what it says, what it refuses, and its exit statuses.
@Suite struct QuizCommandTests {
    static func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dedog-\(name)-\(UUID().uuidString)")
    }

    @Test func makesAQuizAndSaysWhatItLeftOut() throws {
        let photos = try QuizFixture.make()
        defer { try? FileManager.default.removeItem(at: photos) }
        let output = Self.temporary("quiz").appendingPathExtension("json")
        defer { try? FileManager.default.removeItem(at: output) }
        let r = try CLI.run(["quiz", "make", photos.path, "-o", output.path, "--model", "fast", "--answers", "4"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let size = (try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int ?? 0) / 1024
        #expect(lines == ["\(output.path): 4 questions (3 answered by their folder, 1 by the model), \(size) KB; "
                          + "wrong answers from dedog-breeds-fast.safetensors.",
                          "left out: 1 no dog."], "\(r.stdout)")
        let quiz = try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any]
        let questions = quiz?["questions"] as? [[String: Any]] ?? []
        #expect(questions.allSatisfy { ($0["wrong"] as? [Any])?.count == 3 })
        #expect(quiz?["title"] as? String == photos.lastPathComponent)

        // An existing file is kept unless --force.
        let again = try CLI.run(["quiz", "make", photos.path, "-o", output.path, "--model", "fast"])
        #expect(again.status == 64)
        #expect(again.stderr.contains("exists; give another --output, or --force to replace it"), "\(again.stderr)")
    }

    @Test func refusesWhatCannotMakeAQuiz() throws {
        let output = Self.temporary("quiz").appendingPathExtension("json").path
        for (arguments, message) in [
            (["quiz", "make", "datasets/samples", "-o", output, "--answers", "5"], "--answers must be 3 or 4, not 5"),
            (["quiz", "make", "datasets/samples", "-o", output, "--questions", "0"], "--questions must be between 1 and 1000"),
            (["quiz", "make", "no-such-folder", "-o", output], "no-such-folder"),
        ] {
            let r = try CLI.run(arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(r.stderr)")
        }
        // A folder with nothing to ask about: said, exit 1, no file.
        let noDogs = Self.temporary("no-dogs")
        try FileManager.default.createDirectory(at: noDogs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: noDogs) }
        try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png"),
                                         to: noDogs.appendingPathComponent("noise.png"))
        let empty = try CLI.run(["quiz", "make", noDogs.path, "-o", output, "--model", "fast"])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("no photo could be asked about (1 left out: 1 no dog)"), "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        // A catalogue that cannot be read is said, not silently replaced by the bundled one.
        let catalogue = try CLI.run(["quiz", "make", "datasets/samples", "-o", output, "--catalogue", "README.md"])
        #expect(catalogue.status == 1)
        #expect(catalogue.stderr.contains("README.md"), "\(catalogue.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}

/// `dedog evaluate --fit`: the same photos made square each way, one report each.
@Suite struct EvaluateFitTests {
    @Test func allFitsReportSideBySideAndSquaresScoreTheSame() throws {
        let data = try SyntheticDataset(name: "evaluate-fit", folders: ["n02085620-Chihuahua", "n02088364-beagle",
                                                                       "n02099601-golden_retriever"])
        defer { data.remove() }
        let r = try CLI.run(["evaluate", "fast", data.root.path, "--fit", "all", "--json", "--no-cache"])
        #expect(r.status == 0, "\(r.stderr)")
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: Any]])
        #expect(Set(reports.keys) == ["fast crop", "fast pad", "fast squeeze"])
        // The synthetic photos are squares: every fit sees the same pixels.
        let top1 = reports.values.map { $0["top1"] as? Double }
        #expect(Set(top1).count == 1 && reports.values.allSatisfy { $0["samples"] as? Int == 24 }, "\(top1)")

        let bad = try CLI.run(["evaluate", "fast", data.root.path, "--fit", "zoom"])
        #expect(bad.status == 64 && bad.stderr.contains("--fit must be crop, pad, squeeze or all."), "\(bad.stderr)")
    }
}

/// `dedog evaluate --looks`: the photos answered exactly as `dedog classify` answers them, counted.
@Suite struct EvaluateLooksTests {
    @Test func theCountsAreClassifysAnswers() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-looks-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let sample = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        for folder in ["n02088364-beagle", "n02110958-pug", "my-mutt"] {
            let dir = root.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: sample, to: dir.appendingPathComponent("photo.jpg"))
        }
        let classify = try CLI.run(["classify", sample.path, "--model", "fast", "--json"])
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(classify.stdout.utf8)) as? [String: Any])
        let top = try #require((answer["breeds"] as? [[String: Any]])?.first?["key"] as? String)
        let verdict = try #require(answer["verdict"] as? String)
        let zoomed = (answer["location"] as? [String: Any])?["zoomed"] as? Bool ?? false
        let split = !((answer["dogs"] as? [Any]) ?? []).isEmpty

        let r = try CLI.run(["evaluate", "fast", root.path, "--looks", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(report["photos"] as? Int == 2 && report["otherFolders"] as? Int == 1, "\(report)")
        #expect(report["top1"] as? Int == (["n02088364-beagle", "n02110958-pug"].contains(top) ? 1 : 0))
        #expect(report["namedRight"] as? Int == (verdict == "dog" && ["n02088364-beagle", "n02110958-pug"].contains(top) ? 1 : 0))
        #expect(report["verdicts"] as? [String: Int] == [verdict: 2])
        #expect(report["lookedCloser"] as? Int == (zoomed ? 2 : 0) && report["answeredPerDog"] as? Int == (split ? 2 : 0))

        let text = try CLI.run(["evaluate", "fast", root.path, "--looks"])
        #expect(text.status == 0 && text.stdout.contains("Looks: 2 photos, each answered as dedog classify answers it"), "\(text.stdout)")
        let bad = try CLI.run(["evaluate", "fast", root.path, "--looks", "--fit", "pad"])
        #expect(bad.status == 64 && bad.stderr.contains("--looks measures a model as it classifies; leave out --fit."), "\(bad.stderr)")
    }
}
