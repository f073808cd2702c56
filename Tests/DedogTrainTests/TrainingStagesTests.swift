import Foundation
import Testing
import DedogCatalogue
import DedogNN
import DedogBreedModel
import DedogTestSupport
@_spi(Testing) import DedogTrain

/// Each stage of `Trainer.run` on its own, against what it must compute, recomputed here independently.
@Suite struct TrainingStagesTests {
    static let width = EfficientNetLite.featureCount

    // MARK: The split

    @Test func fewPhotosAreCrossValidatedInStratifiedFolds() throws {
        let data = try SyntheticDataset(name: "stages-split")
        defer { data.remove() }
        let dataset = try Dataset(root: data.root)
        var config = TrainConfiguration(dataset: data.root, baseModels: [], output: data.root.appendingPathComponent("m"))
        let split = try TrainingSplit(dataset: dataset, configuration: config)
        // 25 photos: far fewer held out than 100, so every photo trains and is checked.
        #expect(split.folds == 5)
        #expect(split.train == split.all && split.validation == split.all)
        #expect(Set(split.all.map(\.path)) == Set(dataset.samples.map(\.path)))
        for label in Set(split.all.map(\.label)) {
            let folds = split.all.indices.filter { split.all[$0].label == label }.map { split.fold[$0] }
            let counts = Dictionary(grouping: folds, by: { $0 }).mapValues(\.count).values
            #expect(counts.max()! - counts.min()! <= 1, "class \(label) spread unevenly: \(folds)")
        }

        config.crossValidationBelow = 0
        config.validationFraction = 0.3
        let heldOut = try TrainingSplit(dataset: dataset, configuration: config)
        #expect(heldOut.folds == nil && heldOut.fold.isEmpty)
        #expect(Set(heldOut.train.map(\.path)).isDisjoint(with: heldOut.validation.map(\.path)))
        #expect(Set(heldOut.all.map(\.path)) == Set(dataset.samples.map(\.path)))
        #expect(Set(heldOut.validation.map(\.label)) == Set(dataset.classes.indices), "every class held out a photo")

        config.memoryLimit = 1 << 20
        #expect(throws: TrainError.self) { try TrainingSplit(dataset: dataset, configuration: config) }
    }

    // MARK: Class names

    @Test func foldersMatchedInTheCatalogueStartFromTheirBreedsRows() throws {
        let names = ClassNames(classes: ["čivava", "my-mutt"], catalogue: try Catalogue.bundled())
        #expect(names.labels.map(\.key) == ["čivava", "my-mutt"])
        #expect(names.labels[0].breed == "chihuahua" && names.labels[0].name == "Chihuahua")
        #expect(names.startKeys[0] == ["čivava", "n02085620-Chihuahua"])
        #expect(names.labels[1].breed == nil && names.startKeys[1] == ["my-mutt"])
        #expect(ClassNames(classes: ["čivava"], catalogue: nil).labels[0].breed == nil)
    }

    // MARK: One backbone's fit

    /// Three classes of noisy features around different directions; `rows` photos of each.
    static func features(rows: Int, views: Int, seed: UInt64) -> BackboneFeatures {
        var rng = SeededNoise(state: seed)
        func photo(_ c: Int) -> [Float] {
            (0..<width).map { k in Float(rng.next(1000)) / 1000 - 0.2 + (k % 3 == c ? 1.5 : 0) }
        }
        var x: [Float] = [], y: [Int] = [], vx: [Float] = [], mirrored: [Float] = [], vy: [Int] = []
        for i in 0..<(3 * rows) {
            for _ in 0..<views { x += photo(i % 3) }
            y += Array(repeating: i % 3, count: views)
            vx += photo(i % 3)
            mirrored += photo(i % 3)
            vy.append(i % 3)
        }
        return BackboneFeatures(x: x, y: y, trainViews: views, keptTrain: Array(0..<(3 * rows)), vx: vx, mirroredX: mirrored,
                                vy: vy, keptValidation: Array(0..<(3 * rows)), testInput: InputDescription())
    }

    static func sum(_ rows: [[Float]]) -> [Float] {
        rows.reduce([Float](repeating: 0, count: width)) { zip($0, $1).map(+) }
    }

