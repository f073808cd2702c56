import Foundation
import DedogNN

/// One class a head can name.
public struct Label: Codable, Sendable, Equatable {
    /// Stable key: the Stanford Dogs folder for dog breeds (e.g. `n02085620-Chihuahua`), else the WordNet id.
    public var key: String
    /// Human-readable name, e.g. "Chihuahua".
    public var name: String
    public var isDog: Bool
    /// The breed catalogue's id for it (`chihuahua`), when training matched its folder to a catalogue breed; the
    /// catalogue also knows the Stanford Dogs keys directly.
    public var breed: String?
    /// For a breed head's label: the keys of the ImageNet head's labels for the same breed (the catalogue's
    /// Stanford Dogs keys of `breed`), so that the ImageNet head's word on the breed can be weighed
    /// (`DecisionThresholds.breedVote`). A label whose own key is an ImageNet label's needs none.
    public var imagenetKeys: [String]?
    /// A breed taught from a few confirmed photos (`dedog learn` of a breed the model did not know), not trained:
    /// its head row is made from those photos (`TaughtBreed`), and it goes when the last of them is forgotten.
    public var taught: Taught?
    /// For a breed head's label: the breed's kind (FCI group and section) from the catalogue, which the answer says
    /// when it names no breed (`KindRule`); nil when the catalogue gives none.
    public var kind: BreedKind?

    public init(key: String, name: String, isDog: Bool, breed: String? = nil, imagenetKeys: [String]? = nil,
                taught: Taught? = nil, kind: BreedKind? = nil) {
        self.key = key
        self.name = name
        self.isDog = isDog
        self.breed = breed
        self.imagenetKeys = imagenetKeys
        self.taught = taught
        self.kind = kind
    }
}

/// What a taught breed's head row is made from besides its confirmed photos, whose features the file keeps as
/// directions only.
public struct Taught: Codable, Sendable, Equatable {
    /// The typical length of its photos' features on this backbone (their mean), which its bias is set for.
    public var featureLength: Float

    public init(featureLength: Float) {
        self.featureLength = featureLength
    }
}

