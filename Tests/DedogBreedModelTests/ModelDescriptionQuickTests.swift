import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// A load reads a model's description without `Codable` when it can (`ModelDescription.quickly`) and with it
/// otherwise: the two must agree wherever the quick reading answers, and it must answer for every bundled model.
@Suite struct ModelDescriptionQuickTests {
    static let bundled = ["dedog-breeds", "dedog-breeds-fast", "efficientnet-lite0-imagenet", "efficientnet-lite1-imagenet",
                          "efficientnet-lite2-imagenet"]

    static func json(_ name: String) throws -> String {
        let url = SharedData.packageRoot.appendingPathComponent("models/\(name).safetensors")
        return try #require(SafeTensors(contentsOf: url).metadata[ModelDescription.metadataKey])
    }

    static func codable(_ json: String) -> ModelDescription? {
        try? JSONDecoder().decode(ModelDescription.self, from: Data(json.utf8))
    }

    @Test(arguments: bundled)
    func readsEveryBundledModelAsCodableDoes(_ name: String) throws {
        let json = try Self.json(name)
        let quick = try #require(ModelDescription.quickly(json), "\(name): the quick reading gave up")
        // Compared, not printed: a description holds a thousand labels.
        if quick != Self.codable(json) { Issue.record("\(name): the quick and Codable readings differ") }
    }

    /// The fast model's description altered one way at a time (JSON objects edited with `JSONSerialization`).
    static let alterations: [(String, Bool, @Sendable (inout [String: Any]) -> Void)] = [
        ("an unknown key", true, { $0["future"] = ["x": 1] }),
        ("a float written as an integer", true, { d in edit(&d) { $0["batchNormEpsilon"] = 1 } }),
        ("an optional field null", true, { $0["source"] = NSNull() }),
        ("no decision", false, { $0["decision"] = nil }),
        ("a required field null", false, { d in edit(&d) { $0["tensorPrefix"] = NSNull() } }),
        ("a number as a string", false, { d in edit(&d) { $0["batchNormEpsilon"] = "0.001" } }),
        ("an integer with a fraction", false, { d in edit(&d) { p in
            var pre = p["preprocessing"] as! [String: Any]; pre["cropSize"] = 224.5; p["preprocessing"] = pre } }),
        ("an unknown fit", false, { d in edit(&d) { p in
            var pre = p["preprocessing"] as! [String: Any]; pre["fit"] = "zoom"; p["preprocessing"] = pre } }),
        ("a label without isDog", false, { d in edit(&d) { p in
            var head = p["breedHead"] as! [String: Any]; var labels = head["labels"] as! [[String: Any]]
            labels[0]["isDog"] = nil; head["labels"] = labels; p["breedHead"] = head } }),
        ("a range that is not a number", false, { d in edit(&d) { p in
            var int8 = p["int8"] as! [String: Any]; var ranges = int8["ranges"] as! [String: Any]
            ranges["stem"] = [0, "6"]; int8["ranges"] = ranges; p["int8"] = int8 } }),
        ("format 1", false, { $0["formatVersion"] = 1 }),
    ]

    /// Applies `change` to the first backbone.
    static func edit(_ d: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        var backbones = d["backbones"] as! [[String: Any]]
        change(&backbones[0])
        d["backbones"] = backbones
    }

    @Test func agreesWithCodableWhereverItAnswers() throws {
        let original = try JSONSerialization.jsonObject(with: Data(Self.json("dedog-breeds-fast").utf8)) as! [String: Any]
        for (name, answers, change) in Self.alterations {
            var d = original
            change(&d)
            let json = String(decoding: try JSONSerialization.data(withJSONObject: d), as: UTF8.self)
            let quick = ModelDescription.quickly(json)
            #expect((quick != nil) == answers, "\(name): the quick reading \(quick == nil ? "gave up" : "answered")")
            if let quick, quick != Self.codable(json) { Issue.record("\(name): the quick and Codable readings differ") }
        }
    }

