import Foundation
import DedogCatalogue
import DedogFiles
import DedogNN
import DedogBreedModel

// The stages `Trainer.run` composes, each a value with its own tests: the split, the bases, the class names,
// each backbone's features and fit, the ensemble's calibration, the thresholds and the training record.

/// Which photos train the heads and which check them.
@_spi(Testing) public struct TrainingSplit {
    public var train: [Dataset.Sample]
    public var validation: [Dataset.Sample]
    /// Every photo of the run.
    public var all: [Dataset.Sample]
    /// Photos per class, over all of them.
    public var perClass: [Int: Int]
    /// Set when the photos were too few to hold some out: then every photo trains and is checked, each answered
    /// by heads trained without its fold (`fold[i]` for `all[i]`, and `train` and `validation` are both `all`).
    public var folds: Int?
    public var fold: [Int]

    public var isCrossValidated: Bool { folds != nil }

    /// The split `configuration` asks for: its split files, or a stratified validation part; cross-validation
    /// when that part would have fewer than `crossValidationBelow` photos. Refuses a class without a training
    /// photo, and a run that would need more memory than `memoryLimit`.
    public init(dataset: Dataset, configuration config: TrainConfiguration) throws(TrainError) {
        let pool = try config.split.map { url throws(TrainError) in try dataset.samples(listedIn: url) } ?? dataset.samples
        if let v = config.validationSplit {
            validation = try dataset.samples(listedIn: v)
            let held = Set(validation.map(\.path))
            train = pool.filter { !held.contains($0.path) }
        } else {
            (train, validation) = Dataset.stratified(pool, classes: dataset.classes.count,
                                                     fraction: config.validationFraction, seed: config.options.seed)
        }
        let missing = Set(dataset.classes.indices).subtracting(train.map(\.label))
        if let first = missing.min() {
            throw .datasetTooSmall(path: dataset.root.path, detail: "class \(dataset.classes[first]) has no training image")
        }
        let needed = Trainer.memoryNeeded(train: train.count, views: config.augmentation.views.count,
                                          validation: validation.count, classes: dataset.classes.count)
        if let limit = config.memoryLimit, needed > limit {
            throw .memoryLimit(task: "training on \(train.count + validation.count) images", needed: needed, limit: limit)
        }
        all = train + validation
        perClass = Dictionary(grouping: all, by: \.label).mapValues(\.count)
        fold = []
        // Few photos: cross-validate on all of them rather than trust a handful of validation photos.
        if validation.count < config.crossValidationBelow && config.validationSplit == nil {
            let folds = max(2, min(Trainer.folds, perClass.values.min() ?? 2))
            (train, validation, self.folds) = (all, all, folds)
            fold = Trainer.stratifiedFolds(all, folds: folds, seed: config.options.seed)
        }
    }
}

/// One pretrained backbone of a base model file, which a breed head will be trained on.
@_spi(Testing) public struct BaseBackbone {
    public let tensors: SafeTensors
    public let model: Model
    public let index: Int

    public var network: EfficientNetLite { model.backbones[index] }
    public var heads: BackboneHeads { model.heads[index] }
    public var description: BackboneDescription { model.specification.backbones[index] }
    public var name: String { network.backbone.description }

    /// Every backbone of every file, in order; a model combines one to three, each architecture once.
    public static func load(_ urls: [URL]) throws(TrainError) -> [BaseBackbone] {
        var bases: [BaseBackbone] = []
        for url in urls {
            do {
                let tensors = try SafeTensors(contentsOf: url)
                let model = try Model(tensors: tensors)
                bases += model.backbones.indices.map { BaseBackbone(tensors: tensors, model: model, index: $0) }
            } catch {
                throw .model(error)
            }
        }
        let architectures = bases.map(\.description.architecture)
        guard ModelDescription.backboneCounts.contains(bases.count) else {
            throw .baseModels(detail: "the base models hold \(bases.count) backbones (\(architectures.joined(separator: ", "))); "
                         + "a model combines \(ModelDescription.backboneCounts.lowerBound) to "
                         + "\(ModelDescription.backboneCounts.upperBound): choose fewer")
        }
        if let twice = architectures.first(where: { a in architectures.filter { $0 == a }.count > 1 }) {
            throw .baseModels(detail: "\(twice) is given twice; each backbone can be in a model once")
        }
        return bases
    }
}

