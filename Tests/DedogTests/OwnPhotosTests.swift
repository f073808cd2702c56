@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogNN
import DedogBreedModel
import DedogTestSupport
import DedogTrain
import Foundation
import Testing

/// A model trained on a few photos of two "breeds" (the synthetic discs and stripes): it tells a third kind
/// (checks) as none of its breeds, learns confirmed photos at once, forgets them exactly, and keeps them when
/// trained again.
@Suite(.serialized) struct OwnPhotosTests {
    static let base = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")

    /// Trains on discs and stripes; checks are moved out of the dataset to `others`.
    func trained(_ name: String) throws -> (data: SyntheticDataset, model: URL, others: [URL]) {
        let data = try SyntheticDataset(name: name)
        let others = data.root.deletingLastPathComponent().appendingPathComponent("dedog-others-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: others)
        try FileManager.default.moveItem(at: data.root.appendingPathComponent("checks"), to: others)
        var config = TrainConfiguration(dataset: data.root, baseModel: Self.base, output: data.root.appendingPathComponent("m.safetensors"))
        config.cacheRoot = data.root.appendingPathComponent(".cache")
        config.threads = 2
        config.options.epochs = 20
        config.options.learningRate = 1e-2
        _ = try Trainer.run(config)
        let photos = try FileManager.default.contentsOfDirectory(at: others, includingPropertiesForKeys: nil)
            .sorted { $0.path < $1.path }
        return (data, config.output, photos)
    }

    /// Synthetic pictures are no dogs; the model file is written again with its no-dog threshold at 0, so that it
    /// learns them as confirmed photos (a photo without a dog is refused).
    func acceptingSyntheticDogs(_ url: URL) throws {
        let file = try SafeTensors(contentsOf: url)
        var description = try ModelDescription(from: file)
        description.decision.noDogBelow = 0
        try ModelFile.replacingDescription(of: file, with: description, to: url)
    }

    /// Synthetic pictures are no dogs; the no-dog verdict is set aside to see the breed verdicts.
    func classifier(_ url: URL) throws -> Classifier {
        var decision = try Model(contentsOf: url).specification.decision
        decision.noDogBelow = 0
        return try Classifier(modelURL: url, configuration: .overriding(threadsPerWorker: 2, decision: decision))
    }

    @Test func anotherKindIsNoneOfItsBreeds() throws {
        let (data, model, others) = try trained("open-set")
        defer { data.remove(); try? FileManager.default.removeItem(at: others[0].deletingLastPathComponent()) }
        let classifier = try classifier(model)
        let verdicts = try others.map { try classifier.classify(contentsOf: $0).verdict }
        #expect(verdicts.filter { $0 == .otherBreed }.count >= 7, "\(verdicts)")
        let own = try ["discs", "stripes"].flatMap { kind in
            try (0..<8).map { try classifier.classify(contentsOf: data.root.appendingPathComponent("\(kind)/\($0).png")).verdict }
        }
        #expect(own.filter { $0 == .otherBreed }.count <= 2, "\(own)")

        // Evaluating on a dataset with a folder the model does not know counts those photos apart.
        try FileManager.default.copyItem(at: others[0].deletingLastPathComponent(), to: data.root.appendingPathComponent("checks"))
        let report = try Evaluator.run(model: model, dataset: data.root, split: nil, cacheRoot: nil, threads: 2, timing: false)
        #expect(report.samples == 16)
        #expect(report.otherBreeds?.total == 8)
    }

    @Test func confirmedPhotosChangeTheAnswerAndForgettingRestoresIt() throws {
        let (data, model, others) = try trained("memory")
        defer { data.remove(); try? FileManager.default.removeItem(at: others[0].deletingLastPathComponent()) }
        try acceptingSyntheticDogs(model)
        let photo = others[0]
        let before = try classifier(model).classify(contentsOf: photo, top: 2)
        let wrong = before.breeds[0].key == "discs" ? "stripes" : "discs"

        let report = try Confirmations.learn(photos: [photo], breed: wrong, model: model, catalogue: nil)
        #expect(report.photos.map(\.added) == [true])
        #expect(report.confirmedCount == 1)
        let after = try classifier(model).classify(contentsOf: photo, top: 2)
        #expect(after.breeds[0].key == wrong, "learned: \(after.breeds)")
        #expect(after.verdict != .otherBreed, "a confirmed photo is one of its breeds")
        #expect(try Confirmations.learn(photos: [photo], breed: wrong, model: model, catalogue: nil).photos.map(\.added) == [false])

        #expect(throws: ClassifierError.unknownBreed(name: "beagle", known: ["discs", "stripes"])) {
            try Confirmations.learn(photos: [photo], breed: "beagle", model: model, catalogue: nil)
        }

        // Trained again from this model: the heads continue, and the confirmed photo is kept.
        var config = TrainConfiguration(dataset: data.root, baseModels: [model], output: data.root.appendingPathComponent("again.safetensors"))
        config.cacheRoot = data.root.appendingPathComponent(".cache")
        config.options.epochs = 20
        config.options.learningRate = 1e-2
        let again = try Trainer.run(config)
        #expect(again.resumedClasses == 2)
        #expect(again.confirmedPhotosKept == 1)
        #expect(again.featuresComputed == 0, "the same photos, from the cache")
        #expect(try Confirmations.photos(model: config.output).map(\.label) == [wrong])

        let forgot = try Confirmations.forget(photos: [photo], breed: nil, model: model, catalogue: nil)
        #expect(forgot.removed.count == 1 && forgot.confirmedCount == 0)
        let restored = try classifier(model).classify(contentsOf: photo, top: 2)
        #expect(restored == before, "forgetting gives back exactly the answer from before")
        #expect(try Model(contentsOf: model).specification.confirmedPhotos == nil)
    }