extension Collection where Element == Label {
    /// The share of `probabilities` (one per label, in order) that falls on dog classes.
    public func dogProbability(_ probabilities: [Float]) -> Float {
        zip(self, probabilities).reduce(Float(0)) { $0 + ($1.0.isDog ? $1.1 : 0) }
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

/// A photo a user confirmed as showing one of the model's breeds (`dedog learn`); its features are in
/// `ConfirmedPhotos`.
public struct ConfirmedPhoto: Codable, Sendable, Equatable {
    /// The breed label's key.
    public var label: String
    /// The photo's file name when it was learned (for people; not used to match).
    public var photo: String
    /// The photo's content hash: the same photo learned twice is kept once, and `forget` finds it by content.
    public var fingerprint: String
    /// When it was learned (ISO 8601).
    public var added: String

    public init(label: String, photo: String, fingerprint: String, added: String) {
        self.label = label
        self.photo = photo
        self.fingerprint = fingerprint
        self.added = added
    }
}

/// One backbone of a model file and the heads on its features.
public struct BackboneDescription: Codable, Sendable, Equatable {
    public var architecture: String
    /// What the names of this backbone's tensors start with in the file: "" when the file holds one backbone under
    /// the checkpoint's own names (`_blocks.3._depthwise_conv.weight`), e.g. "lite2." when it holds several.
    public var tensorPrefix: String
    /// The input the backbone takes (the JSON keeps the name `preprocessing`).
    public var preprocessing: InputDescription
    public var batchNormEpsilon: Float
    /// The pretrained ImageNet classifier; it also decides whether a photo shows a dog at all.
    public var imagenetHead: HeadDescription?
    /// A trained breed classifier; when present, breeds are ranked with it.
    public var breedHead: HeadDescription?
    /// Classify each photo as it is and mirrored, and average the logits (set by training when it helps on the
    /// validation images; costs a second pass through the network).
    public var averagesMirror: Bool?
    /// Tensor [breed labels × 1280]: each breed's prototype, the mean direction of its training photos' features
    /// (unit vectors, as classify computes them). Written by training; used for "not one of my breeds".
    public var prototypes: String?
    /// Tensor [confirmed photos × 1280]: the features of the photos users confirmed
    /// (`ModelDescription.confirmedPhotos`), unit vectors, in the same order. `memory` in the file's JSON.
    public var confirmedPhotos: String?
    /// The ranges of the backbone's activations on calibration photos, from which the 8-bit engine takes its
    /// scales (`ActivationRanges`); without them the backbone runs in 32-bit floats only. `int8` in the JSON.
    public var activationRanges: ActivationRanges?
    /// The breed head's temperature on this backbone's 8-bit features, in place of `HeadDescription.temperature`
    /// (fitted the same way, on the same held-out photos, by `dedog train`); nil: the head's own. The 8-bit features
    /// differ a little from the float ones, and so does how sure the head is of them: the fast model's confidences
    /// claimed 2.1 % more or less than their accuracy at int8 with the float temperature, 1.8 % in floats.
    /// `int8.breedTemperature` in the JSON, beside the ranges.
    public var int8BreedTemperature: Float?

    /// The breed head's temperature for features computed at `precision`: at int8, the 8-bit one where there is
    /// one (a backbone without activation ranges runs in floats anyway).
    public func breedTemperature(for precision: Precision) -> Float {
        (precision == .int8 ? int8BreedTemperature : nil) ?? breedHead?.temperature ?? 1
    }

    /// What the engine needs of it to build the network.
    public var network: NetworkDescription {
        NetworkDescription(architecture: architecture, tensorPrefix: tensorPrefix, input: preprocessing,
                           batchNormEpsilon: batchNormEpsilon, activationRanges: activationRanges)
    }

    private enum CodingKeys: String, CodingKey {
        case architecture, tensorPrefix, preprocessing, batchNormEpsilon, imagenetHead, breedHead, averagesMirror,
             prototypes, confirmedPhotos = "memory", activationRanges = "int8"
    }

    /// The keys of `int8`: the engine's `ActivationRanges`, and the breed head's 8-bit temperature.
    private enum Int8Keys: String, CodingKey { case photos, method, ranges, breedTemperature }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        architecture = try c.decode(String.self, forKey: .architecture)
        tensorPrefix = try c.decode(String.self, forKey: .tensorPrefix)
        preprocessing = try c.decode(InputDescription.self, forKey: .preprocessing)
        batchNormEpsilon = try c.decode(Float.self, forKey: .batchNormEpsilon)
        imagenetHead = try c.decodeIfPresent(HeadDescription.self, forKey: .imagenetHead)
        breedHead = try c.decodeIfPresent(HeadDescription.self, forKey: .breedHead)
        averagesMirror = try c.decodeIfPresent(Bool.self, forKey: .averagesMirror)
        prototypes = try c.decodeIfPresent(String.self, forKey: .prototypes)
        confirmedPhotos = try c.decodeIfPresent(String.self, forKey: .confirmedPhotos)
        activationRanges = try c.decodeIfPresent(ActivationRanges.self, forKey: .activationRanges)
        int8BreedTemperature = activationRanges == nil ? nil
            : try c.nestedContainer(keyedBy: Int8Keys.self, forKey: .activationRanges).decodeIfPresent(Float.self, forKey: .breedTemperature)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(architecture, forKey: .architecture)
        try c.encode(tensorPrefix, forKey: .tensorPrefix)
        try c.encode(preprocessing, forKey: .preprocessing)
        try c.encode(batchNormEpsilon, forKey: .batchNormEpsilon)
        try c.encodeIfPresent(imagenetHead, forKey: .imagenetHead)
        try c.encodeIfPresent(breedHead, forKey: .breedHead)
        try c.encodeIfPresent(averagesMirror, forKey: .averagesMirror)
        try c.encodeIfPresent(prototypes, forKey: .prototypes)
        try c.encodeIfPresent(confirmedPhotos, forKey: .confirmedPhotos)
        if let activationRanges {
            var int8 = c.nestedContainer(keyedBy: Int8Keys.self, forKey: .activationRanges)
            try int8.encode(activationRanges.photos, forKey: .photos)
            try int8.encode(activationRanges.method, forKey: .method)
            try int8.encode(activationRanges.ranges, forKey: .ranges)
            try int8.encodeIfPresent(int8BreedTemperature, forKey: .breedTemperature)
        }
    }

    public init(architecture: String = "efficientnet-lite0", tensorPrefix: String = "",
                preprocessing: InputDescription = InputDescription(), batchNormEpsilon: Float = 1e-3,
                imagenetHead: HeadDescription?, breedHead: HeadDescription?, averagesMirror: Bool? = nil,
                prototypes: String? = nil, confirmedPhotos: String? = nil, activationRanges: ActivationRanges? = nil,
                int8BreedTemperature: Float? = nil) {
        self.activationRanges = activationRanges
        self.int8BreedTemperature = int8BreedTemperature
        self.prototypes = prototypes
        self.confirmedPhotos = confirmedPhotos
        self.architecture = architecture
        self.tensorPrefix = tensorPrefix
        self.preprocessing = preprocessing
        self.batchNormEpsilon = batchNormEpsilon
        self.imagenetHead = imagenetHead
        self.breedHead = breedHead
        self.averagesMirror = averagesMirror
    }
}

/// The `dedog.model` JSON document in a model file's safetensors metadata: everything needed to classify
/// besides the tensors themselves.
///
/// Format 2 holds a list of backbones, each with its preprocessing and heads; their breed log-probabilities are
/// averaged. Format 1 (dedog's first files) held one backbone with its fields at the top level; it is read as a
/// one-backbone model and written back in its own layout.
public struct ModelDescription: Codable, Sendable, Equatable {
    /// Format 3 is format 2 with input fits other than `crop` (`InputDescription.fit`); format 4 adds the activation
    /// ranges of 8-bit inference (`BackboneDescription.activationRanges`); format 5 the temperatures of 8-bit answers
    /// (`BackboneDescription.int8BreedTemperature`, `int8CombinedTemperature`); format 6 the rule of "a breed this model
    /// does not know" (`DecisionThresholds.unknownBreed`) and taught breeds (`Label.taught`); format 7 the cat rule of
    /// "no dog" (`DecisionThresholds.cat`); format 8 the dog detector (`detector`, a 1×1 head then: read as
    /// `legacyDetector`); format 9 the detector with a neck on two maps (issue 60). Files are written in the oldest
    /// format that holds them (`ModelFile` sets the version), so a dedog that cannot honour a field refuses the file.
    public static let currentVersion = 9
    /// How many backbones a model file may combine.
    public static let backboneCounts = 1...3