/// What each class folder becomes in the model. Folder names meet the catalogue: a matched class carries its
/// breed (details, Czech name) and starts from that breed's ImageNet row, whatever the folder is called.
@_spi(Testing) public struct ClassNames {
    public var labels: [Label]
    /// Per class, the ImageNet label keys its head row may start from: the folder name, then the Stanford Dogs
    /// keys of the catalogue breed it matched.
    public var startKeys: [[String]]
    /// What each folder name matched in the catalogue (nil without one).
    public var matches: [NameMatch?]

    public init(classes: [String], catalogue: Catalogue?) {
        matches = classes.map { catalogue?.match(className: $0) }
        labels = classes.map(Label.init(folder:))
        startKeys = classes.map { [$0] }
        for (c, match) in matches.enumerated() {
            guard let breed = match?.breed else { continue }
            labels[c].name = breed.name.en
            labels[c].breed = breed.id
            labels[c].kind = breed.kind
            labels[c].imagenetKeys = breed.labels.isEmpty ? nil : breed.labels
            startKeys[c] += breed.labels
        }
    }
}

extension Breed {
    /// The breed's kind as a model label keeps it (`Label.kind`): its FCI group and section; nil for a breed the FCI
    /// does not list.
    public var kind: BreedKind? { fci.map { BreedKind(group: $0.group, section: $0.section) } }
}

/// What feature extraction met over all backbones, for the report.
@_spi(Testing) public struct ExtractionTally {
    public var unreadable: [(path: String, reason: String)] = []
    public var fromCache = 0, computed = 0
    public var cacheProblem: String?
    public var extractionSeconds = 0.0, trainingSeconds = 0.0
}

/// One backbone's features of the split's photos, as the head trains on them and classify will see them.
@_spi(Testing) public struct BackboneFeatures {
    /// Training rows [image × view × 1280] and their classes (one per row).
    public var x: [Float], y: [Int]
    public var trainViews: Int
    /// Each training row group's sample in `split.train` (images that could not be read are left out).
    public var keptTrain: [Int]
    /// The checked photos' centre and mirrored views [image × 1280], their classes, and their samples in
    /// `split.validation`.
    public var vx: [Float], mirroredX: [Float], vy: [Int]
    public var keptValidation: [Int]
    /// The input the backbone classifies at (larger than it trains at, `TrainConfiguration.testSizeIncrease`).
    public var testInput: InputDescription

    public init(x: [Float], y: [Int], trainViews: Int, keptTrain: [Int], vx: [Float], mirroredX: [Float], vy: [Int],
                keptValidation: [Int], testInput: InputDescription) {
        (self.x, self.y, self.trainViews, self.keptTrain) = (x, y, trainViews, keptTrain)
        (self.vx, self.mirroredX, self.vy, self.keptValidation, self.testInput) = (vx, mirroredX, vy, keptValidation, testInput)
    }