    @Test func aFitCalibratesChoosesTheMirrorAndSumsPrototypes() throws {
        let f = Self.features(rows: 6, views: 2, seed: 11)
        var options = TrainingOptions()
        options.epochs = 8
        let fit = BackboneFit.fit(f, classes: 3, folds: nil, start: nil, resumedClasses: 0, imagenet: nil,
                                  options: options, progress: { _ in })
        // The mirror is averaged exactly when that lowers the loss on the checked photos.
        func logits(_ x: [Float]) -> [Float] { x.withUnsafeBufferPointer { fit.head.logits($0.baseAddress!, count: x.count / Self.width) } }
        let center = logits(f.vx), mirror = logits(f.mirroredX)
        let averaged = zip(center, mirror).map { ($0 + $1) / 2 }
        #expect(fit.averagesMirror == (HeadTrainer.summarize(logits: averaged, labels: f.vy, classes: 3).loss
                                       < HeadTrainer.summarize(logits: center, labels: f.vy, classes: 3).loss))
        #expect(fit.validationLogits == (fit.averagesMirror ? averaged : center))
        #expect(fit.temperature > 0 && fit.temperature != 1, "18 checked photos are enough to calibrate")
        // Scores: each checked photo's calibrated log-probabilities.
        for (row, sample) in f.keptValidation.enumerated() {
            let scores = try #require(fit.scores[sample])
            let logits = Array(fit.validationLogits[(row * 3)..<((row + 1) * 3)])
            let expected = logits.map { $0 / fit.temperature }
            let logSum = Foundation.log(expected.map { Foundation.exp(Double($0)) }.reduce(0, +))
            for (a, b) in zip(scores, expected) { #expect(abs(Double(a) - (Double(b) - logSum)) < 1e-5) }
            #expect(fit.directions[sample] == Model.direction(f.checkedViews(row, mirrored: fit.averagesMirror)))
        }
        // Held out: prototypes are the sums of the training photos' first-view directions, class by class.
        for c in 0..<3 {
            let rows = f.keptTrain.indices.filter { f.y[$0 * 2] == c }.map { row in
                Model.direction(Array(f.x[(row * 2 * Self.width)..<((row * 2 + 1) * Self.width)]))
            }
            let expected = Self.sum(rows), got = Array(fit.prototypeSums[(c * Self.width)..<((c + 1) * Self.width)])
            #expect(zip(expected, got).allSatisfy { abs($0 - $1) < 1e-4 })
        }
        #expect(fit.dogProbabilities == nil, "no ImageNet head, no dog probabilities")
    }

    /// A start with pretrained rows and a new (zero) one trains in two stages, the new row alone first: with
    /// patience to spare, each stage runs every epoch, numbered on from the first. A start of all-new or
    /// all-pretrained rows, or the stages turned off, trains once.
    @Test func newRowsLearnFirstWhilePretrainedRowsWait() {
        let f = Self.features(rows: 6, views: 1, seed: 13)
        var options = TrainingOptions()
        options.epochs = 3
        options.patience = 10
        options.learningRate = 1e-3
        let pretrained = SoftmaxHead(classes: 3, inputs: Self.width,
                                     weight: (0..<(3 * Self.width)).map { i in i / Self.width < 2 && (i % Self.width) % 3 == i / Self.width ? 0.01 : 0 })
        func epochs(_ start: SoftmaxHead?, _ options: TrainingOptions) -> [Int] {
            var seen: [Int] = []
            let fit = BackboneFit.fit(f, classes: 3, folds: nil, start: start, resumedClasses: 0, imagenet: nil, options: options) {
                if case let .epoch(m) = $0 { seen.append(m.epoch) }
            }
            #expect(fit.history.map(\.epoch) == seen)
            return seen
        }
        #expect(epochs(pretrained, options) == [1, 2, 3, 4, 5, 6])
        #expect(epochs(nil, options) == [1, 2, 3])
        let allPretrained = SoftmaxHead(classes: 3, inputs: Self.width, weight: pretrained.weight.enumerated().map { i, w in
            i / Self.width == 2 && (i % Self.width) % 3 == 2 ? 0.01 : w })
        #expect(epochs(allPretrained, options) == [1, 2, 3])
        options.warmsUpNewRows = false
        #expect(epochs(pretrained, options) == [1, 2, 3])
    }

    @Test func crossValidatedPrototypesComeFromEveryCheckedPhoto() {
        let f = Self.features(rows: 4, views: 1, seed: 12)
        var options = TrainingOptions()
        options.epochs = 4
        let folds = (count: 2, ofSample: f.keptTrain.map { $0 % 2 })
        let fit = BackboneFit.fit(f, classes: 3, folds: folds, start: nil, resumedClasses: 0, imagenet: nil,
                                  options: options, progress: { _ in })
        #expect(fit.epochs >= 1 && fit.epochs <= 4)
        for c in 0..<3 {
            let expected = Self.sum(f.keptValidation.indices.filter { f.vy[$0] == c }.map { fit.directions[f.keptValidation[$0]]! })
            #expect(zip(expected, fit.prototypeSums[(c * Self.width)..<((c + 1) * Self.width)]).allSatisfy { abs($0 - $1) < 1e-4 })
        }
    }

    // MARK: The ensemble and the thresholds

    @Test func theEnsembleAveragesTheBackbonesOnPhotosBothRead() {
        var options = TrainingOptions()
        options.epochs = 4
        let first = Self.features(rows: 5, views: 1, seed: 21)
        var second = Self.features(rows: 5, views: 1, seed: 22)
        // The second backbone could not read checked photo 4.
        second.keptValidation.remove(at: 4)
        second.vy.remove(at: 4)
        second.vx.removeSubrange((4 * Self.width)..<(5 * Self.width))
        second.mirroredX.removeSubrange((4 * Self.width)..<(5 * Self.width))
        let fits = [first, second].map {
            BackboneFit.fit($0, classes: 3, folds: nil, start: nil, resumedClasses: 0, imagenet: nil, options: options, progress: { _ in })
        }
        let validation = (0..<15).map { Dataset.Sample(path: "p\($0).jpg", label: $0 % 3) }
        let ensemble = EnsembleFit(fits, validation: validation, classes: 3)
        #expect(ensemble.common == [0, 1, 2, 3] + Array(5..<15))
        #expect(ensemble.labels == ensemble.common.map { $0 % 3 })
        for (row, i) in ensemble.common.enumerated() {
            for c in 0..<3 {
                let mean = (fits[0].scores[i]![fits[0].scores[i]!.startIndex + c] + fits[1].scores[i]![fits[1].scores[i]!.startIndex + c]) / 2
                #expect(ensemble.combined[row * 3 + c] == mean)
            }
        }
        #expect(ensemble.temperature != nil, "two backbones and 14 photos: the combination is calibrated")
        #expect(EnsembleFit([fits[0]], validation: validation, classes: 3).temperature == nil, "one backbone needs none")

        // "Not one of my breeds": the 5 % quantile of the photos' similarity to their predicted breed's prototype.
        // A base's rules fitted on its own heads (the bundled models' unknown-breed, kind and seen-dog rules) are not
        // kept.
        var base = DecisionThresholds()
        base.unknownBreed = UnknownBreedRule(signals: [.p1], mean: [0.5], scale: [0.25], weights: [1], bias: 0, below: 0,
                                             carefulBelow: 0.5)
        base.kind = KindRule(groupFrom: 0.8)
        base.seenDog = SeenDogRule(detectorFrom: 0.3, breedFrom: 0.8, dogShareFrom: 0.26)
        let thresholds = ThresholdFit(base: base, fits: fits, ensemble: ensemble, validation: validation,
                                      crossValidated: false, otherBreedShare: 0.05)
        #expect(thresholds.decision.unknownBreed == nil && thresholds.decision.kind == nil && thresholds.decision.seenDog == nil)
        let similarities = ensemble.common.enumerated().map { row, i -> Float in
            let scores = Array(ensemble.combined[(row * 3)..<((row + 1) * 3)])
            let predicted = scores.indices.max { scores[$0] < scores[$1] }!
            return fits.map { fit in
                let prototype = Model.direction(Array(fit.prototypeSums[(predicted * Self.width)..<((predicted + 1) * Self.width)]))
                return zip(fit.directions[i]!, prototype).reduce(0) { $0 + $1.0 * $1.1 }
            }.reduce(0, +) / 2
        }.sorted()
        #expect(thresholds.decision.otherBreedBelow == similarities[Int(Float(similarities.count) * 0.05)])
        #expect(thresholds.decision.noDogBelow == DecisionThresholds().noDogBelow && thresholds.noDogShare == nil)
        #expect(thresholds.decision.breedVote == nil, "without ImageNet heads there is no word on the breed to weigh")
    }

    @Test func theNoDogShareIsTheShareAnsweredNoDog() {
        var options = TrainingOptions()
        options.epochs = 2
        var fits = [31, 32].map { seed in
            BackboneFit.fit(Self.features(rows: 5, views: 1, seed: UInt64(seed)), classes: 3, folds: nil, start: nil,
                            resumedClasses: 0, imagenet: nil, options: options, progress: { _ in })
        }
        // Every photo a dog to both heads but for four: photo 0 under half the threshold; 1 in the band, nothing
        // else seen; 2 in the band with a class that is not a dog at 5 %; 3 in the band with 2.5 % on one such class
        // once the heads are averaged (each head alone has a class over 3 %).
        let dog: [Int: Float] = [0: 0.1, 1: 0.2, 2: 0.2, 3: 0.2]
        let nonDog: [[Int: [Float]]] = [[1: [0.01, 0.01], 2: [0.04, 0.01], 3: [0.05, 0]],
                                        [1: [0.01, 0.01], 2: [0.06, 0.01], 3: [0, 0.04]]]
        for b in fits.indices {
            fits[b].dogProbabilities = Dictionary(uniqueKeysWithValues: (0..<15).map { ($0, dog[$0] ?? 0.9) })
            fits[b].nonDogProbabilities = Dictionary(uniqueKeysWithValues: (0..<15).map { ($0, nonDog[b][$0] ?? [0.05, 0.05]) })
        }
        let validation = (0..<15).map { Dataset.Sample(path: "p\($0).jpg", label: $0 % 3) }
        let ensemble = EnsembleFit(fits, validation: validation, classes: 3)
        let thresholds = ThresholdFit(base: DecisionThresholds(), fits: fits, ensemble: ensemble, validation: validation,
                                      crossValidated: false, otherBreedShare: 0.05)
        #expect(thresholds.decision.noDogBelow == 0.3, "too few photos to fit: the floor")
        #expect(thresholds.dogProbabilities.filter { $0 < 0.3 }.count == 4)
        #expect(thresholds.noDogShare == Float(2) / 15, "photos 0 and 2 are answered \"no dog\"; 1 and 3 see nothing else")
    }

    // MARK: The record

    @Test func theRecordIsWrittenAsTheModelFileKeepsIt() throws {
        let json = #"""
        {"date": "2026-11-24T12:00:00Z", "dataset": "dogs", "datasetFingerprint": "ab12", "classes": 4,
         "trainImages": 90, "validationImages": 30, "crossValidationFolds": null, "imagesPerClass": [25, 35],
         "augmentation": "mirror", "testSizeIncrease": 32, "seed": 7, "validationTop1": 0.91234, "validationTop5": 1,
         "backbones": [{"name": "lite1", "epochs": 12, "temperature": 1.23456, "validationTop1": 0.9,
                        "validationTop1CenterOnly": 0.88, "validationTop1MirrorAveraged": 0.9},
                       {"name": "lite2", "epochs": 9, "temperature": 0.9, "validationTop1": 0.93,
                        "validationTop1CenterOnly": 0.92, "validationTop1MirrorAveraged": 0.93}],
         "noDogBelow": 0.3, "otherBreedBelow": 0.6012, "resumedClasses": 2}
        """#
        let record = try JSONDecoder().decode(TrainingRecord.self, from: Data(json.utf8))
        #expect(record.fields == [
            "date": "2026-11-24T12:00:00Z", "dataset": "dogs", "datasetFingerprint": "ab12", "backbones": "lite1+lite2",
            "classes": "4", "trainImages": "90", "validationImages": "30", "validation": "held out",
            "imagesPerClass": "25–35", "augmentation": "mirror", "testSizeIncrease": "32", "seed": "7",
            "validationTop1": "0.9123", "validationTop5": "1.0000", "noDogBelow": "0.300", "otherBreedBelow": "0.601",
            "resumedClasses": "2",
            "lite1.epochs": "12", "lite1.temperature": "1.2346", "lite1.validationTop1": "0.9000",
            "lite1.validationTop1CenterOnly": "0.8800", "lite1.validationTop1MirrorAveraged": "0.9000",
            "lite2.epochs": "9", "lite2.temperature": "0.9000", "lite2.validationTop1": "0.9300",
            "lite2.validationTop1CenterOnly": "0.9200", "lite2.validationTop1MirrorAveraged": "0.9300",
        ])
        var options = record
        (options.learningRate, options.weightDecay, options.labelSmoothing) = (1e-4, 1e-4, 0.05)
        #expect(options.fields.filter { record.fields[$0.key] == nil } == ["learningRate": "0.0001", "weightDecay": "0.0001",
                                                                          "labelSmoothing": "0.05"])
        var one = record
        one.backbones.removeLast()
        one.crossValidationFolds = 5
        one.resumedClasses = 0
        one.otherBreedBelow = nil
        let fields = one.fields
        #expect(fields["validation"] == "5-fold cross-validation" && fields["epochs"] == "12" && fields["temperature"] == "1.2346")
        #expect(fields["validationTop1CenterOnly"] == "0.8800" && fields["backbones"] == "lite1")
        #expect(fields["lite1.epochs"] == nil && fields["validationTop1"] == "0.9123", "one backbone: no prefixes")
        #expect(fields["resumedClasses"] == nil && fields["otherBreedBelow"] == nil)
    }
}
