@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogTestSupport
import DedogTrain
import Foundation
import Testing

/// Every input of Tests/HostileCorpus, through the public API and through the `dedog` binary: the library throws
/// the typed error the manifest names (or succeeds where it says "ok"); the binary exits with the manifest's status
/// and message, never by a signal and never by hanging.
@Suite struct HostileCorpusTests {
    static let runningAsRoot = geteuid() == 0
    /// As root, every file is readable: these inputs go through the API only when not root (see below).
    static let apiEntries = HostileEntry.all.filter { !(runningAsRoot && $0.make == "unreadable") }
    static let bundledModel = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds.safetensors")
    static let baseModel = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")

    /// The parameterized tests below take their cases from the manifest: it must be there.
    @Test func theCorpusIsThere() throws {
        #expect(try HostileEntry.manifest().count > 50)
    }

    @Test func corpusCoversWhatTheIssueLists() {
        let all = HostileEntry.all
        #expect(all.count >= 90)
        for kind in ["photo", "model", "catalogue", "dataset"] {
            #expect(all.contains { $0.kind.rawValue == kind })
        }
        for error in ["empty", "truncated", "tooLarge", "unsupportedFormat", "unreadable", "malformedHeader",
                      "wrongDType", "wrongShape", "nonFiniteValues", "labelCountMismatch", "notJSON", "datasetTooSmall"] {
            #expect(all.contains { $0.api.contains(error) }, "no entry expects \(error)")
        }
    }

    @Test(arguments: apiEntries)
    func throughTheAPI(_ entry: HostileEntry) throws {
        let workspace = try HostileWorkspace("api-" + entry.file)
        defer { workspace.remove() }
        let input = try workspace.input(for: entry)
        let (outcome, message) = Self.callAPI(entry.kind, input: input, workspace: workspace)
        #expect(entry.api.contains(outcome), "\(entry.why): got \(outcome): \(message)")
        if !entry.expectsSuccess && !entry.message.isEmpty {
            #expect(message.contains(entry.message), "\(entry.why): \(message)")
        }
    }

    @Test(.enabled(if: !runningAsRoot, "as root every file is readable; the CLI test covers this with the capabilities dropped"),
          arguments: HostileEntry.all.filter { $0.make == "unreadable" })
    func unreadableThroughTheAPI(_ entry: HostileEntry) throws {
        try throughTheAPI(entry)
    }

    /// Root reads everything; run without these two capabilities, it is held to the file's permissions.
    static let withoutFileOverride = ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search",
                                      "--inh-caps=-dac_override,-dac_read_search"]
    /// Whether locked files can be shown to the CLI: always for a normal user; for root only if setpriv may drop
    /// capabilities here (it needs CAP_SETPCAP, which some containers withhold).
    static let canLockOut: Bool = {
        guard runningAsRoot else { return true }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: withoutFileOverride[0])
        probe.arguments = Array(withoutFileOverride.dropFirst()) + ["/bin/true"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    @Test(arguments: HostileEntry.all.filter { $0.make != "unreadable" })
    func throughTheCLI(_ entry: HostileEntry) throws {
        try runCLI(entry, launcher: [])
    }

    @Test(.enabled(if: canLockOut, "running as root where setpriv cannot drop CAP_DAC_OVERRIDE: files cannot be locked"),
          arguments: HostileEntry.all.filter { $0.make == "unreadable" })
    func lockedFilesThroughTheCLI(_ entry: HostileEntry) throws {
        try runCLI(entry, launcher: Self.runningAsRoot ? Self.withoutFileOverride : [])
    }

    func runCLI(_ entry: HostileEntry, launcher: [String]) throws {
        let workspace = try HostileWorkspace("cli-" + entry.file)
        defer { workspace.remove() }
        let input = try workspace.input(for: entry)
        let previous = Data("the previous model, which must survive".utf8)
        let output = workspace.folder.appendingPathComponent("out/model.safetensors")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try previous.write(to: output)

        let arguments: [String]
        switch entry.kind {
        case .photo: arguments = ["classify", "-k", "1", input]
        case .model: arguments = ["classify", "--model", input, "datasets/samples/beagle.jpg"]
        case .catalogue: arguments = ["breeds", "list", "--catalogue", input]
        case .dataset: arguments = ["train", input, "--output", output.path, "--no-cache", "--val-fraction", "0.34",
                                    "--epochs", "3", "--base-model", Self.baseModel.path]
        }
        let r = try CLI.run(arguments, launcher: launcher, timeout: 120)
        #expect(!r.timedOut, "\(entry.why): still running after 120 s")
        #expect(!r.signalled, "\(entry.why): killed by signal \(r.status)\n\(r.stderr)")
        #expect(r.status == entry.exit, "\(entry.why): exit \(r.status)\n\(r.stderr)")
        if entry.expectsSuccess {
            if entry.kind == .photo { #expect(r.stdout.hasPrefix("\(input): "), "\(entry.why): \(r.stdout)") }
        } else {
            #expect(r.stderr.hasPrefix("dedog: error: "), "\(entry.why): \(r.stderr)")
            let message = entry.cliMessage ?? entry.message
            if !message.isEmpty { #expect(r.stderr.contains(message), "\(entry.why): \(r.stderr)") }
            if entry.kind == .dataset {
                #expect(try Data(contentsOf: output) == previous, "\(entry.why): the previous model was touched")
            }
        }
    }

    /// The error case the library threw ("ok" if none) and its message.
    static func callAPI(_ kind: HostileEntry.Kind, input: String, workspace: HostileWorkspace) -> (String, String) {
        let url = URL(fileURLWithPath: input)
        do {
            switch kind {
            case .photo:
                _ = try Classifier(modelURL: bundledModel).classify(contentsOf: url, top: 1)
            case .model:
                _ = try Classifier(modelURL: url)
            case .catalogue:
                _ = try Catalogue(contentsOf: url)
            case .dataset:
                var config = TrainConfiguration(dataset: url, baseModel: baseModel,
                                                output: workspace.folder.appendingPathComponent("api-model.safetensors"))
                config.validationFraction = 0.34
                config.options.epochs = 3
                config.threads = 1
                _ = try Trainer.run(config)
            }
            return ("ok", "")
        } catch let ClassifierError.image(error) {
            return (caseName(error), error.description)
        } catch let ClassifierError.model(error) {
            return (caseName(error), error.description)
        } catch {
            return (caseName(error), "\(error)")
        }
    }

    static func caseName(_ error: Error) -> String {
        Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }
}