    /// Computes (or reads from the cache) the features of `base` for `split`.
    public static func extract(_ base: BaseBackbone, split: TrainingSplit, dataset: Dataset, configuration config: TrainConfiguration,
                        phase: String, tally: inout ExtractionTally,
                        progress: (TrainProgress) -> Void) throws(TrainError) -> BackboneFeatures {
        let network = base.network
        // Training sees the backbone at its own resolution, classification that much larger; a base that is
        // itself a trained model (already enlarged) is brought back to the resolution first.
        var trainInput = network.input.enlarged(by: network.backbone.resolution - network.input.cropSize)
        // Users' photos have every shape: unless told, a new model sees the whole photo (`pad`); a trained base
        // (`--resume`) keeps its own fit.
        trainInput.fit = config.fit ?? (base.heads.breed != nil ? trainInput.fit : .pad)
        let testInput = trainInput.enlarged(by: config.testSizeIncrease)
        guard EfficientNetLite.inputSizes.contains(testInput.cropSize) else {
            throw .inputTooLarge(backbone: base.name, size: testInput.cropSize, limit: EfficientNetLite.inputSizes.upperBound)
        }
        func extractor(_ input: InputDescription) throws(TrainError) -> FeatureExtractor {
            let cache = try config.cacheRoot.map { root throws(TrainError) in
                try FeatureCache(root: root, backboneFingerprint: FeatureExtractor.fingerprint(
                                    of: base.tensors, model: base.model.specification, backbone: base.index, input: input),
                                 width: EfficientNetLite.featureCount)
            }
            return FeatureExtractor(network: network, input: input, cache: cache, threads: config.threads, kernels: config.kernels)
        }
        let trainExtractor = try extractor(trainInput)
        let testExtractor = testInput == trainInput ? trainExtractor : try extractor(testInput)
        let trainViews = config.augmentation.views
        let (train, validation) = (split.train, split.validation)

        let started = Date()
        var trainFeatures = try trainExtractor.features(of: train.map(dataset.url), views: trainViews) {
            progress(.extracting(phase: "train" + phase, done: $0, total: $1))
        }
        var validationFeatures = try testExtractor.features(of: validation.map(dataset.url), views: [.center, .mirrored]) {
            progress(.extracting(phase: (split.isCrossValidated ? "cross-validation" : "validation") + phase, done: $0, total: $1))
        }
        tally.extractionSeconds += Date().timeIntervalSince(started)
        // Every backbone meets the same unreadable photos; each is listed once.
        let failed = trainFeatures.failures.map { (train[$0.index].path, $0.message) }
            + validationFeatures.failures.map { (validation[$0.index].path, $0.message) }
        for (path, message) in failed where !tally.unreadable.contains(where: { $0.path == path }) {
            tally.unreadable.append((path, message))
        }
        tally.fromCache += trainFeatures.fromCache + validationFeatures.fromCache
        tally.computed += trainFeatures.computed + validationFeatures.computed
        tally.cacheProblem = tally.cacheProblem ?? trainFeatures.cacheProblem ?? validationFeatures.cacheProblem

        // The features become the training matrices in place: rows of unreadable images are dropped, nothing copied.
        let keptTrain = trainFeatures.removeFailed()
        let y = keptTrain.flatMap { Array(repeating: train[$0].label, count: trainViews.count) }
        let keptValidation = validationFeatures.removeFailed()
        let vy = keptValidation.map { validation[$0].label }
        let width = EfficientNetLite.featureCount
        var vx = [Float](), mirroredX = [Float]()
        for i in vy.indices {
            let both = validationFeatures.features(of: i)
            vx += both.prefix(width)
            mirroredX += both.suffix(width)
        }
        guard !y.isEmpty else { throw .datasetTooSmall(path: dataset.root.path, detail: "no training image could be read") }
        return BackboneFeatures(x: trainFeatures.features, y: y, trainViews: trainViews.count, keptTrain: keptTrain,
                                vx: vx, mirroredX: mirroredX, vy: vy, keptValidation: keptValidation, testInput: testInput)
    }

    /// Checked photo `row`'s views as classify runs them: the centre, and the mirror image when averaged.
    public func checkedViews(_ row: Int, mirrored: Bool) -> [Float] {
        let width = EfficientNetLite.featureCount, range = (row * width)..<((row + 1) * width)
        return mirrored ? Array(vx[range]) + Array(mirroredX[range]) : Array(vx[range])
    }
}

/// A breed head trained on one backbone's features and calibrated on the checked photos.
@_spi(Testing) public struct BackboneFit {
    public var head: SoftmaxHead
    public var history: [EpochMetrics]
    /// The epochs the head was trained for: the best on validation, or, cross-validating, the best on average
    /// over the folds.
    public var epochs: Int
    public var temperature: Float
    /// Whether classify averages each photo with its mirror image (chosen on the checked photos' loss).
    public var averagesMirror: Bool
    public var centerOnlyTop1: Float, mirrorAveragedTop1: Float
    /// The checked photos' calibrated logits [photo × class], in `features.vy` order.
    public var validationLogits: [Float]
    /// Per checked sample (its index in `split.validation`): calibrated log-probabilities, its unit feature
    /// direction with the views classify uses, and how sure the ImageNet head is that it shows a dog.
    public var scores: [Int: ArraySlice<Float>]
    public var directions: [Int: [Float]]
    public var dogProbabilities: [Int: Float]?
    /// Per checked sample, the ImageNet head's probabilities of its classes that are not dogs (nil without one).
    public var nonDogProbabilities: [Int: [Float]]?
    /// Per class, the sum of its photos' unit directions [class × 1280]: the prototypes before normalising.
    public var prototypeSums: [Float]
    /// Classes whose head rows started from the base's own breed head (`--resume`).
    public var resumedClasses: Int

