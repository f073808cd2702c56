import Foundation
import DedogImage

/// One class a head can name.
public struct Label: Codable, Sendable, Equatable {
    /// Stable key: the Stanford Dogs folder for dog breeds (e.g. `n02085620-Chihuahua`), else the WordNet id.
    public var key: String
    /// Human-readable name, e.g. "Chihuahua".
    public var name: String
    public var isDog: Bool

    public init(key: String, name: String, isDog: Bool) {
        self.key = key
        self.name = name
        self.isDog = isDog
    }
}

/// A fully-connected classifier on the 1280 pooled backbone features.
public struct HeadDescription: Codable, Sendable, Equatable {
    /// Tensor names of the [classes × 1280] weight and [classes] bias.
    public var weight: String
    public var bias: String
    public var labels: [Label]
    /// Logits are divided by this before the softmax (calibration); 1 when uncalibrated.
    public var temperature: Float?

    public init(weight: String, bias: String, labels: [Label], temperature: Float? = nil) {
        self.weight = weight
        self.bias = bias
        self.labels = labels
        self.temperature = temperature
    }
}

/// When a photo counts as showing no dog, and when the model is unsure. See `Classifier` for how they are used.
public struct DecisionThresholds: Codable, Sendable, Equatable {
    /// "No dog" when the ImageNet head puts less than this probability mass on dog classes.
    public var noDogBelow: Float
    /// "Unsure" when the top breed's probability is below this …
    public var unsureBelow: Float
    /// … or when it leads the second breed by less than this.
    public var unsureMargin: Float

    public init(noDogBelow: Float = 0.5, unsureBelow: Float = 0.45, unsureMargin: Float = 0.15) {
        self.noDogBelow = noDogBelow
        self.unsureBelow = unsureBelow
        self.unsureMargin = unsureMargin
    }
}

/// The `dedog.model` JSON document in a model file's safetensors metadata: everything needed to classify
/// besides the tensors themselves.
public struct ModelDescription: Codable, Sendable, Equatable {
    public static let currentVersion = 1

    public var formatVersion: Int
    public var architecture: String
    public var source: String?
    public var preprocessing: Preprocessing
    public var batchNormEpsilon: Float
    /// The pretrained ImageNet classifier; it also decides whether a photo shows a dog at all.
    public var imagenetHead: HeadDescription?
    /// A trained breed classifier; when present, breeds are ranked with it.
    public var breedHead: HeadDescription?
    public var decision: DecisionThresholds
    /// Classify each photo as it is and mirrored, and average the logits (set by training when it helps on the
    /// validation images; costs a second pass through the network).
    public var averagesMirror: Bool?
    /// Free-form facts about how a trained head was made (dataset, metrics, date, seed).
    public var training: [String: String]?

    public init(formatVersion: Int = ModelDescription.currentVersion, architecture: String = "efficientnet-lite0",
                source: String? = nil, preprocessing: Preprocessing = Preprocessing(), batchNormEpsilon: Float = 1e-3,
                imagenetHead: HeadDescription?, breedHead: HeadDescription?,
                decision: DecisionThresholds = DecisionThresholds(), averagesMirror: Bool? = nil,
                training: [String: String]? = nil) {
        self.formatVersion = formatVersion
        self.architecture = architecture
        self.source = source
        self.preprocessing = preprocessing
        self.batchNormEpsilon = batchNormEpsilon
        self.imagenetHead = imagenetHead
        self.breedHead = breedHead
        self.decision = decision
        self.averagesMirror = averagesMirror
        self.training = training
    }

    public static let metadataKey = "dedog.model"

    /// Reads and checks the description in `tensors`' metadata.
    public init(from tensors: SafeTensors) throws(ModelError) {
        let file = tensors.file
        guard let json = tensors.metadata[Self.metadataKey] else {
            throw .invalidMetadata(file: file, detail: "no \"\(Self.metadataKey)\" entry in the safetensors metadata")
        }
        do {
            self = try JSONDecoder().decode(ModelDescription.self, from: Data(json.utf8))
        } catch let DecodingError.keyNotFound(key, context) {
            throw .invalidMetadata(file: file, detail: "missing \(Self.path(context.codingPath + [key]))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw .invalidMetadata(file: file, detail: "wrong type at \(Self.path(context.codingPath))")
        } catch {
            throw .invalidMetadata(file: file, detail: "not valid JSON")
        }
        guard formatVersion <= Self.currentVersion, formatVersion >= 1 else {
            throw .unsupportedVersion(file: file, version: formatVersion, supported: Self.currentVersion)
        }
        guard Backbone.named(architecture) != nil else { throw .unsupportedArchitecture(file: file, name: architecture) }
        try validate(file: file)
    }

    /// Every field against what the engine and the classifier accept; the first that fails is named.
    func validate(file: String) throws(ModelError) {
        func check(_ ok: Bool, _ field: String, _ value: @autoclosure () -> String, _ requirement: String) throws(ModelError) {
            if !ok { throw .invalidValue(file: file, field: field, value: value(), requirement: requirement) }
        }
        func list(_ xs: [Float]) -> String { "[" + xs.map { "\($0)" }.joined(separator: ", ") + "]" }
        let p = preprocessing, sizes = EfficientNetLite.inputSizes
        try check(sizes.contains(p.cropSize), "preprocessing.cropSize", "\(p.cropSize)",
                  "between \(sizes.lowerBound) and \(sizes.upperBound) pixels")
        try check(p.resizeShorterSide >= p.cropSize && p.resizeShorterSide <= 4 * p.cropSize,
                  "preprocessing.resizeShorterSide", "\(p.resizeShorterSide)",
                  "at least the crop (\(p.cropSize)) and at most 4 times it")
        try check(p.mean.count == 3 && p.mean.allSatisfy(\.isFinite), "preprocessing.mean", list(p.mean),
                  "3 finite numbers (R, G, B)")
        try check(p.std.count == 3 && p.std.allSatisfy { $0.isFinite && $0 > 0 }, "preprocessing.std", list(p.std),
                  "3 positive finite numbers (R, G, B)")
        try check(batchNormEpsilon.isFinite && batchNormEpsilon > 0 && batchNormEpsilon < 1, "batchNormEpsilon",
                  "\(batchNormEpsilon)", "a positive number below 1")
        guard imagenetHead != nil || breedHead != nil else {
            throw .invalidMetadata(file: file, detail: "the model has no classifier head")
        }
        for (name, head) in [("imagenetHead", imagenetHead), ("breedHead", breedHead)] {
            guard let head else { continue }
            try check(!head.labels.isEmpty, name + ".labels", "empty", "at least one label")
            var seen = Set<String>()
            for (i, label) in head.labels.enumerated() {
                try check(seen.insert(label.key).inserted, "\(name).labels[\(i)].key", "\"\(label.key)\"",
                          "unique within the head (it names another label already)")
                try check(!label.key.isEmpty, "\(name).labels[\(i)].key", "empty", "a non-empty key")
            }
            if let t = head.temperature {
                try check(t.isFinite && t > 0, name + ".temperature", "\(t)", "a positive finite number")
            }
        }
        for (field, value) in [("noDogBelow", decision.noDogBelow), ("unsureBelow", decision.unsureBelow),
                               ("unsureMargin", decision.unsureMargin)] {
            try check(value.isFinite && (0...1).contains(value), "decision." + field, "\(value)", "between 0 and 1")
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }
}
