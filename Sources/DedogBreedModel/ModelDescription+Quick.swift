import DedogFiles
import DedogNN

// The model description read straight from parsed JSON, without `Codable`: a load is on the way to every answer,
// and `JSONDecoder` took 4–6 ms of a whole process on a description (in a fresh process most of that is the Swift
// runtime finding the generic types and conformances decoding needs, once each); this takes well under one.
// It reads only what it can read exactly as `Codable` would: a required field missing, a value of another type, an
// integer written with a fraction, a format-1 description or anything else unusual gives nil, and the load decodes
// the description with `Codable`, whose errors name the field. Unknown keys are ignored, as `Codable` ignores them.
// `ModelDescriptionQuickTests` checks that both read every bundled model and a set of altered descriptions alike.

extension ModelDescription {
    /// The description in `json` read the quick way; nil where that leaves the reading to `Codable`.
    @_spi(Testing) public static func quickly(_ json: String) -> ModelDescription? {
        let bytes = Array(json.utf8)
        let parsed = try? bytes.withUnsafeBytes { raw in Result { () throws(JSONError) in try JSONValue.parse(raw) } }.get()
        return parsed.flatMap(ModelDescription.init(quickly:))
    }

    init?(quickly value: JSONValue) {
        guard let o = value.object, let version = o["formatVersion"]?.int, version >= 2,
              let backbones = o["backbones"]?.list(BackboneDescription.init(quickly:)),
              let decision = o["decision"].flatMap(DecisionThresholds.init(quickly:)),
              let source = JSONValue.optional(o["source"], \.string),
              let combined = JSONValue.optional(o["combinedTemperature"], \.float),
              let int8Combined = JSONValue.optional(o["int8CombinedTemperature"], \.float),
              let training = JSONValue.optional(o["training"], { $0.map(\.string) }),
              let photos = JSONValue.optional(o["memory"], { $0.list(ConfirmedPhoto.init(quickly:)) }),
              let detector = Self.detectors(o["detector"], version: version) else { return nil }
        self.init(formatVersion: version, source: source, backbones: backbones, decision: decision,
                  combinedTemperature: combined, int8CombinedTemperature: int8Combined, training: training,
                  confirmedPhotos: photos, detector: detector.current)
        legacyDetector = detector.legacy
    }

    /// The detector of a file of format `version`: a format-8 one as `legacyDetector`; nil when it cannot be read.
    private static func detectors(_ value: JSONValue?, version: Int)
        -> (current: DetectorDescription?, legacy: CellDetectorDescription?)? {
        if version <= 8, let legacy = JSONValue.optional(value, CellDetectorDescription.init(quickly:)) { return (nil, legacy) }
        return JSONValue.optional(value, DetectorDescription.init(quickly:)).map { ($0, nil) }
    }
}

extension BackboneDescription {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let architecture = o["architecture"]?.string, let prefix = o["tensorPrefix"]?.string,
              let preprocessing = o["preprocessing"].flatMap(InputDescription.init(quickly:)),
              let epsilon = o["batchNormEpsilon"]?.float,
              let imagenet = JSONValue.optional(o["imagenetHead"], HeadDescription.init(quickly:)),
              let breed = JSONValue.optional(o["breedHead"], HeadDescription.init(quickly:)),
              let mirror = JSONValue.optional(o["averagesMirror"], \.bool), let prototypes = JSONValue.optional(o["prototypes"], \.string),
              let memory = JSONValue.optional(o["memory"], \.string), let ranges = JSONValue.optional(o["int8"], ActivationRanges.init(quickly:)),
              let temperature = JSONValue.optional(o["int8"]?.object?["breedTemperature"], \.float)
        else { return nil }
        self.init(architecture: architecture, tensorPrefix: prefix, preprocessing: preprocessing, batchNormEpsilon: epsilon,
                  imagenetHead: imagenet, breedHead: breed, averagesMirror: mirror, prototypes: prototypes,
                  confirmedPhotos: memory, activationRanges: ranges, int8BreedTemperature: temperature)
    }
}

extension InputDescription {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let resize = o["resizeShorterSide"]?.int, let crop = o["cropSize"]?.int,
              let mean = o["mean"]?.list(\.float), let std = o["std"]?.list(\.float),
              let fit = JSONValue.optional(o["fit"], { $0.string.flatMap(Fit.init(rawValue:)) }) else { return nil }
        self.init(resizeShorterSide: resize, cropSize: crop, mean: mean, std: std, fit: fit ?? .crop)
    }
}

