import Foundation
import Testing
import DedogTestSupport
import DedogNN
import DedogBreedModel
import DedogTrain
import DedogCatalogue

/// Training on a few photos: cross-validation, honest confidences, warnings, folders named for breeds.
@Suite(.serialized) struct SmallDataTests {
    static let base = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")

    func configuration(_ data: SyntheticDataset, output: String) -> TrainConfiguration {
        var config = TrainConfiguration(dataset: data.root, baseModel: Self.base, output: data.root.appendingPathComponent(output))
        config.threads = 2
        config.options.epochs = 20
        config.options.learningRate = 1e-2
        return config
    }

    /// Twenty held-out answers, all right by a wide margin: the old fit sharpened them to certainty (T at its
    /// 0.05 bound); Laplace's rule keeps the confidence near 21/22.
    @Test func aFewRightAnswersDoNotMeanCertainty() {
        let n = 20, classes = 3
        var logits = [Float](repeating: 0, count: n * classes)
        for r in 0..<n { logits[r * classes + r % classes] = 5 }
        let t = Calibration.temperature(logits: logits, labels: (0..<n).map { $0 % classes }, classes: classes)
        let confidence = Model.softmax([5, 0, 0], temperature: t)[0]
        #expect(abs(confidence - 21.0 / 22.0) < 0.02, "T \(t) gives \(confidence)")
        // With many answers the smoothing fades: 2,000 right answers allow about 99.95 %.
        let many = (0..<2000).map { $0 % classes }
        var manyLogits = [Float](repeating: 0, count: many.count * classes)
        for (r, c) in many.enumerated() { manyLogits[r * classes + c] = 5 }
        let sharp = Model.softmax([5, 0, 0], temperature: Calibration.temperature(logits: manyLogits, labels: many, classes: classes))[0]
        #expect(sharp > 0.998)
    }

    @Test func fewPhotosAreCrossValidatedAndWarnedAbout() throws {
        let data = try SyntheticDataset(name: "small-cv")
        defer { data.remove() }
        let report = try Trainer.run(configuration(data, output: "m.safetensors"))
        #expect(report.crossValidationFolds == 5)
        #expect(report.validation.samples == 24, "every readable photo answered out of fold")
        #expect(report.warnings.contains(.crossValidated(folds: 5, photos: 25)))
        #expect(Set(report.warnings.compactMap { if case let .fewPhotos(name, _) = $0 { name } else { nil } })
                == ["checks", "discs", "stripes"])
        let model = try Model(contentsOf: data.root.appendingPathComponent("m.safetensors"))
        #expect(model.specification.training?["validation"] == "5-fold cross-validation")
        #expect(model.specification.decision.otherBreedBelow != nil)
        #expect(model.specification.decision.breedVote == BreedVote(), "the ImageNet head's word on the breed is weighed")
        #expect(report.breedsTheImageNetHeadKnows == 0, "stripes, checks and discs are no breeds it knows")
        #expect(model.heads[0].prototypes?.count == 3 * EfficientNetLite.featureCount)
        // The chosen epoch count is the one with the lowest mean held-out loss.
        let b = try #require(report.backbones.first)
        let best = b.history.min { $0.validationLoss < $1.validationLoss }
        #expect(b.epochs == best?.epoch)

        // Enough validation photos: held out as before.
        var config = configuration(data, output: "h.safetensors")
        config.crossValidationBelow = 0
        config.validationFraction = 0.25
        let held = try Trainer.run(config)
        #expect(held.crossValidationFolds == nil)
        #expect(held.validationImages == 6)
    }

    @Test func foldsSpreadEveryClass() {
        let samples = (0..<23).map { Dataset.Sample(path: "\($0)", label: $0 % 3) }
        let folds = Trainer.stratifiedFolds(samples, folds: 5, seed: 1)
        for label in 0..<3 {
            let counts = (0..<5).map { f in samples.indices.filter { samples[$0].label == label && folds[$0] == f }.count }
            #expect(counts.max()! - counts.min()! <= 1, "class \(label): \(counts)")
        }
    }

    /// `čivava` starts from ImageNet's Chihuahua row and carries the breed; `poodle` is ambiguous and does not.
    @Test func foldersNamedForBreedsStartFromTheirRows() throws {
        let data = try SyntheticDataset(name: "small-names", folders: ["čivava", "Golden_Retriever", "poodle"])
        defer { data.remove() }
        var config = configuration(data, output: "m.safetensors")
        config.catalogue = try Catalogue.bundled()
        config.options.learningRate = 1e-9
        config.options.weightDecay = 0
        let report = try Trainer.run(config)
        let model = try Model(contentsOf: data.root.appendingPathComponent("m.safetensors"))
        let labels = try #require(model.breedLabels)
        let chihuahua = try #require(labels.firstIndex { $0.key == "čivava" })
        #expect(labels[chihuahua].breed == "chihuahua" && labels[chihuahua].name == "Chihuahua")
        #expect(labels.first { $0.key == "Golden_Retriever" }?.breed == "golden-retriever")
        #expect(labels.first { $0.key == "poodle" }?.breed == nil)
        // The ImageNet head's labels for the same breed, so that its word on the breed can be weighed.
        #expect(labels[chihuahua].imagenetKeys == ["n02085620-Chihuahua"])
        #expect(labels.first { $0.key == "Golden_Retriever" }?.imagenetKeys == ["n02099601-golden_retriever"])
        #expect(labels.first { $0.key == "poodle" }?.imagenetKeys == nil)
        #expect(report.breedsTheImageNetHeadKnows == 2, "the Chihuahua and the golden retriever, not the poodle")
        let poodle = try #require(report.classes.firstIndex(of: "poodle"))
        if case let .ambiguous(breeds)? = report.matches[poodle] { #expect(breeds.count == 3) } else { Issue.record("poodle") }

        let imagenet = try #require(model.imagenetLabels?.firstIndex { $0.key == "n02085620-Chihuahua" })
        let start = try #require(model.heads[0].imagenet?.row(imagenet))
        let trained = try #require(model.heads[0].breed?.row(chihuahua))
        #expect(zip(start.weight, trained.weight).map { abs($0 - $1) }.max()! < 1e-4)
        #expect(abs(start.bias - trained.bias) < 1e-4)
    }
}