    public var formatVersion: Int
    public var source: String?
    public var backbones: [BackboneDescription]
    public var decision: DecisionThresholds
    /// The backbones' breed log-probabilities are averaged and divided by this before the softmax (the
    /// calibration of the combination); 1 when absent.
    public var combinedTemperature: Float?
    /// In place of `combinedTemperature` when the backbones run in 8 bits (fitted on their 8-bit answers); nil:
    /// `combinedTemperature`.
    public var int8CombinedTemperature: Float?
    /// Free-form facts about how a trained head was made (dataset, metrics, date, seed).
    public var training: [String: String]?
    /// Photos users confirmed (`dedog learn`), one row of each backbone's confirmed-photo tensor per photo.
    /// `memory` in the file's JSON.
    public var confirmedPhotos: [ConfirmedPhoto]?
    /// Where the dogs are (`DogDetector`), on one backbone's feature maps; nil: the model finds no boxes.
    public var detector: DetectorDescription?
    /// A format-8 file's detector: its tensors are accepted, not run (see `CellDetectorDescription`).
    public var legacyDetector: CellDetectorDescription?

    public init(formatVersion: Int = ModelDescription.currentVersion, source: String? = nil,
                backbones: [BackboneDescription], decision: DecisionThresholds = DecisionThresholds(),
                combinedTemperature: Float? = nil, int8CombinedTemperature: Float? = nil, training: [String: String]? = nil,
                confirmedPhotos: [ConfirmedPhoto]? = nil, detector: DetectorDescription? = nil) {
        self.detector = detector
        self.int8CombinedTemperature = int8CombinedTemperature
        self.confirmedPhotos = confirmedPhotos
        self.formatVersion = formatVersion
        self.source = source
        self.backbones = backbones
        self.decision = decision
        self.combinedTemperature = combinedTemperature
        self.training = training
    }