    /// Trains the head from `start` (the ImageNet rows, the base's breed rows), chooses the epochs and the
    /// mirror averaging, fits the temperature, and sums each class's directions for its prototype.
    public static func fit(_ f: BackboneFeatures, classes: Int, folds: (count: Int, ofSample: [Int])?, start: SoftmaxHead?,
                    resumedClasses: Int, imagenet: (head: Linear, description: HeadDescription)?,
                    options: TrainingOptions, progress: (TrainProgress) -> Void) -> BackboneFit {
        let width = EfficientNetLite.featureCount
        let head: SoftmaxHead, history: [EpochMetrics], centerLogits: [Float], mirroredLogits: [Float], epochs: Int
        if let folds {
            // Out-of-fold answers for every photo: each fold's head never saw the photos it answers for.
            let fit = HeadTrainer.crossValidate(x: f.x, y: f.y, views: f.trainViews, sampleFolds: f.keptTrain.map { folds.ofSample[$0] },
                                                vx: f.vx, mirroredX: f.mirroredX, vy: f.vy,
                                                checkFolds: f.keptValidation.map { folds.ofSample[$0] },
                                                folds: folds.count, classes: classes, inputs: width,
                                                options: options, initial: start) { progress(.epoch($0)) }
            var options = options
            options.epochs = fit.epochs
            head = HeadTrainer.train(x: f.x, y: f.y, vx: [], vy: [], classes: classes, inputs: width,
                                     options: options, initial: start).head
            (history, centerLogits, mirroredLogits, epochs) = (fit.history, fit.centerLogits, fit.mirroredLogits, fit.epochs)
        } else {
            (head, history) = HeadTrainer.train(x: f.x, y: f.y, vx: f.vx, vy: f.vy, classes: classes, inputs: width,
                                                options: options, initial: start) { progress(.epoch($0)) }
            (centerLogits, mirroredLogits) = (head.logits(f.vx), head.logits(f.mirroredX))
            epochs = (history.indices.min { history[$0].validationLoss < history[$1].validationLoss } ?? 0) + 1
        }
        // Averaging with the mirrored view is kept only if it helps on the checked photos.
        let averagedLogits = zip(centerLogits, mirroredLogits).map { ($0 + $1) / 2 }
        let centerOnly = HeadTrainer.summarize(logits: centerLogits, labels: f.vy, classes: classes)
        let averaged = HeadTrainer.summarize(logits: averagedLogits, labels: f.vy, classes: classes)
        let averagesMirror = averaged.loss < centerOnly.loss
        let validationLogits = averagesMirror ? averagedLogits : centerLogits
        // Too few photos to trust a fitted temperature: leave the head's own (label smoothing already tempers it).
        let temperature = f.vy.count >= Trainer.minimumCalibrationPhotos
            ? Calibration.temperature(logits: validationLogits, labels: f.vy, classes: classes) : 1

        var scores: [Int: ArraySlice<Float>] = [:], directions: [Int: [Float]] = [:], dog: [Int: Float] = [:]
        var nonDog: [Int: [Float]] = [:]
        let logProbabilities = stride(from: 0, to: validationLogits.count, by: classes).flatMap {
            Model.logSoftmax(Array(validationLogits[$0..<($0 + classes)]), temperature: temperature)
        }
        for (row, sample) in f.keptValidation.enumerated() {
            scores[sample] = logProbabilities[(row * classes)..<((row + 1) * classes)]
            let views = f.checkedViews(row, mirrored: averagesMirror)
            directions[sample] = Model.direction(views)
            if let (h, d) = imagenet, let logits = try? h.averaged(views, views: views.count / width) {
                let probabilities = Model.softmax(logits, temperature: d.temperature ?? 1)
                dog[sample] = d.labels.dogProbability(probabilities)
                nonDog[sample] = zip(d.labels, probabilities).compactMap { $0.0.isDog ? nil : $0.1 }
            }
        }
        // Each class's prototype: from the training photos, or (cross-validating) from all, each photo later
        // compared without itself. Summed in the photos' order, so the same data gives the same bits.
        var sums = [Float](repeating: 0, count: classes * width)
        if folds != nil {
            for (row, sample) in f.keptValidation.enumerated() {
                let d = directions[sample]!
                for k in 0..<width { sums[f.vy[row] * width + k] += d[k] }
            }
        } else {
            for row in f.keptTrain.indices {
                let first = row * f.trainViews * width
                let d = Model.direction(Array(f.x[first..<(first + width)]))
                for k in 0..<width { sums[f.y[row * f.trainViews] * width + k] += d[k] }
            }
        }
        return BackboneFit(head: head, history: history, epochs: epochs, temperature: temperature,
                           averagesMirror: averagesMirror, centerOnlyTop1: centerOnly.top1, mirrorAveragedTop1: averaged.top1,
                           validationLogits: validationLogits, scores: scores, directions: directions,
                           dogProbabilities: imagenet == nil ? nil : dog, nonDogProbabilities: imagenet == nil ? nil : nonDog, prototypeSums: sums, resumedClasses: resumedClasses)
    }

