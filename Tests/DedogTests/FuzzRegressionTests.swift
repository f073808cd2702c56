@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogImage
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel
import DedogTestSupport
import Foundation
import Testing

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
            options.minimumShorterSide = nil
            options.neededRegion = PixelRect(x: 5, y: 3, width: 40, height: 30)
            _ = try? ImageDecoder(options: options).decode(bytes, name: file.lastPathComponent)
        }
    }

    /// What the harness does with every model that loads: classify a small image through the public API.
    static func classifyProbe(_ model: Model) {
        guard let probe = try? RGBImage(width: 48, height: 40, pixels: (0..<(48 * 40 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 37) }) else { return }
        guard let classifier = try? Classifier(model: model, modelURL: URL(fileURLWithPath: "fuzz")) else { return }
        _ = try? classifier.classify(probe, top: 5)
    }

    @Test func modelInputs() throws {
        let files = Self.inputs("model")
        #expect(!files.isEmpty)
        for file in files {
            guard let tensors = try? SafeTensors(Data(contentsOf: file), file: file.lastPathComponent) else { continue }
            _ = try? ModelDescription(from: tensors)
            if let model = try? Model(tensors: tensors) { Self.classifyProbe(model) }
            for (name, entry) in tensors.entries { _ = try? tensors.floats(name, shape: entry.shape) }
        }
    }

    /// Model descriptions against the bundled Lite0 model's real tensors; the seeds load and classify.
    @Test func descriptionInputs() throws {
        let files = Self.inputs("description")
        #expect(!files.isEmpty)
        let real = try SafeTensors(contentsOf: SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors"))
        var loaded = 0
        for file in files {
            let json = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            guard let model = try? Model(tensors: real.replacingMetadata([ModelDescription.metadataKey: json])) else { continue }
            loaded += 1
            Self.classifyProbe(model)
        }
        #expect(loaded >= 2)  // the two seeds
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