extension HeadDescription {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let weight = o["weight"]?.string, let bias = o["bias"]?.string,
              let labels = o["labels"]?.list(Label.init(quickly:)),
              let temperature = JSONValue.optional(o["temperature"], \.float) else { return nil }
        self.init(weight: weight, bias: bias, labels: labels, temperature: temperature)
    }
}

extension Label {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let key = o["key"]?.string, let name = o["name"]?.string, let isDog = o["isDog"]?.bool,
              let breed = JSONValue.optional(o["breed"], \.string),
              let keys = JSONValue.optional(o["imagenetKeys"], { $0.list(\.string) }),
              let taught = JSONValue.optional(o["taught"], Taught.init(quickly:)),
              let kind = JSONValue.optional(o["kind"], BreedKind.init(quickly:)) else { return nil }
        self.init(key: key, name: name, isDog: isDog, breed: breed, imagenetKeys: keys, taught: taught, kind: kind)
    }
}

extension Taught {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let length = o["featureLength"]?.float else { return nil }
        self.init(featureLength: length)
    }
}

extension DecisionThresholds {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let noDog = o["noDogBelow"]?.float, let unsure = o["unsureBelow"]?.float,
              let margin = o["unsureMargin"]?.float, let other = JSONValue.optional(o["otherBreedBelow"], \.float),
              let vote = JSONValue.optional(o["breedVote"], BreedVote.init(quickly:)),
              let unknown = JSONValue.optional(o["unknownBreed"], UnknownBreedRule.init(quickly:)),
              let cat = JSONValue.optional(o["cat"], CatRule.init(quickly:)),
              let kind = JSONValue.optional(o["kind"], KindRule.init(quickly:)),
              let seen = JSONValue.optional(o["seenDog"], SeenDogRule.init(quickly:)) else { return nil }
        self.init(noDogBelow: noDog, unsureBelow: unsure, unsureMargin: margin, otherBreedBelow: other, breedVote: vote,
                  unknownBreed: unknown, cat: cat, kind: kind, seenDog: seen)
    }
}

extension SeenDogRule {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let detector = o["detectorFrom"]?.float, let breed = o["breedFrom"]?.float,
              let share = o["dogShareFrom"]?.float else { return nil }
        self.init(detectorFrom: detector, breedFrom: breed, dogShareFrom: share)
    }
}

extension KindRule {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let group = o["groupFrom"]?.float,
              let section = JSONValue.optional(o["sectionFrom"], \.float) else { return nil }
        self.init(groupFrom: group, sectionFrom: section)
    }
}

extension BreedKind {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let group = o["group"]?.int, let section = JSONValue.optional(o["section"], \.string) else { return nil }
        self.init(group: group, section: section)
    }
}

extension UnknownBreedRule {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let signals = o["signals"]?.list({ $0.string.flatMap(Signal.init(rawValue:)) }),
              let mean = o["mean"]?.list(\.float), let scale = o["scale"]?.list(\.float), let weights = o["weights"]?.list(\.float),
              let bias = o["bias"]?.float, let below = o["below"]?.float,
              let careful = JSONValue.optional(o["carefulBelow"], \.float) else { return nil }
        self.init(signals: signals, mean: mean, scale: scale, weights: weights, bias: bias, below: below, carefulBelow: careful)
    }
}

extension CatRule {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let weights = o["weights"]?.list({ $0.list(\.float) }), let bias = o["bias"]?.float,
              let from = o["from"]?.float else { return nil }
        self.init(weights: weights, bias: bias, from: from)
    }
}

extension BreedVote {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let agrees = o["agreesFrom"]?.float, let disagrees = o["disagreesBelow"]?.float,
              let elsewhere = o["elsewhereFrom"]?.float else { return nil }
        self.init(agreesFrom: agrees, disagreesBelow: disagrees, elsewhereFrom: elsewhere)
    }
}

extension ConfirmedPhoto {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let label = o["label"]?.string, let photo = o["photo"]?.string,
              let fingerprint = o["fingerprint"]?.string, let added = o["added"]?.string else { return nil }
        self.init(label: label, photo: photo, fingerprint: fingerprint, added: added)
    }
}

extension ActivationRanges {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let photos = o["photos"]?.int, let method = o["method"]?.string,
              let ranges = o["ranges"]?.map({ $0.list(\.float) }) else { return nil }
        self.init(photos: photos, method: method, ranges: ranges)
    }
}