    /// The unit prototypes [class × 1280].
    public var prototypes: [Float] {
        let width = EfficientNetLite.featureCount
        return (0..<(prototypeSums.count / width)).flatMap { Model.direction(Array(prototypeSums[($0 * width)..<(($0 + 1) * width)])) }
    }
}

/// The backbones together on the checked photos every one of them could read, as classify combines them, and the
/// temperature of the combination.
@_spi(Testing) public struct EnsembleFit {
    /// The checked samples (indices in `split.validation`) every backbone answered.
    public var common: [Int]
    /// Their combined log-probabilities [photo × class] and classes.
    public var combined: [Float]
    public var labels: [Int]
    /// How many classes each row of `combined` holds.
    public var classes: Int
    /// Nil for one backbone, or with too few photos to fit one.
    public var temperature: Float?

    public init(_ fits: [BackboneFit], validation: [Dataset.Sample], classes: Int) {
        self.classes = classes
        common = validation.indices.filter { i in fits.allSatisfy { $0.scores[i] != nil } }
        combined = []
        combined.reserveCapacity(common.count * classes)
        labels = []
        for i in common {
            combined += (0..<classes).map { c in
                fits.reduce(Float(0)) { $0 + $1.scores[i]![$1.scores[i]!.startIndex + c] } / Float(fits.count)
            }
            labels.append(validation[i].label)
        }
        temperature = fits.count > 1 && labels.count >= Trainer.minimumCalibrationPhotos
            ? Calibration.temperature(logits: combined, labels: labels, classes: classes) : nil
    }
}

/// The verdict thresholds training sets from the checked photos (all of which show dogs of the model's breeds).
@_spi(Testing) public struct ThresholdFit {
    public var decision: DecisionThresholds
    /// The checked photos' dog probabilities (every backbone's ImageNet head averaged), where every backbone has one.
    public var dogProbabilities: [Float]
    /// The same photos' most likely class that is not a dog, its probability (the heads averaged, as classify does;
    /// nil for a head with no such class).
    public var topNonDog: [Float?]

