import Foundation
import Testing
import DedogNN
import DedogBreedModel

/// A taught breed's file (`dedog learn --export`) reads back as written, and a file from a stranger that is not one
/// (cut short, of other shapes or values, of another version, a model file) is refused with a `ModelError`.
@Suite struct TaughtBreedFileTests {
    static let width = EfficientNetLite.featureCount

    /// Photo `i`'s unit row on backbone `b`: one value of 1, at a place of its own.
    static func row(_ i: Int, _ b: Int) -> [Float] {
        var row = [Float](repeating: 0, count: width)
        row[(7 * i + 3 * b) % width] = 1
        return row
    }

    static func file(photos n: Int = 3, backbones: Int = 2) throws -> TaughtBreedFile {
        var photos = ConfirmedPhotos(backbones: backbones)
        for i in 0..<n {
            try photos.append(ConfirmedPhoto(label: "ceskyFousek", photo: "f\(i).jpg", fingerprint: "h\(i)", added: "2026-12-07T06:00:00Z"),
                              features: (0..<backbones).map { row(i, $0) })
        }
        let label = Label(key: "ceskyFousek", name: "Český fousek", isDog: true, breed: "cesky-fousek", kind: BreedKind(group: 7))
        return try TaughtBreedFile(label: label, backbones: (0..<backbones).map {
            TaughtBreedFile.Backbone(architecture: "efficientnet-lite\($0 + 1)", fingerprint: "abcdef012345678\($0)", featureLength: 20 + Float($0))
        }, photos: photos)
    }

    @Test func readsBackAsWritten() throws {
        let written = try Self.file()
        let read = try TaughtBreedFile(written.encoded(), file: "fousek.dedogbreed")
        #expect(read == written)
        #expect(read.label.taught == nil && read.photos.count == 3 && read.backbones.map(\.featureLength) == [20, 21])
    }

    @Test func aFileCutShortIsRefusedWherever() throws {
        let bytes = try Self.file().encoded()
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 97)) {
            #expect(throws: ModelError.self, "cut at \(length) of \(bytes.count)") {
                try TaughtBreedFile(bytes.prefix(length), file: "cut.dedogbreed")
            }
        }
    }

    /// The file's description as JSON, changed by `change`, with the file's tensors or `tensors`.
    static func remade(_ change: (inout [String: Any]) -> Void,
                       tensors: [(name: String, shape: [Int], values: [Float])]? = nil) throws -> Data {
        let file = try Self.file()
        let stored = try SafeTensors(file.encoded(), file: "x")
        let description = try #require(stored.metadata[TaughtBreedFile.metadataKey])
        var json = try #require(try JSONSerialization.jsonObject(with: Data(description.utf8)) as? [String: Any])
        change(&json)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        let own = try (0..<2).map { b in (name: "features.\(b)", shape: [3, width], values: try stored.floats("features.\(b)", shape: [3, width])) }
        return try SafeTensors.encode(tensors ?? own, metadata: [TaughtBreedFile.metadataKey: text])
    }

    @Test func aStrangersFileIsRefusedSayingWhy() throws {
        func refusal(_ bytes: Data) -> ModelError? {
            #expect(throws: ModelError.self) { try TaughtBreedFile(bytes, file: "bad.dedogbreed") }
        }
        #expect(refusal(try Self.remade { $0["formatVersion"] = 2 })
                == .unsupportedVersion(file: "bad.dedogbreed", version: 2, supported: 1))
        guard case .invalidMetadata? = refusal(try Self.remade { $0["photos"] = "three" }) else { Issue.record("photos of a wrong type"); return }
        guard case .invalidMetadata? = refusal(try Self.remade { json in
            var label = json["label"] as? [String: Any] ?? [:]
            label["key"] = " "
            json["label"] = label
        }) else { Issue.record("an empty key"); return }
        guard case .invalidValue? = refusal(try Self.remade { $0["photos"] = [Any]() }) else { Issue.record("no photos"); return }
        let zero = [Float](repeating: 0, count: 3 * Self.width)
        guard case .invalidValue? = refusal(try Self.remade({ _ in }, tensors: [("features.0", [3, Self.width], zero),
                                                                                 ("features.1", [3, Self.width], zero)])) else {
            Issue.record("rows that are not unit rows"); return
        }
        var nan = Self.row(0, 0) + Self.row(1, 0) + Self.row(2, 0)
        nan[5] = .nan
        #expect(refusal(try Self.remade({ _ in }, tensors: [("features.0", [3, Self.width], nan), ("features.1", [3, Self.width], nan)]))
                == .nonFiniteValues(file: "bad.dedogbreed", name: "features.0"))
        let one = Self.row(0, 0) + Self.row(1, 0) + Self.row(2, 0)
        #expect(refusal(try Self.remade({ _ in }, tensors: [("features.0", [3, Self.width], one)]))
                == .missingTensor(file: "bad.dedogbreed", name: "features.1"))
        #expect(refusal(try Self.remade({ _ in }, tensors: [("features.0", [3, Self.width], one), ("features.1", [3, Self.width], one),
                                                           ("extra", [1], [0])]))
                == .unexpectedTensor(file: "bad.dedogbreed", name: "extra"))
        #expect(refusal(try Self.remade({ _ in }, tensors: [("features.0", [1, Self.width], Self.row(0, 0)),
                                                           ("features.1", [3, Self.width], one)]))
                == .wrongShape(file: "bad.dedogbreed", name: "features.0", expected: [3, Self.width], found: [1, Self.width]))
        // A model file, or any safetensors file without the description, is no taught breed.
        guard case .invalidMetadata? = refusal(try SafeTensors.encode([("w", [1], [1])], metadata: [:])) else {
            Issue.record("no description"); return
        }
    }
}
