import Dedog
import DedogCatalogue
import DedogTestSupport
import Foundation
import Testing

/// What `dedog tag` writes for each kind of answer: the root for every photo with a dog, root/breed for each dog
/// named, a cross as the cross; and which model wrote it.
@Suite struct TaggingTests {
    static let model = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")

    func tagger(_ language: Language = .en, minProbability: Float? = nil) throws -> PhotoTagger {
        try PhotoTagger(modelURL: Self.model, catalogue: try Catalogue.load(nil),
                        settings: TagSettings(language: language, minProbability: minProbability))
    }

    static let beagle = Prediction(key: "n02088364-beagle", name: "beagle", probability: 0.9, breed: "beagle")
    static let golden = Prediction(key: "n02099601-golden_retriever", name: "golden retriever", probability: 0.8,
                                   breed: "golden-retriever")
    static let labradoodle = Prediction(key: "labradoodle", name: "Labradoodle", probability: 0.85, breed: "labradoodle")

    static func answer(_ verdict: Verdict, _ breeds: [Prediction], dogs: [Classification] = []) -> Classification {
        Classification(verdict: verdict, breeds: breeds, dogProbability: verdict == .noDog ? 0.1 : 0.95, dogs: dogs)
    }

    @Test func whatEachAnswerIsTaggedWith() throws {
        let en = try tagger()
        let root = ["Animals", "Dogs"]
        #expect(en.tags(for: Self.answer(.dog, [Self.beagle, Self.golden])) == [root, root + ["Beagle"]])
        #expect(en.tags(for: Self.answer(.dog, [Self.labradoodle])) == [root, root + ["Labradoodle"]])
        #expect(en.tags(for: Self.answer(.unsure, [Self.beagle, Self.golden])) == [root])
        #expect(en.tags(for: Self.answer(.otherBreed, [Self.beagle])) == [root])
        #expect(en.tags(for: Self.answer(.noDog, [Self.beagle])) == [])
        // Two dogs: one tag each; an unsure one counts under the root only.
        let two = Self.answer(.dog, [Self.beagle], dogs: [Self.answer(.dog, [Self.beagle]), Self.answer(.dog, [Self.golden])])
        #expect(en.tags(for: two) == [root, root + ["Beagle"], root + ["Golden Retriever"]])
        let oneSure = Self.answer(.dog, [Self.beagle], dogs: [Self.answer(.dog, [Self.beagle]), Self.answer(.unsure, [Self.golden])])
        #expect(en.tags(for: oneSure) == [root, root + ["Beagle"]])
        // Below --min-probability the dog gets the root alone.
        #expect(try tagger(minProbability: 0.95).tags(for: Self.answer(.dog, [Self.beagle])) == [root])
        // In Czech, the catalogue's Czech names under Zvířata/Psi; a cross without a Czech name keeps its own.
        let cs = try tagger(.cs)
        #expect(cs.tags(for: Self.answer(.dog, [Self.golden])) == [["Zvířata", "Psi"], ["Zvířata", "Psi", "zlatý retriever"]])
        #expect(cs.tags(for: Self.answer(.dog, [Self.labradoodle])) == [["Zvířata", "Psi"], ["Zvířata", "Psi", "Labradoodle"]])
        #expect(TagSettings.root(parsing: " Pets / Dogs ") == ["Pets", "Dogs"])
        #expect(TagSettings.root(parsing: "//") == nil)
    }

    /// A dog whose breed is not named but whose kind is gets root/kind, the kind's catalogue name as a keyword, in the
    /// tags' language; two such dogs of one kind, one tag.
    @Test func anUnnamedBreedIsTaggedWithItsKind() throws {
        func kinded(_ verdict: Verdict, _ kind: BreedKind) -> Classification {
            var answer = Self.answer(verdict, [Self.beagle])
            answer.kind = DogKind(kind: kind, probability: 0.9)
            return answer
        }
        let terriers = BreedKind(group: 3), scent = BreedKind(group: 6, section: "Scent hounds")
        let root = ["Animals", "Dogs"]
        #expect(try tagger().tags(for: kinded(.otherBreed, terriers)) == [root, root + ["Terriers"]])
        #expect(try tagger().tags(for: kinded(.unsure, scent)) == [root, root + ["Scent hounds"]])
        #expect(try tagger(.cs).tags(for: kinded(.otherBreed, terriers)) == [["Zvířata", "Psi"], ["Zvířata", "Psi", "teriéři"]])
        let two = Self.answer(.dog, [Self.beagle], dogs: [kinded(.otherBreed, terriers), kinded(.unsure, terriers), Self.answer(.dog, [Self.golden])])
        #expect(try tagger().tags(for: two) == [root, root + ["Terriers"], root + ["Golden Retriever"]])
        #expect(try tagger().tags(for: kinded(.dog, terriers)) == [root, root + ["Beagle"]], "a named breed is tagged as the breed")
    }

    /// Careful mode is recorded with the writer: a run in the other mode tags the photos again.
    @Test func carefulModeIsAnotherWriter() throws {
        let careful = try PhotoTagger(modelURL: Self.model, catalogue: try Catalogue.load(nil), settings: TagSettings(language: .en, careful: true))
        #expect(careful.writer == (try tagger().writer) + " careful")
    }

    /// The writer recorded in a sidecar names the model file and its content: another file, or one byte changed,
    /// is another writer (and the photos are tagged again).
    @Test func theWriterIsTheModelsContent() throws {
        let writer = try tagger().writer
        #expect(writer.hasPrefix("dedog-breeds-fast.safetensors ") && writer.count == "dedog-breeds-fast.safetensors ".count + 16)
        #expect(try tagger().writer == writer)
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-breeds-fast.safetensors-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        var bytes = try Data(contentsOf: Self.model)
        bytes[bytes.count - 1] ^= 1
        try bytes.write(to: copy)
        let changed = try PhotoTagger(modelURL: copy, catalogue: try Catalogue.load(nil), settings: TagSettings(language: .en))
        #expect(changed.writer.suffix(16) != writer.suffix(16))
    }
}
