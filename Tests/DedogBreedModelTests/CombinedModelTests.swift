import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// Model files that combine several backbones (format 2), and format 1 files read as one-backbone models.
@Suite(.serialized) struct CombinedModelTests {
    static let labels = ["a", "b", "c"].map { Label(key: $0, name: $0.uppercased(), isDog: true) }

    /// A breed head with fixed pseudo-random weights, different for each seed.
    static func head(seed: UInt64) -> (weight: [Float], bias: [Float]) {
        var state = seed
        func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state >> 11) % 2000 - 1000) / 20_000
        }
        return ((0..<(3 * 1280)).map { _ in next() }, (0..<3).map { _ in next() })
    }

    static let sharedBase = Shared { try SafeTensors(contentsOf: BundledModel.url) }
    static var base: SafeTensors { get throws { try sharedBase.value } }
    static var baseBackbone: BackboneDescription { get throws { try ModelDescription(from: base).backbones[0] } }

    /// Writes a model of the Lite0 base with one backbone per (prefix, seed, temperature); `int8`: each backbone's
    /// 8-bit breed temperature and the combined one.
    static func write(_ backbones: [(prefix: String, seed: UInt64, temperature: Float)], combined: Float? = nil,
                      fit: InputDescription.Fit = .crop, keepsRanges: Bool = true,
                      int8: (breed: [Float], combined: Float?)? = nil, to url: URL) throws {
        var descriptions: [BackboneDescription] = [], parts: [ModelFile.Part] = []
        for b in backbones {
            var d = try baseBackbone
            if !keepsRanges { d.activationRanges = nil }
            d.tensorPrefix = b.prefix
            d.preprocessing.fit = fit
            d.breedHead = HeadDescription(weight: "", bias: "", labels: labels, temperature: b.temperature)
            d.int8BreedTemperature = int8.flatMap { descriptions.count < $0.breed.count ? $0.breed[descriptions.count] : nil }
            descriptions.append(d)
            let (w, bias) = head(seed: b.seed)
            parts.append(ModelFile.Part(base: try base, source: try baseBackbone, breedWeight: w, breedBias: bias))
        }
        try ModelFile.write(ModelDescription(backbones: descriptions, combinedTemperature: combined,
                                             int8CombinedTemperature: int8?.combined), parts: parts, to: url)
    }

    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-combined-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let sharedFeatures = Shared {
        let input: [Float] = (0..<(3 * 224 * 224)).map { (i: Int) -> Float in Float((i * 7919) % 255) / 128 - 1 }
        return try BundledModel.model.backbones[0].makeSession().features(input, batch: 1)
    }
    static var features: [Float] { get throws { try sharedFeatures.value } }

    /// A model that pads is written as format 3, which a dedog that knows only format 2 (and would crop) refuses
    /// as newer; one that crops stays format 2, its JSON without a `fit`; one with activation ranges is format 4,
    /// which a dedog without 8-bit inference refuses, and keeps them.
    @Test func theFitIsKeptAndPaddingModelsAreFormatThree() throws {
        for fit in InputDescription.Fit.allCases {
            for keepsRanges in [false, true] {
                let url = Self.folder.appendingPathComponent("fit-\(fit)-\(keepsRanges).safetensors")
                try Self.write([("", 1, 1)], fit: fit, keepsRanges: keepsRanges, to: url)
                let json = try #require(SafeTensors(contentsOf: url).metadata[ModelDescription.metadataKey])
                let model = try Model(contentsOf: url)
                #expect(model.backbones[0].input.fit == fit)
                #expect(model.specification.formatVersion == (keepsRanges ? 4 : fit == .crop ? 2 : 3))
                #expect(json.contains(#""fit":"\#(fit.rawValue)""#) == (fit != .crop), "\(json)")
                let expectedRanges = keepsRanges ? try Self.baseBackbone.activationRanges : nil
                #expect(model.backbones[0].activationRanges == expectedRanges)
                #expect(json.contains(#""int8":"#) == keepsRanges)
            }
        }
        // Files from before fits existed have none: they crop.
        let old = #"{"resizeShorterSide":256,"cropSize":224,"mean":[127,127,127],"std":[128,128,128]}"#
        #expect(try JSONDecoder().decode(InputDescription.self, from: Data(old.utf8)) == InputDescription())
        let bad = #"{"resizeShorterSide":256,"cropSize":224,"mean":[127,127,127],"std":[128,128,128],"fit":"zoom"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(InputDescription.self, from: Data(bad.utf8)) }
        let url = Self.folder.appendingPathComponent("fit-pad-false.safetensors")
        let tensors = try SafeTensors(contentsOf: url)
        let zoom = tensors.metadata[ModelDescription.metadataKey]!.replacingOccurrences(of: #""fit":"pad""#, with: #""fit":"zoom""#)
        #expect(throws: ModelError.invalidMetadata(file: url.path, detail: "unknown value at backbones[0].preprocessing.fit")) {
            try Model(tensors: tensors.replacingMetadata([ModelDescription.metadataKey: zoom]))
        }
    }

    @Test func oneBackboneGivesItsHeadsCalibratedSoftmax() throws {
        let url = Self.folder.appendingPathComponent("one.safetensors")
        try Self.write([("", 1, 1.7)], keepsRanges: false, to: url)
        let model = try Model(contentsOf: url)
        #expect(model.specification.formatVersion == 2)
        #expect(model.specification.backbones[0].breedHead?.weight == "breed_head.weight")
        let (w, b) = Self.head(seed: 1)
        let features = try Self.features
        let logits = (0..<3).map { o in (0..<1280).reduce(b[o]) { $0 + w[o * 1280 + $1] * features[$1] } }
        let e = logits.map { exp(Double($0) / 1.7) }, sum = e.reduce(0, +)
        for precision in Precision.allCases {
            let got = try #require(try model.breedProbabilities([Self.features], precision: precision))
            for (p, q) in zip(got, e.map { $0 / sum }) { #expect(abs(Double(p) - q) < 1e-5, "\(precision): \(got)") }
        }
    }

    /// Two backbones: the mean of their calibrated log-probabilities, over the combined temperature; the
    /// ImageNet answer is the mean of their probabilities.
    @Test func twoBackbonesAverageLogProbabilities() throws {
        let first = Self.folder.appendingPathComponent("first.safetensors")
        let second = Self.folder.appendingPathComponent("second.safetensors")
        let both = Self.folder.appendingPathComponent("both.safetensors")
        try Self.write([("", 1, 1.7)], to: first)
        try Self.write([("", 2, 0.8)], to: second)
        try Self.write([("x.", 1, 1.7), ("y.", 2, 0.8)], combined: 1.3, to: both)
        let p1 = try #require(try Model(contentsOf: first).breedProbabilities([Self.features], precision: .fp32))
        let p2 = try #require(try Model(contentsOf: second).breedProbabilities([Self.features], precision: .fp32))
        let combined = try Model(contentsOf: both)
        #expect(combined.backbones.count == 2)
        #expect(combined.specification.backbones.map(\.tensorPrefix) == ["x.", "y."])
        let got = try #require(try combined.breedProbabilities([Self.features, Self.features], precision: .fp32))
        let s = zip(p1, p2).map { exp((log(Double($0)) + log(Double($1))) / 2 / 1.3) }
        for (p, q) in zip(got, s.map { $0 / s.reduce(0, +) }) { #expect(abs(Double(p) - q) < 1e-5, "\(got)") }

        let i1 = try #require(try Model(contentsOf: first).imagenetProbabilities([Self.features]))
        let i12 = try #require(try combined.imagenetProbabilities([Self.features, Self.features]))
        #expect(zip(i1, i12).allSatisfy { abs($0 - $1) < 1e-6 }, "the same ImageNet head twice averages to itself")
        #expect(throws: ModelError.badInput(detail: "features of 1 backbones for a model of 2")) {
            try combined.breedProbabilities([Self.features], precision: .fp32)
        }
    }

    /// Features computed in 8 bits take the 8-bit temperatures where the file has them (format 5), each backbone's
    /// and the combined one; in floats, and where the file has none, the float ones.
    @Test func eightBitAnswersTakeTheirOwnTemperatures() throws {
        let url = Self.folder.appendingPathComponent("int8-temperatures.safetensors")
        try Self.write([("x.", 1, 1.7), ("y.", 2, 0.8)], combined: 1.3, int8: ([1.9, 0.7], 1.1), to: url)
        let model = try Model(contentsOf: url)
        #expect(model.specification.formatVersion == 5)
        #expect((0..<2).map { model.breedTemperature(backbone: $0, precision: .int8) } == [1.9, 0.7])
        #expect((0..<2).map { model.breedTemperature(backbone: $0, precision: .fp32) } == [1.7, 0.8])
        #expect(model.combinedTemperature(for: .int8) == 1.1 && model.combinedTemperature(for: .fp32) == 1.3)
        let features = try Self.features
        func expected(_ temperatures: [Double], _ combined: Double) -> [Double] {
            var logProbabilities: [[Double]] = []
            for (seed, t) in zip([UInt64(1), 2], temperatures) {
                let (w, b) = Self.head(seed: seed)
                var z: [Double] = []
                for o in 0..<3 {
                    var logit = b[o]
                    for k in 0..<1280 { logit += w[o * 1280 + k] * features[k] }
                    z.append(Double(logit) / t)
                }
                let logSum = log(z.map { exp($0) }.reduce(0, +))
                logProbabilities.append(z.map { $0 - logSum })
            }
            let s: [Double] = (0..<3).map { c in exp((logProbabilities[0][c] + logProbabilities[1][c]) / 2 / combined) }
            return s.map { $0 / s.reduce(0, +) }
        }
        for (precision, want) in [(Precision.int8, expected([1.9, 0.7], 1.1)), (.fp32, expected([1.7, 0.8], 1.3))] {
            let got = try #require(try model.breedProbabilities([Self.features, Self.features], precision: precision))
            for (p, q) in zip(got, want) { #expect(abs(Double(p) - q) < 1e-5, "\(precision): \(got) against \(want)") }
        }
        // Only one 8-bit temperature given: the other backbone and the combination keep the float ones.
        try Self.write([("x.", 1, 1.7), ("y.", 2, 0.8)], combined: 1.3, int8: ([1.9], nil), to: url)
        let partly = try Model(contentsOf: url)
        #expect((0..<2).map { partly.breedTemperature(backbone: $0, precision: .int8) } == [1.9, 0.8])
        #expect(partly.combinedTemperature(for: .int8) == 1.3)
        // None: format 4, as before.
        try Self.write([("x.", 1, 1.7), ("y.", 2, 0.8)], combined: 1.3, to: url)
        #expect(try Model(contentsOf: url).specification.formatVersion == 4)
        // 8-bit temperatures need a positive value and activation ranges; the field is named.
        for (int8, keepsRanges, field, value, requirement) in [
            (([Float(0)], Float?.none), true, "backbones[0].int8.breedTemperature", "0.0", "a positive finite number"),
            (([1.9], Float.infinity), true, "int8CombinedTemperature", "inf", "a positive finite number"),
            (([], 1.1), false, "int8CombinedTemperature", "present", "absent when no backbone has activation ranges (int8)"),
        ] {
            #expect(throws: ModelError.invalidValue(file: url.path, field: field, value: value, requirement: requirement)) {
                try Self.write([("x.", 1, 1.7), ("y.", 2, 0.8)], combined: 1.3, keepsRanges: keepsRanges, int8: int8, to: url)
            }
        }
    }

    /// A format 1 file is a one-backbone model, and is written back in its own layout (made here from the bundled
    /// Lite0 file, which was format 1 until it gained activation ranges); format 1 cannot hold those.
    @Test func formatOneFilesStillLoad() throws {
        let file = try SafeTensors(contentsOf: BundledModel.url)
        var description = try ModelDescription(from: file)
        description.formatVersion = 1
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(description) }
        description.backbones[0].activationRanges = nil
        let v1 = String(decoding: try JSONEncoder().encode(description), as: UTF8.self)
        let model = try Model(tensors: file.replacingMetadata([ModelDescription.metadataKey: v1]))
        #expect(model.specification.formatVersion == 1)
        #expect(model.backbones[0].activationRanges == nil && model.backbones[0].precisions == [.fp32])
        #expect(model.specification.backbones.map(\.tensorPrefix) == [""])
        #expect(model.imagenetLabels?.count == 1000)
        let json = try JSONEncoder().encode(model.specification)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["architecture"] as? String == "efficientnet-lite0")
        #expect(object["backbones"] == nil)
        #expect(try JSONDecoder().decode(ModelDescription.self, from: json) == model.specification)
    }

    /// Edits of a two-backbone file's description that must be refused, each naming its field.
    @Test(arguments: [
        ("backbones.1.tensorPrefix", #""x.""#, "backbones[1].tensorPrefix"),
        ("backbones.1.breedHead.labels.0.key", #""z""#, "backbones[1].breedHead"),
        ("combinedTemperature", "0", "combinedTemperature"),
        ("backbones.1.preprocessing.cropSize", "8", "backbones[1].preprocessing.cropSize"),
    ])
    func inconsistentBackbonesAreRefused(_ path: String, _ value: String, _ field: String) throws {
        let url = Self.folder.appendingPathComponent("edit.safetensors")
        try Self.write([("x.", 1, 1), ("y.", 2, 1)], combined: 1, to: url)
        let file = try SafeTensors(contentsOf: url)
        var object = try JSONSerialization.jsonObject(with: Data(file.metadata[ModelDescription.metadataKey]!.utf8))
        object = JSONEdit.set(try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed),
                          at: path.split(separator: ".").map(String.init), in: object)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let edited = file.replacingMetadata([ModelDescription.metadataKey: json])
        let error = #expect(throws: ModelError.self) { try Model(tensors: edited) }
        guard case let .invalidValue(_, got, _, _)? = error else {
            Issue.record("\(path) = \(value): \(String(describing: error))")
            return
        }
        #expect(got == field)
    }

    @Test func fourBackbonesAreTooMany() throws {
        let url = Self.folder.appendingPathComponent("four.safetensors")
        #expect(throws: ModelError.invalidValue(file: url.path, field: "backbones", value: "4 backbones",
                                                requirement: "1 to 3 backbones")) {
            try Self.write([("a.", 1, 1), ("b.", 2, 1), ("c.", 3, 1), ("d.", 4, 1)], to: url)
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    /// Strict loading per backbone: a tensor missing under one prefix is named with it, and a tensor no backbone
    /// claims is refused.
    @Test func tensorsAreCheckedUnderEachPrefix() throws {
        let url = Self.folder.appendingPathComponent("strict.safetensors")
        try Self.write([("x.", 1, 1), ("y.", 2, 1)], combined: 1, to: url)
        let file = try SafeTensors(contentsOf: url)
        func rewritten(dropping drop: String? = nil, adding add: String? = nil) throws -> SafeTensors {
            var tensors: [(name: String, dtype: String, shape: [Int], bytes: Data)] = []
            for (name, entry) in file.entries.sorted(by: { $0.key < $1.key }) where name != drop {
                tensors.append((name, entry.dtype, entry.shape, file.bytes(of: name)))
            }
            if let add { tensors.append((add, "F32", [1], Data(count: 4))) }
            return try SafeTensors(try SafeTensors.encode(tensors, metadata: file.metadata), file: "t")
        }
        #expect(throws: ModelError.missingTensor(file: "t", name: "y._blocks.5._bn1.running_var")) {
            try Model(tensors: try rewritten(dropping: "y._blocks.5._bn1.running_var"))
        }
        #expect(throws: ModelError.unexpectedTensor(file: "t", name: "z._conv_head.weight")) {
            try Model(tensors: try rewritten(adding: "z._conv_head.weight"))
        }
        #expect(throws: ModelError.invalidMetadata(file: url.path, detail:
            "it combines 2 backbones; load it as a whole model, not as one network")) {
            try ModelFile.network(contentsOf: url)
        }
    }
}