    public init(base: DecisionThresholds, fits: [BackboneFit], ensemble: EnsembleFit, validation: [Dataset.Sample],
         crossValidated: Bool, otherBreedShare: Float) {
        decision = base
        // A base's rules of "a breed this model does not know" (with its careful mode) and of the kind of dog were
        // fitted on its own heads, on folds of breeds held out (`UnknownBreedRule`, `KindRule`): a new head has
        // neither measured, so it says neither (the kind would be said with no word on how often it is right).
        decision.unknownBreed = nil
        decision.kind = nil
        // The seen-dog rule weighs the base's breed probabilities against its own "no dog" threshold, both of which
        // a new head changes: unchosen for the new model, it is left out.
        decision.seenDog = nil
        // The cat rule reads the backbones' features alone: a base's rule is kept when the model is that base's
        // backbones (one base, whose rule has a row for each); a row count that differs drops it.
        if decision.cat?.weights.count != fits.count { decision.cat = nil }
        // Both from the photos every backbone's ImageNet head judged, the heads averaged as classify averages them.
        let judged = ensemble.common.compactMap { i -> (dog: Float, topNonDog: Float?)? in
            let dog = fits.compactMap { $0.dogProbabilities?[i] }, nonDog = fits.compactMap { $0.nonDogProbabilities?[i] }
            guard dog.count == fits.count, nonDog.count == fits.count, let first = nonDog.first else { return nil }
            let n = Float(fits.count)
            return (dog.reduce(0, +) / n, first.indices.map { c in nonDog.reduce(Float(0)) { $0 + $1[c] } / n }.max())
        }
        dogProbabilities = judged.map(\.dog)
        topNonDog = judged.map(\.topNonDog)
        decision.noDogBelow = Trainer.noDogThreshold(validationDogProbabilities: dogProbabilities, start: decision.noDogBelow)
        // "Not one of my breeds": how like its predicted breed's photos each checked photo is, that breed's
        // prototype built without the photo itself; the threshold lets `otherBreedShare` of them through as other.
        let width = EfficientNetLite.featureCount, classes = ensemble.classes
        let similarities = ensemble.common.enumerated().map { row, i -> Float in
            let scores = ensemble.combined[(row * classes)..<((row + 1) * classes)]
            let predicted = scores.indices.max { scores[$0] < scores[$1] }! - scores.startIndex
            var total: Float = 0
            for fit in fits {
                let d = fit.directions[i]!
                var prototype = Array(fit.prototypeSums[(predicted * width)..<((predicted + 1) * width)])
                if crossValidated && predicted == validation[i].label { for k in 0..<width { prototype[k] -= d[k] } }
                total += zip(d, Model.direction(prototype)).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            }
            return total / Float(fits.count)
        }
        decision.otherBreedBelow = Trainer.otherBreedThreshold(heldOutSimilarities: similarities, share: otherBreedShare)
        // Where the ImageNet head knows a breed, its word is weighed with the similarity (`BreedVote`).
        decision.breedVote = decision.otherBreedBelow != nil && fits.allSatisfy({ $0.dogProbabilities != nil }) ? BreedVote() : nil
    }

    /// The share of checked photos (all dogs) answered "no dog" (nil without ImageNet heads).
    public var noDogShare: Float? {
        guard !dogProbabilities.isEmpty else { return nil }
        let noDog = zip(dogProbabilities, topNonDog).filter { decision.showsNoDog(dogProbability: $0, topNonDog: $1) }
        return Float(noDog.count) / Float(dogProbabilities.count)
    }
}

/// How a model was trained, kept in its file (`ModelDescription.training`) and shown by `GET /v1/models`.
public struct TrainingRecord: Codable, Sendable, Equatable {
    /// One backbone's head.
    public struct Backbone: Codable, Sendable, Equatable {
        public var name: String
        public var epochs: Int
        public var temperature: Float
        public var validationTop1: Float
        public var validationTop1CenterOnly: Float
        public var validationTop1MirrorAveraged: Float
    }

    /// ISO 8601.
    public var date: String
    /// The dataset folder's name and a hash of its photos' paths and classes (inside the folder, so the same
    /// dataset anywhere has the same fingerprint and a shared model carries no one's home folder).
    public var dataset: String
    public var datasetFingerprint: String
    public var classes: Int
    public var trainImages: Int
    public var validationImages: Int
    /// Set when the photos were too few to hold some out.
    public var crossValidationFolds: Int?
    public var imagesPerClass: ClosedRange<Int>
    public var augmentation: String
    public var testSizeIncrease: Int
    public var seed: UInt64
    /// The head's training options (nil in files written before they were kept).
    public var learningRate: Float?
    public var weightDecay: Float?
    public var labelSmoothing: Float?
    public var validationTop1: Float
    public var validationTop5: Float
    public var backbones: [Backbone]
    public var noDogBelow: Float
    public var otherBreedBelow: Float?
    public var resumedClasses: Int

