import Foundation
import DedogCatalogue
import DedogNN
import DedogBreedModel

/// The JSON object for one photo's answer: what `dedog classify --json` writes per line and what the HTTP API
/// returns, so that scripts read one shape. Every key is always present (null when it does not apply).
///
/// ```json
/// {"file": "rex.jpg", "verdict": "dog", "dogProbability": 0.99, "similarity": 0.81,
///  "breeds": [{"key": "n02088364-beagle", "name": "Beagle", "probability": 0.93, "label": "Beagle", "score": 0.93,
///              "breed": {"id": "beagle", "name": {"en": "Beagle", "cs": "Bígl"}, …}}],
///  "lookalikes": [], "looksLike": null, "location": {"x": 120, "y": 40, "width": 610, "height": 530, "zoomed": false}, "dogs": [],
///  "error": null}
/// ```
/// `looksLike` is null unless the verdict is `noDog`: then what the photo shows instead, `{"kind": "cat", "name": "a cat"}`
/// (kinds `cat`, `animal`, `other`; the name in the answer's language).
/// `kind` is null unless the verdict is `otherBreed` or `unsure` and the model is sure of the kind of dog: then
/// `{"group": 3, "section": null, "name": "Terriers (FCI group 3)", "names": {"en": …, "cs": …}, "probability": 0.91}`
/// (`section` the FCI section's English name when the kind is a section; `name` in the answer's language, `names` in
/// each; `probability` the kind's breeds' share).
/// `dogs` is empty unless the detector finds two or more dogs that their own crops show as dogs: then it holds an answer for each
/// (`location`, `verdict`, `dogProbability`, `breeds`), beside the answer for the whole photo.
/// `location` is the box in the photo's pixels (after its EXIF orientation) where the network saw the top
/// breed; `zoomed` says the answer also comes from a second, closer look at it.
/// `label` and `score` repeat `name` and `probability` under the names Hugging Face image-classification
/// clients read.
public struct ClassificationRecord: Encodable, Sendable {
    public var file: String
    public var result: Classification?
    public var error: String?
    public var catalogue: Catalogue
    public var language: Language

    public init(file: String, result: Classification?, error: String?, catalogue: Catalogue, language: Language) {
        self.file = file
        self.result = result
        self.error = error
        self.catalogue = catalogue
        self.language = language
    }

    enum Keys: String, CodingKey { case file, verdict, dogProbability, similarity, breeds, lookalikes, looksLike, kind, location, dogs, error }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(result?.verdict.rawValue, forKey: .verdict)
        try c.encode(result?.dogProbability, forKey: .dogProbability)
        try c.encode(result?.similarity, forKey: .similarity)
        try c.encode(BreedRecord.all(result?.breeds ?? [], catalogue, language), forKey: .breeds)
        try c.encode(result?.lookalikes ?? [], forKey: .lookalikes)
        try c.encode(result?.looksLike.map { LooksLikeRecord(kind: $0, language: language) }, forKey: .looksLike)
        try c.encode(result?.kind.map { KindRecord(kind: $0, catalogue: catalogue, language: language) }, forKey: .kind)
        try c.encode(result?.location, forKey: .location)
        try c.encode((result?.dogs ?? []).map { DogRecord(answer: $0, catalogue: catalogue, language: language) }, forKey: .dogs)
        try c.encode(error, forKey: .error)
    }

    /// The record as one line of JSON (sorted keys). JSON cannot hold NaN or infinity (a model with absurd
    /// weights can produce them): they are written as the strings "nan", "inf" and "-inf".
    public func json() -> Data {
        (try? Self.encoder.encode(self)) ?? Data(#"{"error":"this result could not be written as JSON"}"#.utf8)
    }

    /// The encoder every front end writes dedog's JSON with.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }
}

/// What a photo without a dog looks like instead: `{"kind": "cat", "name": "a cat"}` (`kind`: cat, animal or other;
/// `name` in the request's language).
struct LooksLikeRecord: Encodable {
    let kind: LooksLike
    let language: Language

    enum Keys: String, CodingKey { case kind, name }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(kind.rawValue, forKey: .kind)
        try c.encode(kind.name(in: language), forKey: .name)
    }
}

extension LooksLike {
    /// How a person says it, after "it looks like" ("vypadá to jako").
    public func name(in language: Language) -> String {
        switch (self, language) {
        case (.cat, .cs): "kočka"
        case (.cat, _): "a cat"
        case (.animal, .cs): "jiné zvíře"
        case (.animal, _): "another animal"
        case (.other, .cs): "něco jiného"
        case (.other, _): "something else"
        }
    }
}

