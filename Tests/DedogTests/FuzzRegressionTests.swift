import Foundation
import Testing
import DedogTestSupport
import Dedog

/// Replays the fuzzers' seed corpora and every crash they ever found (Fuzz/regressions/TARGET) through the same
/// calls as the harness: each must end in a value or a typed error.
@Suite struct FuzzRegressionTests {
    static func inputs(_ target: String) -> [URL] {
        let root = SharedData.packageRoot.appendingPathComponent("Fuzz")
        return ["corpus", "regressions"].flatMap { folder -> [URL] in
            let dir = root.appendingPathComponent("\(folder)/\(target)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { dir.appendingPathComponent($0) }
        }
    }

    @Test func imageInputs() throws {
        let files = Self.inputs("image")
        #expect(!files.isEmpty)
        for file in files {
            let bytes = Array(try Data(contentsOf: file))
            var options = ImageDecoder.Options(maxPixels: 4_000_000, minimumShorterSide: 64)
            _ = try? ImageDecoder(options: options).decode(bytes, name: file.lastPathComponent)
            options.allowsDamagedData = true
            _ = try? ImageDecoder(options: options).decode(bytes, name: file.lastPathComponent)
        }
    }

    @Test func modelInputs() throws {
        let files = Self.inputs("model")
        #expect(!files.isEmpty)
        for file in files {
            guard let tensors = try? SafeTensors(Data(contentsOf: file), file: file.lastPathComponent) else { continue }
            _ = try? ModelDescription(from: tensors)
            _ = try? EfficientNetLite(tensors: tensors)
            for (name, entry) in tensors.entries { _ = try? tensors.floats(name, shape: entry.shape) }
        }
    }

    @Test func catalogueInputs() throws {
        let files = Self.inputs("catalogue")
        #expect(!files.isEmpty)
        for file in files {
            if let catalogue = try? Catalogue(Data(contentsOf: file), file: file.lastPathComponent) {
                _ = catalogue.search("ovcak")
                _ = catalogue.list(language: .cs)
            }
        }
    }
}