    /// The temperature of the combined breed log-probabilities of features computed at `precision`.
    public func combinedTemperature(for precision: Precision) -> Float {
        (precision == .int8 ? int8CombinedTemperature : nil) ?? combinedTemperature ?? 1
    }

    /// Every field against what the engine and the classifier accept; the first that fails is named.
    func validate(file: String) throws(ModelError) {
        func check(_ ok: Bool, _ field: String, _ value: @autoclosure () -> String, _ requirement: String) throws(ModelError) {
            if !ok { throw .invalidValue(file: file, field: field, value: value(), requirement: requirement) }
        }
        guard (1...Self.currentVersion).contains(formatVersion) else {
            throw .unsupportedVersion(file: file, version: formatVersion, supported: Self.currentVersion)
        }
        try check(Self.backboneCounts.contains(backbones.count), "backbones", "\(backbones.count) backbones",
                  "\(Self.backboneCounts.lowerBound) to \(Self.backboneCounts.upperBound) backbones")
        var prefixes = Set<String>()
        for (b, backbone) in backbones.enumerated() {
            // Format 1 has its one backbone's fields at the top level.
            let at = formatVersion == 1 ? "" : "backbones[\(b)]."
            guard let network = Backbone.named(backbone.architecture) else {
                throw .unsupportedArchitecture(file: file, name: backbone.architecture)
            }
            try check(prefixes.insert(backbone.tensorPrefix).inserted, at + "tensorPrefix", "\"\(backbone.tensorPrefix)\"",
                      "different for each backbone")
            if let problem = backbone.preprocessing.problem {
                throw .invalidValue(file: file, field: at + "preprocessing." + problem.field, value: problem.value,
                                    requirement: problem.requirement)
            }
            try check(backbone.batchNormEpsilon.isFinite && backbone.batchNormEpsilon > 0 && backbone.batchNormEpsilon < 1,
                      at + "batchNormEpsilon", "\(backbone.batchNormEpsilon)", "a positive number below 1")
            guard backbone.imagenetHead != nil || backbone.breedHead != nil else {
                throw .invalidMetadata(file: file, detail: "\(at.isEmpty ? "the model" : "backbones[\(b)]") has no classifier head")
            }
            // Prototypes belong to a breed head; confirmed photos are in every backbone or in none.
            try check(backbone.prototypes == nil || backbone.breedHead != nil, at + "prototypes", "present",
                      "absent without a breed head")
            try check((backbone.confirmedPhotos != nil) == (confirmedPhotos != nil), at + "memory",
                      backbone.confirmedPhotos == nil ? "absent" : "present",
                      confirmedPhotos == nil ? "absent, as the model has no memory" : "present, as the model has memory")
            if let ranges = backbone.activationRanges, let problem = ranges.problem(for: network) {
                throw .invalidValue(file: file, field: at + "int8." + problem.field, value: problem.value,
                                    requirement: problem.requirement)
            }
            if let t = backbone.int8BreedTemperature {
                try check(t.isFinite && t > 0, at + "int8.breedTemperature", "\(t)", "a positive finite number")
            }
            try check(backbone.int8BreedTemperature == nil || backbone.breedHead != nil,
                      at + "int8.breedTemperature", "present", "absent without a breed head")
            for (name, head) in [("imagenetHead", backbone.imagenetHead), ("breedHead", backbone.breedHead)] {
                guard let head else { continue }
                try check(!head.labels.isEmpty, at + name + ".labels", "empty", "at least one label")
                var seen = Set<String>()
                for (i, label) in head.labels.enumerated() {
                    try check(seen.insert(label.key).inserted, "\(at)\(name).labels[\(i)].key", "\"\(label.key)\"",
                              "unique within the head (it names another label already)")
                    try check(!label.key.isEmpty, "\(at)\(name).labels[\(i)].key", "empty", "a non-empty key")
                    if let length = label.taught?.featureLength {
                        try check(name == "breedHead" && length.isFinite && length > 0, "\(at)\(name).labels[\(i)].taught.featureLength",
                                  "\(length)", "a positive finite number, on a breed head's label")
                    }
                }
                if let t = head.temperature {
                    try check(t.isFinite && t > 0, at + name + ".temperature", "\(t)", "a positive finite number")
                }
            }
        }
        // Combined backbones must answer the same question: the same labels in the same order, on all or none.
        if let first = backbones.first {
            for (b, backbone) in backbones.enumerated().dropFirst() {
                for (name, mine, theirs) in [("breedHead", backbone.breedHead, first.breedHead),
                                             ("imagenetHead", backbone.imagenetHead, first.imagenetHead)] {
                    let keys = mine?.labels.map(\.key), expected = theirs?.labels.map(\.key)
                    try check(keys == expected, "backbones[\(b)].\(name)",
                              keys.map { "\($0.count) labels" } ?? "absent",
                              expected.map { "the same \($0.count) labels as backbones[0], in the same order" }
                                  ?? "absent, as in backbones[0]")
                }
            }
        }
        for (name, temperature) in [("combinedTemperature", combinedTemperature), ("int8CombinedTemperature", int8CombinedTemperature)] {
            if let t = temperature { try check(t.isFinite && t > 0, name, "\(t)", "a positive finite number") }
        }
        try check(int8CombinedTemperature == nil || backbones.contains { $0.activationRanges != nil }, "int8CombinedTemperature",
                  "present", "absent when no backbone has activation ranges (int8)")
        // Confirmed photos name the model's breeds.
        let breedKeys = Set(backbones.first?.breedHead?.labels.map(\.key) ?? [])
        for (i, entry) in (confirmedPhotos ?? []).enumerated() {
            try check(breedKeys.contains(entry.label), "memory[\(i)].label", "\"\(entry.label)\"",
                      "one of the breed head's label keys")
        }
        if let problem = decision.cat?.problem(backbones: backbones.count, width: EfficientNetLite.featureCount) {
            throw .invalidValue(file: file, field: "decision.cat." + problem.field, value: problem.value,
                                requirement: problem.requirement)
        }
        if let problem = detector?.problem(backbones: backbones.map(\.architecture)) {
            throw .invalidValue(file: file, field: "detector." + problem.field, value: problem.value,
                                requirement: problem.requirement)
        }
        if let problem = decision.kind?.problem() {
            throw .invalidValue(file: file, field: "decision.kind." + problem.field, value: problem.value, requirement: problem.requirement)
        }
        if let problem = decision.seenDog?.problem() {
            throw .invalidValue(file: file, field: "decision.seenDog." + problem.field, value: problem.value, requirement: problem.requirement)
        }
        if let problem = decision.unknownBreed?.problem() {
            throw .invalidValue(file: file, field: "decision.unknownBreed." + problem.field, value: problem.value,
                                requirement: problem.requirement)
        }
        if let t = decision.otherBreedBelow {
            try check(t.isFinite && (-1...1).contains(t), "decision.otherBreedBelow", "\(t)", "between -1 and 1")
        }
        let vote = decision.breedVote.map { [("breedVote.agreesFrom", $0.agreesFrom), ("breedVote.disagreesBelow", $0.disagreesBelow),
                                             ("breedVote.elsewhereFrom", $0.elsewhereFrom)] } ?? []
        for (field, value) in [("noDogBelow", decision.noDogBelow), ("unsureBelow", decision.unsureBelow),
                               ("unsureMargin", decision.unsureMargin)] + vote {
            try check(value.isFinite && (0...1).contains(value), "decision." + field, "\(value)", "between 0 and 1")
        }
    }