/// The kind of dog said when no breed is: `{"group": 3, "section": null, "name": "Terriers (FCI group 3)",
/// "names": {"en": "Terriers (FCI group 3)", "cs": "teriéři (skupina FCI 3)"}, "probability": 0.91}` (`name` in the
/// answer's language; `names` in each, as a breed's catalogue names are, for a page that changes language).
struct KindRecord: Encodable {
    let kind: DogKind
    let catalogue: Catalogue
    let language: Language

    enum Keys: String, CodingKey { case group, section, name, names, probability }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(kind.kind.group, forKey: .group)
        try c.encode(kind.kind.section, forKey: .section)
        try c.encode(kind.name(catalogue, in: language), forKey: .name)
        try c.encode(Dictionary(uniqueKeysWithValues: Language.allCases.map { ($0.rawValue, kind.name(catalogue, in: $0)) }), forKey: .names)
        try c.encode(kind.probability, forKey: .probability)
    }
}

extension DogKind {
    /// The kind as a person reads it, from the catalogue's words: the section's name, or the group's, with the
    /// group's number ("Terriers (FCI group 3)", "Molossian type (FCI group 2)"; "teriéři (skupina FCI 3)").
    public func name(_ catalogue: Catalogue, in language: Language) -> String {
        catalogueName(catalogue, in: language).map { "\($0) (\(group(in: language)))" } ?? group(in: language)
    }

    /// The kind as a keyword (`dedog tag`): the section's or the group's name alone, as the catalogue writes it in
    /// `language` ("Terriers", "teriéři"; breeds' names are keywords the same way).
    public func keyword(_ catalogue: Catalogue, in language: Language) -> String {
        catalogueName(catalogue, in: language) ?? group(in: language)
    }

    /// The section's name, else the group's, in the catalogue's words; nil when the catalogue has neither.
    private func catalogueName(_ catalogue: Catalogue, in language: Language) -> String? {
        kind.section.map { catalogue.term($0, in: language) } ?? catalogue.groupName(kind.group, in: language)
    }

    /// "FCI group 3", "skupina FCI 3".
    private func group(in language: Language) -> String {
        language == .cs ? "skupina FCI \(kind.group)" : "FCI group \(kind.group)"
    }
}

/// One dog's answer in a photo of several: its box, verdict, breeds and kind.
struct DogRecord: Encodable {
    let answer: Classification
    let catalogue: Catalogue
    let language: Language

    enum Keys: String, CodingKey { case location, verdict, dogProbability, breeds, kind }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(answer.location, forKey: .location)
        try c.encode(answer.verdict.rawValue, forKey: .verdict)
        try c.encode(answer.dogProbability, forKey: .dogProbability)
        try c.encode(BreedRecord.all(answer.breeds, catalogue, language), forKey: .breeds)
        try c.encode(answer.kind.map { KindRecord(kind: $0, catalogue: catalogue, language: language) }, forKey: .kind)
    }
}

/// A ranked breed with its catalogue details (null when the catalogue has no entry for the label).
struct BreedRecord: Encodable {
    let prediction: Prediction
    let breed: Breed?
    let language: Language

    /// The records of ranked breeds, each with its catalogue entry.
    static func all(_ predictions: [Prediction], _ catalogue: Catalogue, _ language: Language) -> [BreedRecord] {
        predictions.map { BreedRecord(prediction: $0, breed: catalogue.details($0), language: language) }
    }

    enum Keys: String, CodingKey { case key, name, probability, label, score, breed }
    enum BreedKeys: String, CodingKey { case id, name, size, weight, lifeSpan, origin, fci, cross }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        let name = breed?.name(in: language) ?? prediction.name
        try c.encode(prediction.key, forKey: .key)
        try c.encode(name, forKey: .name)
        try c.encode(prediction.probability, forKey: .probability)
        try c.encode(name, forKey: .label)
        try c.encode(prediction.probability, forKey: .score)
        if let breed {
            var b = c.nestedContainer(keyedBy: BreedKeys.self, forKey: .breed)
            try b.encode(breed.id, forKey: .id)
            try b.encode(breed.name, forKey: .name)
            try b.encode(breed.size, forKey: .size)
            try b.encode(breed.weight, forKey: .weight)
            try b.encode(breed.lifeSpan, forKey: .lifeSpan)
            try b.encode(breed.origin, forKey: .origin)
            try b.encode(breed.fci?.number, forKey: .fci)
            // Only for a cross: what it is a cross of, in the answer's language.
            try b.encodeIfPresent(breed.crossDescription(in: language), forKey: .cross)
        } else {
            try c.encodeNil(forKey: .breed)
        }
    }
}

extension Catalogue {
    /// The catalogue entry for a prediction: by the breed id its model gave it, else by its label key.
    public func details(_ p: Prediction) -> Breed? {
        breed(id: p.breed, label: p.key)
    }
}