    /// A description that gives every field a value: every optional present, every list non-empty, a backbone
    /// with both heads, prototypes, confirmed photos and 8-bit ranges with their temperature.
    static var everyField: ModelDescription {
        let labels = [Label(key: "n0-a", name: "A", isDog: true, breed: "a", imagenetKeys: ["n1"], taught: Taught(featureLength: 20),
                            kind: BreedKind(group: 3, section: "Small sized Terriers")),
                      Label(key: "n0-b", name: "B", isDog: true, breed: "b", imagenetKeys: ["n2"], taught: Taught(featureLength: 21.5),
                            kind: BreedKind(group: 6, section: "Scent hounds"))]
        let head = HeadDescription(weight: "w", bias: "b", labels: labels, temperature: 1.5)
        let ranges = ActivationRanges(photos: 3, method: "min-max", ranges: ["stem": [0, 6]])
        let backbone = BackboneDescription(architecture: "efficientnet-lite0", tensorPrefix: "lite0.",
                                           preprocessing: InputDescription(resizeShorterSide: 256, cropSize: 224, mean: [1, 2, 3],
                                                                           std: [4, 5, 6], fit: .pad),
                                           batchNormEpsilon: 1e-3, imagenetHead: head, breedHead: head, averagesMirror: true,
                                           prototypes: "p", confirmedPhotos: "m", activationRanges: ranges,
                                           int8BreedTemperature: 0.9)
        let unknown = UnknownBreedRule(signals: [.p1, .cosine], mean: [0.5, 0.6], scale: [0.2, 0.1], weights: [1, 2],
                                       bias: 0.1, below: -1, carefulBelow: -0.5)
        let cat = CatRule(weights: [[0.5, -0.25]], bias: 0.125, from: -0.5)
        return ModelDescription(formatVersion: 9, source: "s", backbones: [backbone],
                                decision: DecisionThresholds(noDogBelow: 0.3, unsureBelow: 0.45, unsureMargin: 0.15,
                                                             otherBreedBelow: 0.5, breedVote: BreedVote(), unknownBreed: unknown,
                                                             cat: cat, kind: KindRule(groupFrom: 0.7, sectionFrom: 0.6),
                                                             seenDog: SeenDogRule(detectorFrom: 0.4, breedFrom: 0.9, dogShareFrom: 0.2)),
                                combinedTemperature: 1.1, int8CombinedTemperature: 1.2, training: ["k": "v"],
                                confirmedPhotos: [ConfirmedPhoto(label: "n0-a", photo: "x.jpg", fingerprint: "f", added: "t")],
                                detector: DetectorDescription(backbone: 0, architecture: backbone.architecture, channels: 16, blocks: 2,
                                                              tensorPrefix: "d.", threshold: 0.3, apartThreshold: 0.2, overlap: 0.5,
                                                              inside: 0.8))
    }

    /// A field added to the description's types fails here until `everyField` gives it a value, and then until the
    /// quick reader reads it: the fixture written by `Codable` and read back both ways must come out the same.
    @Test func theQuickReaderReadsEveryField() throws {
        let json = String(decoding: try JSONEncoder().encode(Self.everyField), as: UTF8.self)
        let codable = try #require(Self.codable(json))
        // A file has a detector or a format-8 one, never both: the format-8 one is checked below.
        let empty = EmptyFields.paths(in: codable, path: "description").filter { $0 != "description.legacyDetector" }
        #expect(empty.isEmpty, "give these a value in `everyField`: \(empty)")
        #expect(codable == Self.everyField, "Codable itself loses a field")
        let quick = try #require(ModelDescription.quickly(json), "the quick reader gave up on `everyField`")
        #expect(quick == codable, "the quick reader drops or changes a field")
    }

    /// A format-8 file's detector (a 1×1 head, `hidden` wide) is read both ways as `legacyDetector`, and written back.
    @Test func aFormat8DetectorIsReadBothWays() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.everyField)) as? [String: Any])
        object["formatVersion"] = 8
        object["detector"] = ["backbone": 0, "hidden": 128, "tensorPrefix": "detector.", "threshold": 0.66, "apartThreshold": 0.28,
                              "overlap": 0.4, "inside": 0.7]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let codable = try #require(Self.codable(json))
        #expect(codable.detector == nil && codable.legacyDetector?.hidden == 128)
        #expect(ModelDescription.quickly(json) == codable)
        let again = String(decoding: try JSONEncoder().encode(codable), as: UTF8.self)
        #expect(Self.codable(again) == codable, "written back, it reads the same")
    }
}