    @_spi(Testing) public init(split: TrainingSplit, dataset: Dataset, configuration config: TrainConfiguration,
         backbones: [TrainingReport.Backbone], trainImages: Int, report: EvaluationReport, thresholds: DecisionThresholds,
         resumedClasses: Int) {
        date = ISO8601DateFormatter().string(from: Date())
        self.dataset = dataset.root.standardizedFileURL.lastPathComponent
        datasetFingerprint = Self.fingerprint(split.all, root: dataset.root)
        classes = dataset.classes.count
        self.trainImages = trainImages
        validationImages = report.samples
        crossValidationFolds = split.folds
        imagesPerClass = (split.perClass.values.min() ?? 0)...(split.perClass.values.max() ?? 0)
        augmentation = config.augmentation.rawValue
        testSizeIncrease = config.testSizeIncrease
        seed = config.options.seed
        learningRate = config.options.learningRate
        weightDecay = config.options.weightDecay
        labelSmoothing = config.options.labelSmoothing
        validationTop1 = report.top1
        validationTop5 = report.top5
        self.backbones = backbones.map { b in
            Backbone(name: DedogNN.Backbone.shortName(b.architecture), epochs: b.epochs, temperature: b.validation.temperature,
                     validationTop1: b.validation.top1, validationTop1CenterOnly: b.validationTop1CenterOnly,
                     validationTop1MirrorAveraged: b.validationTop1MirrorAveraged)
        }
        noDogBelow = thresholds.noDogBelow
        otherBreedBelow = thresholds.otherBreedBelow
        self.resumedClasses = resumedClasses
    }

    /// The fingerprint of `samples` of the dataset at `root`.
    static func fingerprint(_ samples: [Dataset.Sample], root: URL) -> String {
        var hash = ContentHash()
        let root = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for s in samples.sorted(by: { $0.path < $1.path }) {
            let inside = s.path.hasPrefix(root) ? String(s.path.dropFirst(root.count)) : (s.path as NSString).lastPathComponent
            hash.update("\(inside)\t\(s.label)\n")
        }
        return hash.hex
    }

    /// As the model file keeps it: text values, rates with 4 decimals and thresholds with 3; a backbone's fields
    /// are prefixed with its name when the model combines several.
    public var fields: [String: String] {
        func rate(_ x: Float) -> String { String(format: "%.4f", x) }
        var fields = [
            "date": date, "dataset": dataset, "datasetFingerprint": datasetFingerprint,
            "backbones": backbones.map(\.name).joined(separator: "+"), "classes": "\(classes)",
            "trainImages": "\(trainImages)", "validationImages": "\(validationImages)",
            "validation": crossValidationFolds.map { "\($0)-fold cross-validation" } ?? "held out",
            "imagesPerClass": "\(imagesPerClass.lowerBound)–\(imagesPerClass.upperBound)",
            "augmentation": augmentation, "testSizeIncrease": "\(testSizeIncrease)", "seed": "\(seed)",
            "validationTop1": rate(validationTop1), "validationTop5": rate(validationTop5),
            "noDogBelow": String(format: "%.3f", noDogBelow),
        ]
        for b in backbones {
            let key = backbones.count > 1 ? b.name + "." : ""
            fields[key + "epochs"] = "\(b.epochs)"
            fields[key + "temperature"] = rate(b.temperature)
            fields[key + "validationTop1CenterOnly"] = rate(b.validationTop1CenterOnly)
            fields[key + "validationTop1MirrorAveraged"] = rate(b.validationTop1MirrorAveraged)
            if backbones.count > 1 { fields[key + "validationTop1"] = rate(b.validationTop1) }
        }
        if let t = otherBreedBelow { fields["otherBreedBelow"] = String(format: "%.3f", t) }
        for (key, value) in [("learningRate", learningRate), ("weightDecay", weightDecay), ("labelSmoothing", labelSmoothing)] {
            if let value { fields[key] = "\(value)" }
        }
        if resumedClasses > 0 { fields["resumedClasses"] = "\(resumedClasses)" }
        return fields
    }
}