    static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }

    // MARK: Both layouts

    private enum CodingKeys: String, CodingKey {
        case formatVersion, source, backbones, decision, combinedTemperature, int8CombinedTemperature, training,
             confirmedPhotos = "memory", detector
    }

    /// Format 1: one backbone, its fields at the top level.
    private struct Version1: Codable {
        var formatVersion: Int
        var architecture: String
        var source: String?
        var preprocessing: InputDescription
        var batchNormEpsilon: Float
        var imagenetHead: HeadDescription?
        var breedHead: HeadDescription?
        var decision: DecisionThresholds
        var averagesMirror: Bool?
        var training: [String: String]?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .formatVersion)
        if version == 1 {
            let v1 = try Version1(from: decoder)
            self.init(formatVersion: 1, source: v1.source,
                      backbones: [BackboneDescription(architecture: v1.architecture, preprocessing: v1.preprocessing,
                                                      batchNormEpsilon: v1.batchNormEpsilon, imagenetHead: v1.imagenetHead,
                                                      breedHead: v1.breedHead, averagesMirror: v1.averagesMirror)],
                      decision: v1.decision, training: v1.training)
            return
        }
        self.init(formatVersion: version, source: try container.decodeIfPresent(String.self, forKey: .source),
                  backbones: try container.decode([BackboneDescription].self, forKey: .backbones),
                  decision: try container.decode(DecisionThresholds.self, forKey: .decision),
                  combinedTemperature: try container.decodeIfPresent(Float.self, forKey: .combinedTemperature),
                  int8CombinedTemperature: try container.decodeIfPresent(Float.self, forKey: .int8CombinedTemperature),
                  training: try container.decodeIfPresent([String: String].self, forKey: .training),
                  confirmedPhotos: try container.decodeIfPresent([ConfirmedPhoto].self, forKey: .confirmedPhotos))
        // A format-8 detector (it has a `hidden` width) is kept aside; any other is read strictly.
        if version <= 8, let legacy = try? container.decodeIfPresent(CellDetectorDescription.self, forKey: .detector) {
            legacyDetector = legacy
        } else {
            detector = try container.decodeIfPresent(DetectorDescription.self, forKey: .detector)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if formatVersion == 1 {
            guard backbones.count == 1, let b = backbones.first, b.tensorPrefix.isEmpty, combinedTemperature == nil,
                  b.prototypes == nil, b.confirmedPhotos == nil, confirmedPhotos == nil, decision.otherBreedBelow == nil,
                  b.preprocessing.fit == .crop, b.activationRanges == nil, detector == nil else {
                throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription:
                    "format 1 holds exactly one backbone that crops, without a tensor prefix, combined temperature, prototypes or memory"))
            }
            try Version1(formatVersion: 1, architecture: b.architecture, source: source, preprocessing: b.preprocessing,
                         batchNormEpsilon: b.batchNormEpsilon, imagenetHead: b.imagenetHead, breedHead: b.breedHead,
                         decision: decision, averagesMirror: b.averagesMirror, training: training).encode(to: encoder)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encodeIfPresent(source, forKey: .source)
        try container.encode(backbones, forKey: .backbones)
        try container.encode(decision, forKey: .decision)
        try container.encodeIfPresent(combinedTemperature, forKey: .combinedTemperature)
        try container.encodeIfPresent(int8CombinedTemperature, forKey: .int8CombinedTemperature)
        try container.encodeIfPresent(training, forKey: .training)
        try container.encodeIfPresent(confirmedPhotos, forKey: .confirmedPhotos)
        if let detector {
            try container.encode(detector, forKey: .detector)
        } else {
            try container.encodeIfPresent(legacyDetector, forKey: .detector)
        }
    }
}
