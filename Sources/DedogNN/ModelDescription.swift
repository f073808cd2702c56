import Foundation

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

    public init(key: String, name: String, isDog: Bool, breed: String? = nil, imagenetKeys: [String]? = nil) {
        self.key = key
        self.name = name
        self.isDog = isDog
        self.breed = breed
        self.imagenetKeys = imagenetKeys
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

/// When a photo counts as showing no dog, and when the model is unsure. See `Classifier` for how they are used.
public struct DecisionThresholds: Codable, Sendable, Equatable {
    /// "No dog" when the ImageNet head puts less than this probability mass on dog classes.
    public var noDogBelow: Float
    /// "Unsure" when the top breed's probability is below this …
    public var unsureBelow: Float
    /// … or when it leads the second breed by less than this.
    public var unsureMargin: Float
    /// "Not one of my breeds" when the photo's features are less similar than this (cosine) to the top breed's
    /// own photos (its prototype, or one of the model's confirmed photos). Set by training, from how similar
    /// held-out photos of the model's own breeds are; nil when the model has no prototypes.
    public var otherBreedBelow: Float?
    /// With `otherBreedBelow`: the ImageNet head's word on the top breed, when it knows that breed. Nil in files
    /// written before it (their "other breed" rests on the similarity alone).
    public var breedVote: BreedVote?

    public init(noDogBelow: Float = 0.5, unsureBelow: Float = 0.45, unsureMargin: Float = 0.15,
                otherBreedBelow: Float? = nil, breedVote: BreedVote? = nil) {
        self.noDogBelow = noDogBelow
        self.unsureBelow = unsureBelow
        self.unsureMargin = unsureMargin
        self.otherBreedBelow = otherBreedBelow
        self.breedVote = breedVote
    }
}

/// The pretrained ImageNet head's word on whether a photo shows one of the model's breeds. A model trained on a
/// few photos a breed judges "another breed" by similarity to those few photos, which real photos taken
/// otherwise fall short of; the ImageNet head has seen about a thousand photos of each of 118 breeds. Where it
/// knows the top breed (`Label.imagenetKeys`), it overrules the similarity both ways:
/// - a photo to whose top breed it gives at least `agreesFrom` of its dog mass is not another breed;
/// - a photo to whose top breed it gives less than `disagreesBelow` while it gives at least `elsewhereFrom` to
///   one dog class outside the model's breeds is another breed.
///
/// Chosen on made-up "real photo" check sets from the Stanford Dogs train split (4-breed models from 3, 10 and
/// 30 framed, recoloured, blurred and recompressed photos a breed, checked on 20 other photos of each and 10 of
/// each of 16 other breeds; README "Not one of my breeds").
public struct BreedVote: Codable, Sendable, Equatable {
    public var agreesFrom: Float
    public var disagreesBelow: Float
    public var elsewhereFrom: Float

    public init(agreesFrom: Float = 0.1, disagreesBelow: Float = 0.05, elsewhereFrom: Float = 0.5) {
        self.agreesFrom = agreesFrom
        self.disagreesBelow = disagreesBelow
        self.elsewhereFrom = elsewhereFrom
    }
}

/// What the ImageNet head says of one photo's breed, as shares of its dog mass: on the top breed (its labels for
/// that breed together), and on the one dog class outside the model's breeds it believes most.
public struct ImageNetShares: Sendable, Equatable {
    public var topBreed: Float
    public var elsewhere: Float

    public init(topBreed: Float, elsewhere: Float) {
        self.topBreed = topBreed
        self.elsewhere = elsewhere
    }
}

/// What the classifier concludes about a photo.
public enum Verdict: String, Sendable, Codable {
    /// A dog, and the top breed is clearly ahead.
    case dog
    /// Probably a dog, but the top breeds are too close (or too weak) to name one.
    case unsure
    /// The photo probably shows no dog.
    case noDog
    /// A dog, but none of the breeds the model knows: it looks less like any of them than their own photos do.
    case otherBreed
}

extension DecisionThresholds {
    /// The verdict for a photo whose dog probability is `dogProbability` (nil when the model cannot judge it) and
    /// whose two most probable breeds have `top` and `second`; `similarity` is how like its own photos the top
    /// breed the photo is (nil when the model cannot tell), `imagenet` what the ImageNet head says of the top
    /// breed (nil when it does not know it; see `BreedVote`).
    public func verdict(dogProbability: Float?, top: Float, second: Float, similarity: Float? = nil,
                        imagenet: ImageNetShares? = nil) -> Verdict {
        if let dog = dogProbability, dog < noDogBelow { return .noDog }
        if let below = otherBreedBelow {
            var other = similarity.map { $0 < below } ?? false
            if let vote = breedVote, let imagenet {
                if imagenet.topBreed >= vote.agreesFrom {
                    other = false
                } else if imagenet.topBreed < vote.disagreesBelow && imagenet.elsewhere >= vote.elsewhereFrom {
                    other = true
                }
            }
            if other { return .otherBreed }
        }
        if top < unsureBelow || top - second < unsureMargin { return .unsure }
        return .dog
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

    /// The breed head's temperature for features computed at `precision`: at int8, the 8-bit one where there is
    /// one (a backbone without activation ranges runs in floats anyway).
    public func breedTemperature(for precision: Precision) -> Float {
        (precision == .int8 ? activationRanges?.breedTemperature : nil) ?? breedHead?.temperature ?? 1
    }

    private enum CodingKeys: String, CodingKey {
        case architecture, tensorPrefix, preprocessing, batchNormEpsilon, imagenetHead, breedHead, averagesMirror,
             prototypes, confirmedPhotos = "memory", activationRanges = "int8"
    }

    public init(architecture: String = "efficientnet-lite0", tensorPrefix: String = "",
                preprocessing: InputDescription = InputDescription(), batchNormEpsilon: Float = 1e-3,
                imagenetHead: HeadDescription?, breedHead: HeadDescription?, averagesMirror: Bool? = nil,
                prototypes: String? = nil, confirmedPhotos: String? = nil, activationRanges: ActivationRanges? = nil) {
        self.activationRanges = activationRanges
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
    /// (`ActivationRanges.breedTemperature`, `int8CombinedTemperature`). Files are written in the oldest format that
    /// holds them (`ModelFile` sets the version), so a dedog that cannot honour a field refuses the file.
    public static let currentVersion = 5
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

    public init(formatVersion: Int = ModelDescription.currentVersion, source: String? = nil,
                backbones: [BackboneDescription], decision: DecisionThresholds = DecisionThresholds(),
                combinedTemperature: Float? = nil, int8CombinedTemperature: Float? = nil, training: [String: String]? = nil,
                confirmedPhotos: [ConfirmedPhoto]? = nil) {
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
            try check(backbone.activationRanges?.breedTemperature == nil || backbone.breedHead != nil,
                      at + "int8.breedTemperature", "present", "absent without a breed head")
            for (name, head) in [("imagenetHead", backbone.imagenetHead), ("breedHead", backbone.breedHead)] {
                guard let head else { continue }
                try check(!head.labels.isEmpty, at + name + ".labels", "empty", "at least one label")
                var seen = Set<String>()
                for (i, label) in head.labels.enumerated() {
                    try check(seen.insert(label.key).inserted, "\(at)\(name).labels[\(i)].key", "\"\(label.key)\"",
                              "unique within the head (it names another label already)")
                    try check(!label.key.isEmpty, "\(at)\(name).labels[\(i)].key", "empty", "a non-empty key")
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
             confirmedPhotos = "memory"
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
    }

    public func encode(to encoder: any Encoder) throws {
        if formatVersion == 1 {
            guard backbones.count == 1, let b = backbones.first, b.tensorPrefix.isEmpty, combinedTemperature == nil,
                  b.prototypes == nil, b.confirmedPhotos == nil, confirmedPhotos == nil, decision.otherBreedBelow == nil,
                  b.preprocessing.fit == .crop, b.activationRanges == nil else {
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
    }
}
