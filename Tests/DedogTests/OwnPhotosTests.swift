@_spi(Testing) @_spi(Benchmarks) import Dedog
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
}
