import Foundation
import Testing
import DedogTestSupport
import DedogNN
import DedogBreedModel

/// Strict loading: every way a model file can be wrong gives a typed error naming the problem.
@Suite struct ModelFileTests {
    typealias Tensor = (name: String, shape: [Int], values: [Float])

    static let sharedOriginal = Shared { () throws -> (tensors: [Tensor], metadata: [String: String]) in
        let file = try SafeTensors(contentsOf: BundledModel.url)
        let tensors = try file.entries.keys.sorted().map { name throws -> Tensor in
            let shape = file.entries[name]?.shape ?? []
            return (name, shape, try file.floats(name, shape: shape))
        }
        return (tensors, file.metadata)
    }
    static var original: (tensors: [Tensor], metadata: [String: String]) { get throws { try sharedOriginal.value } }

    /// Loads `tensors` with `metadata` (the bundled file's when nil) as a model file.
    static func load(_ tensors: [Tensor], metadata: [String: String]? = nil) throws {
        let data = try SafeTensors.encode(tensors, metadata: metadata ?? original.metadata)
        _ = try ModelFile.network(in: SafeTensors(data, file: "test.safetensors"))
    }

    static func loadBytes(_ bytes: Data) throws(ModelError) {
        _ = try ModelFile.network(in: SafeTensors(bytes, file: "test.safetensors"))
    }

    @Test func roundTripLoads() throws {
        try Self.load(Self.original.tensors)
    }

