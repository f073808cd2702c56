@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogNN
import DedogBreedModel
import DedogTestSupport
import Foundation
import Testing

/// No data loss: `dedog train` killed with SIGKILL at any moment leaves the previous model file whole (or the
/// new one whole), and the feature cache usable by the next run.
@Suite(.serialized) struct KillTests {
    static func train(_ data: SyntheticDataset, seed: Int) -> [String] {
        ["train", data.root.path, "--output", data.root.appendingPathComponent("model.safetensors").path,
         "--cache", data.root.appendingPathComponent(".cache").path, "--val-fraction", "0.25",
         "--epochs", "40", "--learning-rate", "0.01", "--seed", "\(seed)", "--threads", "2"]
    }

    @Test func killedTrainingNeverLeavesABrokenModel() throws {
        let data = try SyntheticDataset(name: "kill")
        defer { data.remove() }
        let model = data.root.appendingPathComponent("model.safetensors")
        let first = try CLI.run(Self.train(data, seed: 1))
        #expect(first.status == 1, "the corrupt image makes the run report failures: \(first.stderr)")
        let original = try Data(contentsOf: model)

        var replaced = 0
        for (i, delay) in [0.05, 0.2, 0.4, 0.7, 1.0, 1.5, 2.0, 3.0].enumerated() {
            // Fresh cache entries get written in some runs: empty the cache now and then.
            if i % 3 == 0 { try? FileManager.default.removeItem(at: data.root.appendingPathComponent(".cache")) }
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = Self.train(data, seed: 2 + i)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            let now = try Data(contentsOf: model)
            if now != original { replaced += 1 }
            // Whatever is there is a complete, loadable model.
            let loaded = try Model(contentsOf: model)
            #expect(loaded.breedLabels?.count == 3, "after a kill at \(delay) s")
        }
        // The cache left by the killed runs serves the next run, which completes.
        let last = try CLI.run(Self.train(data, seed: 99))
        #expect(last.status == 1 && last.stdout.contains("Model written to"), "\(last.stderr)")
        _ = try Model(contentsOf: model)
        #expect(replaced < 8, "at least one kill landed before the new model was written")
    }

    /// Ctrl-C and SIGTERM are caught: the run stops at the next batch or epoch, says so, exits with 128 + the
    /// signal, leaves the previous model as it was and a cache that serves the next run. The signal is sent
    /// once the run has started computing features (its first progress line), whatever the machine's speed.
    @Test(arguments: [SIGINT, SIGTERM])
    func interruptedTrainingKeepsTheModelAndTheCache(_ signalNumber: Int32) throws {
        let data = try SyntheticDataset(name: "interrupt-\(signalNumber)")
        defer { data.remove() }
        let model = data.root.appendingPathComponent("model.safetensors")
        _ = try CLI.run(Self.train(data, seed: 1))
        let original = try Data(contentsOf: model)
        try FileManager.default.removeItem(at: data.root.appendingPathComponent(".cache"))

        let stderr = data.root.appendingPathComponent("stderr.txt")
        FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = Self.train(data, seed: 7)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        let started = Date()
        while (try Data(contentsOf: stderr)).isEmpty && process.isRunning && Date().timeIntervalSince(started) < 60 {
            Thread.sleep(forTimeInterval: 0.005)
        }
        kill(process.processIdentifier, signalNumber)
        process.waitUntilExit()
        let message = try String(contentsOf: stderr, encoding: .utf8)
        #expect(process.terminationReason == .exit, "a caught signal ends in an exit, not a kill")
        #expect(process.terminationStatus == 128 + signalNumber, "\(message)")
        #expect(message.contains("interrupted; \(model.path) was not changed"), "\(message)")
        #expect(try Data(contentsOf: model) == original, "the previous model is untouched")

        let last = try CLI.run(Self.train(data, seed: 99))
        #expect(last.status == 1 && last.stdout.contains("Model written to"), "\(last.stderr)")
        _ = try Model(contentsOf: model)
    }
}