    /// A kind the model lacks (checks), taught from 3 photos: named from then on for most of its other photos, the
    /// trained kinds' answers unchanged; more photos refine it; `train --resume` keeps it; forgetting its photos
    /// takes it out and gives back exactly the answers from before.
    @Test func aBreedTaughtFromPhotosIsNamedKeptByResumeAndForgotten() throws {
        let (data, model, checks) = try trained("teach")
        defer { data.remove(); try? FileManager.default.removeItem(at: checks[0].deletingLastPathComponent()) }
        try acceptingSyntheticDogs(model)
        let own = try ["discs", "stripes"].flatMap { kind in (0..<8).map { data.root.appendingPathComponent("\(kind)/\($0).png") } }
        let photos = own + checks
        let before = try photos.map { try classifier(model).classify(contentsOf: $0, top: 2) }

        #expect(throws: ClassifierError.unknownBreed(name: "checks", known: ["discs", "stripes"]), "a new name must be said so") {
            try Confirmations.learn(photos: Array(checks.prefix(3)), breed: "checks", model: model, catalogue: nil)
        }
        let report = try Confirmations.learn(photos: Array(checks.prefix(3)), breed: "checks", model: model, catalogue: nil,
                                             allowingNewName: true)
        #expect(report.taughtNewBreed && report.label.taught && report.label.key == "checks")
        #expect(report.photos.map(\.added) == [true, true, true] && report.confirmedCount == 3)
        let taught = try Model(contentsOf: model)
        #expect(taught.breedLabels?.map(\.key) == ["discs", "stripes", "checks"])
        #expect(taught.specification.formatVersion == 6)
        let answers = try photos.map { try classifier(model).classify(contentsOf: $0, top: 2) }
        let rest = answers[(own.count + 3)...]
        #expect(rest.filter { $0.breeds.first?.key == "checks" }.count * 10 >= rest.count * 6, "\(rest.map { $0.breeds.first?.key ?? "" })")
        #expect(zip(before.prefix(own.count), answers.prefix(own.count)).allSatisfy { $0.breeds.first?.key == $1.breeds.first?.key },
                "the trained kinds keep their answers")

        // More photos of it: the same breed, made again from all four.
        let more = try Confirmations.learn(photos: [checks[3]], breed: "checks", model: model, catalogue: nil)
        #expect(!more.taughtNewBreed && more.label.taught && more.confirmedCount == 4)
        #expect(try Model(contentsOf: model).breedLabels?.count == 3)

        // Trained again from this model: the taught breed is taught again on the new heads, with its photos.
        var config = TrainConfiguration(dataset: data.root, baseModels: [model], output: data.root.appendingPathComponent("again.safetensors"))
        config.cacheRoot = data.root.appendingPathComponent(".cache")
        config.options.epochs = 20
        config.options.learningRate = 1e-2
        let again = try Trainer.run(config)
        #expect(again.taughtBreedsKept == ["checks"])
        #expect(again.confirmedPhotosKept == 4)
        let resumed = try Model(contentsOf: config.output)
        #expect(resumed.breedLabels?.map(\.key) == ["discs", "stripes", "checks"])
        #expect(resumed.breedLabels?.last?.taught != nil)
        try acceptingSyntheticDogs(config.output)
        let named = try checks.dropFirst(4).map { try classifier(config.output).classify(contentsOf: $0).breeds.first?.key }
        #expect(named.filter { $0 == "checks" }.count * 10 >= named.count * 6, "\(named)")

        // Forgotten with its last photo: the labels and the answers of before.
        let forgot = try Confirmations.forget(photos: nil, breed: "checks", model: model, catalogue: nil)
        #expect(forgot.forgottenBreeds == ["checks"] && forgot.removed.count == 4 && forgot.confirmedCount == 0)
        #expect(try Model(contentsOf: model).breedLabels?.map(\.key) == ["discs", "stripes"])
        let restored = try photos.map { try classifier(model).classify(contentsOf: $0, top: 2) }
        #expect(restored == before, "forgetting the taught breed gives back exactly the answers from before")
    }

    /// A taught breed travels: exported from the model it was taught in and imported into a copy of that model from
    /// before, it answers every photo as it does there; a trained breed is not exported; a truncated file and one made
    /// on other backbones are refused, the model left as it was; importing it again adds nothing.
    @Test func aTaughtBreedIsExportedAndImportedIntoAnotherModel() throws {
        let (data, model, checks) = try trained("share")
        defer { data.remove(); try? FileManager.default.removeItem(at: checks[0].deletingLastPathComponent()) }
        try acceptingSyntheticDogs(model)
        let fresh = data.root.appendingPathComponent("fresh.safetensors")
        try FileManager.default.copyItem(at: model, to: fresh)
        let file = data.root.appendingPathComponent("checks.dedogbreed")
        #expect(throws: ClassifierError.notTaught(name: "discs")) {
            try Confirmations.export(breed: "discs", model: model, catalogue: nil, to: file)
        }
        _ = try Confirmations.learn(photos: Array(checks.prefix(3)), breed: "checks", model: model, catalogue: nil, allowingNewName: true)
        let exported = try Confirmations.export(breed: "checks", model: model, catalogue: nil, to: file)
        #expect(exported.photos == 3 && exported.label.taught && exported.bytes < 32 << 10, "\(exported.bytes) bytes")

        let untouched = try Data(contentsOf: fresh)
        let bytes = try Data(contentsOf: file)
        let truncated = data.root.appendingPathComponent("truncated.dedogbreed")
        try bytes.prefix(bytes.count - 100).write(to: truncated)
        let cut = #expect(throws: ClassifierError.self) { try Confirmations.importBreed(from: truncated, model: fresh) }
        guard case .notASharedBreed? = cut else { Issue.record("\(String(describing: cut))"); return }
        var other = try TaughtBreedFile(bytes, file: file.path)
        other.backbones[0].fingerprint = "0123456789abcdef"
        let elsewhere = data.root.appendingPathComponent("elsewhere.dedogbreed")
        try other.encoded().write(to: elsewhere)
        let refused = #expect(throws: ClassifierError.self) { try Confirmations.importBreed(from: elsewhere, model: fresh) }
        guard case let .otherBackbones(_, taughtOn, _)? = refused else { Issue.record("\(String(describing: refused))"); return }
        #expect(taughtOn.first?.contains("0123456789abcdef") == true)
        #expect(try Data(contentsOf: fresh) == untouched, "a refused file changes nothing")

        let report = try Confirmations.importBreed(from: file, model: fresh)
        #expect(report.taughtNewBreed && report.added == 3 && report.alreadyKnown == 0 && report.confirmedCount == 3)
        #expect(try Model(contentsOf: fresh).breedLabels?.map(\.key) == ["discs", "stripes", "checks"])
        let photos = ["discs", "stripes"].flatMap { kind in (0..<8).map { data.root.appendingPathComponent("\(kind)/\($0).png") } } + checks
        let there = try photos.map { try classifier(model).classify(contentsOf: $0, top: 2) }
        let here = try photos.map { try classifier(fresh).classify(contentsOf: $0, top: 2) }
        #expect(here == there, "the imported breed answers as the taught one")
        let again = try Confirmations.importBreed(from: file, model: fresh)
        #expect(!again.taughtNewBreed && again.added == 0 && again.alreadyKnown == 3)
    }

    /// Bad input is refused, saying why, and leaves the model file as it was: an empty name, names several catalogue
    /// breeds answer to, a name only near a catalogue breed's, a photo that cannot be read, a photo without a dog.
    @Test func badNamesAndPhotosChangeNothing() throws {
        let (data, model, checks) = try trained("refusals")
        defer { data.remove(); try? FileManager.default.removeItem(at: checks[0].deletingLastPathComponent()) }
        let catalogue = try Catalogue.bundled()
        let original = try Data(contentsOf: model)
        #expect(throws: ClassifierError.emptyBreedName) {
            try Confirmations.learn(photos: [checks[0]], breed: "  ", model: model, catalogue: catalogue)
        }
        let ambiguous = #expect(throws: ClassifierError.self) {
            try Confirmations.learn(photos: [checks[0]], breed: "německý špic", model: model, catalogue: catalogue)
        }
        guard case let .ambiguousBreed(name, candidates)? = ambiguous else { Issue.record("\(String(describing: ambiguous))"); return }
        #expect(name == "německý špic" && candidates.count == 5 && candidates.contains("Keeshond (keeshond)"), "\(candidates)")
        let near = #expect(throws: ClassifierError.self) {
            try Confirmations.learn(photos: [checks[0]], breed: "jezevcikk", model: model, catalogue: catalogue)
        }
        guard case let .notACatalogueBreed(_, closest)? = near else { Issue.record("\(String(describing: near))"); return }
        #expect(closest.first == "Dachshund", "\(closest)")
        // Photos: one that cannot be read, and one in which the model sees no dog (its own threshold).
        let unreadable = data.root.appendingPathComponent("notes.jpg")
        try Data("not a photo".utf8).write(to: unreadable)
        let report = try Confirmations.learn(photos: [unreadable, checks[0]], breed: "jezevčík", model: model, catalogue: catalogue)
        #expect(report.photos.isEmpty && !report.taughtNewBreed && report.confirmedCount == 0)
        #expect(report.failed.map(\.noDog) == [false, true], "\(report.failed.map(\.message))")
        #expect(report.failed.last?.message.hasPrefix("the model sees no dog in this photo") == true)
        #expect(try Data(contentsOf: model) == original, "nothing was written")
    }
}