    @Test func missingTensorIsNamed() throws {
        let tensors = try Self.original.tensors.filter { $0.name != "_blocks.7._bn1.running_var" }
        #expect(throws: ModelError.missingTensor(file: "test.safetensors", name: "_blocks.7._bn1.running_var")) {
            try Self.load(tensors)
        }
    }

    @Test func extraTensorIsNamed() throws {
        let tensors = try Self.original.tensors + [("_blocks.99._extra.weight", [2], [1, 2])]
        #expect(throws: ModelError.unexpectedTensor(file: "test.safetensors", name: "_blocks.99._extra.weight")) {
            try Self.load(tensors)
        }
    }

    @Test func wrongShapeIsNamed() throws {
        let tensors = try Self.original.tensors.map { t -> Tensor in
            t.name == "_blocks.3._depthwise_conv.weight" ? (t.name, [144, 1, 25], t.values) : t
        }
        #expect(throws: ModelError.wrongShape(file: "test.safetensors", name: "_blocks.3._depthwise_conv.weight",
                                              expected: [144, 1, 5, 5], found: [144, 1, 25])) {
            try Self.load(tensors)
        }
    }

    @Test func nanWeightsAreRefused() throws {
        let tensors = try Self.original.tensors.map { t -> Tensor in
            t.name == "_conv_head.weight" ? (t.name, t.shape, [Float.nan] + t.values.dropFirst()) : t
        }
        #expect(throws: ModelError.nonFiniteValues(file: "test.safetensors", name: "_conv_head.weight")) {
            try Self.load(tensors)
        }
    }

    @Test func labelCountMustMatchTheHead() throws {
        var model = try JSONDecoder().decode(ModelDescription.self, from: Data(Self.original.metadata["dedog.model"]!.utf8))
        model.backbones[0].imagenetHead!.labels.removeLast()
        let metadata = ["dedog.model": String(decoding: try JSONEncoder().encode(model), as: UTF8.self)]
        #expect(throws: ModelError.labelCountMismatch(file: "test.safetensors", head: "ImageNet", labels: 999, outputs: 1000)) {
            try Self.load(Self.original.tensors, metadata: metadata)
        }
    }

    @Test func metadataProblemsAreReported() throws {
        #expect(throws: ModelError.invalidMetadata(file: "test.safetensors",
                                                   detail: "no \"dedog.model\" entry in the safetensors metadata")) {
            try Self.load(Self.original.tensors, metadata: [:])
        }
        #expect(throws: ModelError.invalidMetadata(file: "test.safetensors", detail: "missing preprocessing")) {
            try Self.load(Self.original.tensors, metadata: ["dedog.model": #"{"formatVersion":1,"architecture":"efficientnet-lite0","batchNormEpsilon":0.001,"decision":{"noDogBelow":0.5,"unsureBelow":0.4,"unsureMargin":0.1}}"#])
        }
        let future = try Self.original.metadata["dedog.model"]!.replacingOccurrences(of: #""formatVersion":[0-9]+"#, with: #""formatVersion":\#(ModelDescription.currentVersion + 1)"#,
                                                                                  options: .regularExpression)
        #expect(throws: ModelError.unsupportedVersion(file: "test.safetensors", version: ModelDescription.currentVersion + 1,
                                                      supported: ModelDescription.currentVersion)) {
            try Self.load(Self.original.tensors, metadata: ["dedog.model": future])
        }
    }

    /// The activation ranges of 8-bit inference are checked at load like every other field: one for every tensor
    /// the engine keeps in bytes, pairs in order, ReLU6 outputs within [0, 6], a known method; the field named.
    @Test func badActivationRangesAreRefused() throws {
        let json = try JSONSerialization.jsonObject(with: Data(Self.original.metadata["dedog.model"]!.utf8))
        let ranges = try #require(((json as? [String: Any])?["backbones"] as? [[String: Any]])?.first?["int8"] as? [String: Any],
                                  "the bundled Lite0 file has activation ranges")
        let path = ["backbones", "0", "int8"]
        let cases: [(Any, String)] = [
            (JSONEdit.set([0, 6, 1], at: path + ["ranges", "block_03.expand"], in: json), "backbones[0].int8.ranges.block_03.expand"),
            (JSONEdit.set([0, 7], at: path + ["ranges", "block_03.depthwise"], in: json), "backbones[0].int8.ranges.block_03.depthwise"),
            (JSONEdit.set([3, -3], at: path + ["ranges", "block_05"], in: json), "backbones[0].int8.ranges.block_05"),
            (JSONEdit.set([Float](repeating: 1, count: 8), at: path + ["ranges", "stem"], in: json), "backbones[0].int8.ranges.stem"),
            (JSONEdit.set((ranges["ranges"] as? [String: Any] ?? [:]).filter { $0.key != "block_09" }, at: path + ["ranges"], in: json),
             "backbones[0].int8.ranges"),
            (JSONEdit.set("percentile", at: path + ["method"], in: json), "backbones[0].int8.method"),
            (JSONEdit.set(0, at: path + ["photos"], in: json), "backbones[0].int8.photos"),
        ]
        for (edited, field) in cases {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: edited), as: UTF8.self)
            do {
                try Self.load(Self.original.tensors, metadata: ["dedog.model": text])
                Issue.record("\(field): accepted")
            } catch let ModelError.invalidValue(_, f, _, _) {
                #expect(f == field)
            } catch {
                Issue.record("\(field): \(error)")
            }
        }
    }

    @Test func malformedContainersAreRefused() throws {
        let good = try SafeTensors.encode([("a", [2], [1, 2])], metadata: [:])
        func header(_ json: String, data: Int = 8) -> Data {
            var d = Data()
            withUnsafeBytes(of: UInt64(json.utf8.count).littleEndian) { d.append(contentsOf: $0) }
            return d + Data(json.utf8) + Data(count: data)
        }
        let cases: [(String, Data)] = [
            ("empty", Data()),
            ("short", Data([1, 2, 3])),
            ("huge header length", Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) + good.dropFirst(8)),
            ("header past end", Data([0x00, 0x10, 0, 0, 0, 0, 0, 0]) + good.dropFirst(8)),
            ("not JSON", header("{nope")),
            ("not an object", header("[1,2]")),
            ("offsets past end", header(#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,80]}}"#)),
            ("offsets reversed", header(#"{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}"#)),
            ("size mismatch", header(#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#)),
            ("shape overflow", header(#"{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,8]}}"#)),
            ("negative dim", header(#"{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}"#)),
            ("overlap", header(#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#)),
            ("bad metadata", header(#"{"__metadata__":{"x":1}}"#)),
        ]
        for (label, bytes) in cases {
            do {
                _ = try SafeTensors(bytes, file: "bad.safetensors")
                Issue.record("\(label): accepted")
            } catch {
                guard case .malformedHeader(let file, _) = error else { Issue.record("\(label): \(error)"); continue }
                #expect(file == "bad.safetensors")
            }
        }
        #expect(throws: ModelError.wrongDType(file: "bad.safetensors", name: "a", found: "Q8")) {
            try SafeTensors(header(#"{"a":{"dtype":"Q8","shape":[2],"data_offsets":[0,8]}}"#), file: "bad.safetensors")
        }
        let bf16 = try SafeTensors(header(#"{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}}"#), file: "bad.safetensors")
        #expect(throws: ModelError.wrongDType(file: "bad.safetensors", name: "a", found: "BF16")) {
            try bf16.floats("a", shape: [4])
        }
    }

    /// F16 tensors are widened exactly: zeros, ±1, the largest half, the smallest subnormal, and a value
    /// with every mantissa bit; NaN or infinity in a half tensor is refused like in a float one.
    @Test func halfPrecisionTensorsAreWidenedExactly() throws {
        func file(_ halves: [UInt16]) throws -> SafeTensors {
            let json = #"{"a":{"dtype":"F16","shape":[\#(halves.count)],"data_offsets":[0,\#(halves.count * 2)]}}"#
            var bytes = Data()
            withUnsafeBytes(of: UInt64(json.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: json.utf8)
            for h in halves { withUnsafeBytes(of: h.littleEndian) { bytes.append(contentsOf: $0) } }
            return try SafeTensors(bytes, file: "half.safetensors")
        }
        let halves: [UInt16] = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0x0001, 0x3FFF, 0x3555, 0x0400, 0x1234]
        let expected: [Float] = [0, -0.0, 1, -1, 65504, 5.9604645e-08, 1.9990234, 0.33325195, 6.1035156e-05, 0.0007572174]
        let widened = try file(halves).floats("a", shape: [halves.count])
        #expect(widened.map(\.bitPattern) == expected.map(\.bitPattern))
        #expect(throws: ModelError.nonFiniteValues(file: "half.safetensors", name: "a")) {
            try file([0x3C00, 0x7C00]).floats("a", shape: [2])
        }
    }

    @Test func missingFileIsUnreadable() throws {
        #expect(throws: ModelError.unreadable(file: "/nonexistent/model.safetensors", reason: "no such file")) {
            try ModelFile.network(contentsOf: URL(fileURLWithPath: "/nonexistent/model.safetensors"))
        }
    }

    /// Bundled models are shared with everyone who clones dedog: their descriptions hold no absolute path.
    @Test func bundledModelsCarryNoPaths() throws {
        let folder = SharedData.packageRoot.appendingPathComponent("models")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".safetensors") {
            let tensors = try SafeTensors(contentsOf: folder.appendingPathComponent(name))
            let json = tensors.metadata[ModelDescription.metadataKey] ?? ""
            #expect(!json.contains("\"/"), "\(name) names an absolute path")
            #expect(!json.contains("/home/") && !json.contains("/root/") && !json.contains("/Users/"), "\(name)")
        }
    }
}
