import Foundation
import DedogFiles
import DedogNN
import DedogImage
import DedogCatalogue

/// What `dedog train` does, as values.
public struct TrainConfiguration: Sendable {
    public var dataset: URL
    /// If set, only the images listed here are used (train + validation pool).
    public var split: URL?
    /// If set, the validation images; else a stratified `validationFraction` of the pool.
    public var validationSplit: URL?
    public var validationFraction = 0.1
    /// Extra views of each training image (features computed once and cached).
    public var augmentation: Augmentation = .mirror
    /// The model classifies at each backbone's crop this many pixels larger than it trains at (resize in
    /// proportion); validation, early stopping and calibration use the larger input, as classify will. Networks
    /// pretrained on random crops see objects larger than a centre crop shows them ("FixRes", Touvron et al.,
    /// 2019): on Stanford Dogs validation photos +32 pixels gave Lite1+Lite2 +1.1 points. 0 turns it off.
    public var testSizeIncrease = Backbone.testSizeIncrease
    /// Start from the base model's ImageNet classifier rows for classes whose folder names its labels.
    public var startFromImageNet = true
    /// Files holding the pretrained backbones; every backbone they hold gets a breed head, and the model written
    /// combines them (at most `ModelDescription.backboneCounts.upperBound`, no architecture twice).
    public var baseModels: [URL]
    public var output: URL
    /// nil: no cache.
    public var cacheRoot: URL?
    public var threads = 2
    /// Which build of the C kernels computes the features.
    public var kernels: KernelSet = .best
    /// If set, training refuses to start when its estimated peak memory (`Trainer.memoryNeeded`) is larger.
    public var memoryLimit: Int?
    public var options = TrainingOptions()
    /// Class folders are looked up here by name (`Catalogue.match`): a matched class carries its breed and starts
    /// from that breed's ImageNet row. Nil: folder names are labels only.
    public var catalogue: Catalogue?
    /// With fewer validation photos than this (and no --validation-split), the head is chosen and calibrated by
    /// k-fold cross-validation over all photos instead: a temperature fitted on a handful of photos is noise.
    public var crossValidationBelow = 100
    /// The share of held-out photos of the model's own breeds allowed to fall below the "not one of my breeds"
    /// threshold.
    public var otherBreedShare: Float = 0.05

    public init(dataset: URL, baseModels: [URL], output: URL) {
        self.dataset = dataset
        self.baseModels = baseModels
        self.output = output
    }

    public init(dataset: URL, baseModel: URL, output: URL) {
        self.init(dataset: dataset, baseModels: [baseModel], output: output)
    }
}

/// Progress of a training run, for a progress bar.
public enum TrainProgress: Sendable {
    case extracting(phase: String, done: Int, total: Int)
    case epoch(EpochMetrics)
}

public struct TrainingReport: Sendable {
    /// How one backbone's breed head was trained.
    public struct Backbone: Sendable {
        public var architecture: String
        public var history: [EpochMetrics]
        /// The epochs the written head was trained for: the best on validation, or, cross-validating, the best on
        /// average over the folds.
        public var epochs: Int
        /// Its own validation report (calibrated with its own temperature).
        public var validation: EvaluationReport
        public var validationTop1CenterOnly: Float
        public var validationTop1MirrorAveraged: Float
        /// Whether it averages each photo with its mirror image (chosen on the validation loss).
        public var averagesMirror: Bool
    }

    public var classes: [String]
    /// What each class became in the model: its key (the folder), name and catalogue breed.
    public var labels: [Label]
    /// What each folder name matched in the catalogue (nil without a catalogue).
    public var matches: [NameMatch?]
    public var warnings: [TrainWarning]
    /// Set when the dataset was too small for a held-out validation part: the folds every photo was answered in.
    public var crossValidationFolds: Int?
    /// Classes whose head started from the base model's own breed head (`--resume`).
    public var resumedClasses: Int
    /// Confirmed photos (`dedog learn`) carried over from the base model.
    public var memoryKept: Int
    /// Images actually used (unreadable ones are in `unreadable`).
    public var trainImages: Int
    public var validationImages: Int
    /// Files in class folders that are not images (ignored).
    public var notImages: [(path: String, reason: String)]
    /// Images that could not be read or decoded (skipped; training went on without them).
    public var unreadable: [(path: String, reason: String)]
    public var backbones: [Backbone]
    /// The whole model on the validation images: the backbones combined, as classify combines them.
    public var validation: EvaluationReport
    /// The "no dog" threshold chosen on the validation photos, and the share of them that fall below it.
    public var noDogBelow: Float
    public var validationNoDogShare: Float?
    /// The "not one of my breeds" threshold (see `DecisionThresholds.otherBreedBelow`).
    public var otherBreedBelow: Float?
    public var featuresFromCache: Int
    public var featuresComputed: Int
    /// Why the feature cache stopped storing, if it did (training went on without it).
    public var cacheProblem: String?
    public var extractionSeconds: Double
    public var trainingSeconds: Double
}

/// Which views of each training image the head learns from.
public enum Augmentation: String, Sendable, CaseIterable {
    /// The image as classify sees it.
    case none
    /// Also mirrored left to right.
    case mirror
    /// Also mirrored, a wider and a closer crop.
    case crops
    /// Also mirrored, and the photo stretched 33 % wider and squeezed 25 % narrower: real photos keep their
    /// proportions, while datasets such as the shared Stanford Dogs copy are stretched to squares.
    case aspect

    public var views: [FeatureView] {
        switch self {
        case .none: return [.center]
        case .mirror: return [.center, .mirrored]
        case .crops: return [.center, .mirrored, .wide, .zoomed]
        case .aspect: return [.center, .mirrored, .stretchedWide, .stretchedNarrow]
        }
    }
}

public enum Trainer {
    public static func run(_ config: TrainConfiguration, progress: (TrainProgress) -> Void = { _ in })
        throws(TrainError) -> TrainingReport {
        // Fail before the long part if the model could not be written anyway.
        let folder = config.output.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .output(path: config.output.path, reason: "the folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            let reason = errno == EROFS ? FileError.readOnly.description : "the folder \(folder) is not writable"
            throw .output(path: config.output.path, reason: reason)
        }
        if FileManager.default.fileExists(atPath: config.output.path, isDirectory: &isFolder), isFolder.boolValue {
            throw .output(path: config.output.path, reason: "it is a folder; give a file name such as mydogs.safetensors")
        }
        let dataset = try Dataset(root: config.dataset)
        let pool = try config.split.map { url throws(TrainError) in try dataset.samples(listedIn: url) } ?? dataset.samples
        var train: [Dataset.Sample], validation: [Dataset.Sample]
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
        let trainViews = config.augmentation.views
        let needed = memoryNeeded(train: train.count, views: trainViews.count, validation: validation.count,
                                  classes: dataset.classes.count)
        if let limit = config.memoryLimit, needed > limit {
            throw .memoryLimit(task: "training on \(train.count + validation.count) images", needed: needed, limit: limit)
        }

        // Every backbone of every base file, in order.
        var members: [(tensors: SafeTensors, model: Model, index: Int)] = []
        for url in config.baseModels {
            do {
                let tensors = try SafeTensors(contentsOf: url)
                let model = try Model(tensors: tensors)
                members += model.backbones.indices.map { (tensors, model, $0) }
            } catch {
                throw .model(error.description)
            }
        }
        let architectures = members.map { $0.model.backbones[$0.index].specification.architecture }
        guard ModelDescription.backboneCounts.contains(members.count) else {
            throw .model("the base models hold \(members.count) backbones (\(architectures.joined(separator: ", "))); "
                         + "a model combines \(ModelDescription.backboneCounts.lowerBound) to "
                         + "\(ModelDescription.backboneCounts.upperBound): choose fewer")
        }
        if let twice = architectures.first(where: { a in architectures.filter { $0 == a }.count > 1 }) {
            throw .model("\(twice) is given twice; each backbone can be in a model once")
        }
        let classes = dataset.classes.count
        // Folder names meet the catalogue: a matched class carries its breed (details, Czech name) and starts from
        // that breed's ImageNet row, whatever the folder is called.
        let matches = dataset.classes.map { config.catalogue?.match(className: $0) }
        var labels = dataset.classes.map(Label.init(folder:))
        var startKeys = dataset.classes.map { [$0] }
        for (c, match) in matches.enumerated() {
            guard let breed = match?.breed else { continue }
            labels[c].name = breed.name.en
            labels[c].breed = breed.id
            startKeys[c] += breed.labels
        }
        // Few photos: cross-validate on all of them rather than trust a handful of validation photos.
        let crossValidation = validation.count < config.crossValidationBelow && config.validationSplit == nil
        let all = train + validation
        if crossValidation {
            train = all
            validation = all
        }
        let perClass = Dictionary(grouping: all, by: \.label).mapValues(\.count)
        let folds = crossValidation ? max(2, min(Self.folds, perClass.values.min() ?? 2)) : 1
        let fold = crossValidation ? Self.stratifiedFolds(all, folds: folds, seed: config.options.seed) : []
        var warnings: [TrainWarning] = dataset.classes.indices.compactMap { c in
            let n = perClass[c] ?? 0
            return n < Self.recommendedPhotos ? .fewPhotos(className: dataset.classes[c], photos: n) : nil
        }
        if crossValidation { warnings.append(.crossValidated(folds: folds, photos: all.count)) }
        // A base that is itself a trained model with these breeds: its heads and confirmed photos carry over.
        let keys = labels.map(\.key)
        var reports: [TrainingReport.Backbone] = [], parts: [ModelWriter.Part] = []
        var written: [BackboneDescription] = []
        var unreadable: [(path: String, reason: String)] = []
        var fromCache = 0, computed = 0, cacheProblem: String? = nil
        var extractionSeconds = 0.0, trainingSeconds = 0.0
        // Per backbone, the calibrated log-probabilities of each checked image (validation, or every image when
        // cross-validating) it could read, and each image's unit feature direction as classify computes it.
        var validationScores: [[Int: ArraySlice<Float>]] = []
        var directions: [[Int: [Float]]] = []
        var prototypeSums: [[Float]] = []
        var dogProbabilities: [[Int: Float]] = []
        var trainImages = 0, resumed = 0
        let keptMemory = config.baseModels.count == 1 ? (members.first?.model.specification.memory ?? []).enumerated()
            .filter { keys.contains($0.element.label) } : []
        for member in members {
            let network = member.model.backbones[member.index]
            let name = Backbone.shortName(network.specification.architecture)
            let phase = members.count > 1 ? " (\(name))" : ""
            // Training sees the backbone at its own resolution, classification that much larger; a base that is
            // itself a trained model (already enlarged) is brought back to the resolution first.
            let trainPreprocessing = network.preprocessing.enlarged(by: network.backbone.resolution - network.preprocessing.cropSize)
            let testPreprocessing = trainPreprocessing.enlarged(by: config.testSizeIncrease)
            guard EfficientNetLite.inputSizes.contains(testPreprocessing.cropSize) else {
                throw .model("\(name) would classify at \(testPreprocessing.cropSize) pixels, over the engine's "
                             + "\(EfficientNetLite.inputSizes.upperBound); choose a smaller --test-size-increase")
            }
            func extractor(_ preprocessing: Preprocessing) throws(TrainError) -> FeatureExtractor {
                let cache = try config.cacheRoot.map { root throws(TrainError) in
                    try FeatureCache(root: root, backboneFingerprint: FeatureExtractor.fingerprint(
                                        of: member.tensors, model: member.model.specification, backbone: member.index,
                                        preprocessing: preprocessing),
                                     width: EfficientNetLite.featureCount)
                }
                return FeatureExtractor(network: network, preprocessing: preprocessing, cache: cache, threads: config.threads, kernels: config.kernels)
            }
            let trainExtractor = try extractor(trainPreprocessing)
            let testExtractor = testPreprocessing == trainPreprocessing ? trainExtractor : try extractor(testPreprocessing)

            let started = Date()
            var trainFeatures = try trainExtractor.features(of: train.map(dataset.url), views: trainViews) {
                progress(.extracting(phase: "train" + phase, done: $0, total: $1))
            }
            var validationFeatures = try testExtractor.features(of: validation.map(dataset.url), views: [.center, .mirrored]) {
                progress(.extracting(phase: (crossValidation ? "cross-validation" : "validation") + phase, done: $0, total: $1))
            }
            extractionSeconds += Date().timeIntervalSince(started)
            // Every backbone meets the same unreadable photos; each is listed once.
            let failed = trainFeatures.failures.map { (train[$0.index].path, $0.message) }
                + validationFeatures.failures.map { (validation[$0.index].path, $0.message) }
            for (path, message) in failed where !unreadable.contains(where: { $0.path == path }) {
                unreadable.append((path, message))
            }
            fromCache += trainFeatures.fromCache + validationFeatures.fromCache
            computed += trainFeatures.computed + validationFeatures.computed
            cacheProblem = cacheProblem ?? trainFeatures.cacheProblem ?? validationFeatures.cacheProblem

            // The features become the training matrices in place: rows of unreadable images are dropped, nothing copied.
            let keptTrain = trainFeatures.removeFailed()
            let y = keptTrain.flatMap { Array(repeating: train[$0].label, count: trainViews.count) }
            let x = trainFeatures.features
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
            trainImages = y.count / trainViews.count

            var initial = config.startFromImageNet ? imagenetStart(network: network, keys: startKeys) : nil
            let continued = Self.breedStart(network: network, keys: keys, onto: &initial)
            resumed = max(resumed, continued)
            let trainingStarted = Date()
            let head: SoftmaxHead, history: [EpochMetrics], centerLogits: [Float], mirroredLogits: [Float]
            var chosenEpochs: Int
            if crossValidation {
                // Out-of-fold answers for every photo: each fold's head never saw the photos it answers for.
                let trainFold = keptTrain.map { fold[$0] }, checkFold = keptValidation.map { fold[$0] }
                let fit = HeadTrainer.crossValidate(x: x, y: y, views: trainViews.count, sampleFolds: trainFold,
                                                    vx: vx, mirroredX: mirroredX, vy: vy, checkFolds: checkFold,
                                                    folds: folds, classes: classes, inputs: width,
                                                    options: config.options, initial: initial) { progress(.epoch($0)) }
                var options = config.options
                options.epochs = fit.epochs
                head = HeadTrainer.train(x: x, y: y, vx: [], vy: [], classes: classes, inputs: width,
                                         options: options, initial: initial).head
                (history, centerLogits, mirroredLogits) = (fit.history, fit.centerLogits, fit.mirroredLogits)
                chosenEpochs = fit.epochs
            } else {
                (head, history) = HeadTrainer.train(x: x, y: y, vx: vx, vy: vy, classes: classes, inputs: width,
                                                    options: config.options, initial: initial) { progress(.epoch($0)) }
                (centerLogits, mirroredLogits) = (head.logits(vx), head.logits(mirroredX))
                chosenEpochs = (history.indices.min { history[$0].validationLoss < history[$1].validationLoss } ?? 0) + 1
            }
            // Averaging with the mirrored view is kept only if it helps on the validation images.
            let averagedLogits = zip(centerLogits, mirroredLogits).map { ($0 + $1) / 2 }
            let centerOnly = HeadTrainer.summarize(logits: centerLogits, labels: vy, classes: classes)
            let averaged = HeadTrainer.summarize(logits: averagedLogits, labels: vy, classes: classes)
            let averagesMirror = averaged.loss < centerOnly.loss
            let validationLogits = averagesMirror ? averagedLogits : centerLogits
            // Too few photos to trust a fitted temperature: leave the head's own (label smoothing already tempers it).
            let temperature = vy.count >= Self.minimumCalibrationPhotos
                ? Calibration.temperature(logits: validationLogits, labels: vy, classes: classes) : 1
            trainingSeconds += Date().timeIntervalSince(trainingStarted)
            reports.append(.init(architecture: network.specification.architecture, history: history, epochs: chosenEpochs,
                                 validation: EvaluationReport(logits: validationLogits, labels: vy,
                                                              classNames: dataset.classes, temperature: temperature),
                                 validationTop1CenterOnly: centerOnly.top1, validationTop1MirrorAveraged: averaged.top1,
                                 averagesMirror: averagesMirror))
            var scores: [Int: ArraySlice<Float>] = [:]
            let logProbabilities = stride(from: 0, to: validationLogits.count, by: classes).flatMap {
                Model.logSoftmax(Array(validationLogits[$0..<($0 + classes)]), temperature: temperature)
            }
            for (row, sample) in keptValidation.enumerated() {
                scores[sample] = logProbabilities[(row * classes)..<((row + 1) * classes)]
            }
            validationScores.append(scores)
            // Per checked photo, with the views classify will use: its unit feature direction, and how sure the
            // ImageNet head is that it shows a dog (all of them do).
            var direction: [Int: [Float]] = [:], dog: [Int: Float] = [:]
            let imagenet = network.imagenetHead.flatMap { h in network.specification.imagenetHead.map { (h, $0) } }
            for (row, sample) in keptValidation.enumerated() {
                let views = averagesMirror ? Array(validationFeatures.features(of: row)) : Array(vx[(row * width)..<((row + 1) * width)])
                direction[sample] = Model.direction(views)
                if let (head, d) = imagenet, let logits = try? head.averaged(views, views: views.count / width) {
                    dog[sample] = d.labels.dogProbability(Model.softmax(logits, temperature: d.temperature ?? 1))
                }
            }
            directions.append(direction)
            if imagenet != nil { dogProbabilities.append(dog) }
            // Each breed's prototype: from the training photos, or (cross-validating) from all, each photo later
            // compared without itself. Summed in the photos' order, so the same data gives the same bits.
            var sums = [Float](repeating: 0, count: classes * width)
            if crossValidation {
                for sample in keptValidation {
                    let d = direction[sample]!
                    for k in 0..<width { sums[validation[sample].label * width + k] += d[k] }
                }
            } else {
                for (row, sample) in keptTrain.enumerated() {
                    let d = Model.direction(Array(x[(row * trainViews.count * width)..<((row * trainViews.count + 1) * width)]))
                    for k in 0..<width { sums[train[sample].label * width + k] += d[k] }
                }
            }
            prototypeSums.append(sums)

            var description = network.specification
            description.tensorPrefix = members.count > 1 ? name + "." : ""
            description.averagesMirror = averagesMirror
            description.preprocessing = testPreprocessing
            description.breedHead = HeadDescription(weight: "", bias: "", labels: labels, temperature: temperature)
            written.append(description)
            let memory = network.memory.map { rows in keptMemory.flatMap { rows[($0.offset * width)..<(($0.offset + 1) * width)] } }
            parts.append(ModelWriter.Part(base: member.tensors, source: network.specification,
                                          breedWeight: head.weight, breedBias: head.bias,
                                          prototypes: (0..<classes).flatMap { Model.direction(Array(sums[($0 * width)..<(($0 + 1) * width)])) },
                                          memory: keptMemory.isEmpty ? nil : memory))
        }

        // The backbones together, on the validation images every one of them could read, as classify combines them.
        let common = validation.indices.filter { i in validationScores.allSatisfy { $0[i] != nil } }
        var combined = [Float](), vy = [Int]()
        combined.reserveCapacity(common.count * classes)
        for i in common {
            combined += (0..<classes).map { c in
                validationScores.reduce(Float(0)) { $0 + $1[i]![$1[i]!.startIndex + c] } / Float(validationScores.count)
            }
            vy.append(validation[i].label)
        }
        if vy.count < Self.minimumCalibrationPhotos {
            warnings.append(.notCalibrated(photos: vy.count, needed: Self.minimumCalibrationPhotos))
        }
        let combinedTemperature = members.count > 1 && vy.count >= Self.minimumCalibrationPhotos
            ? Calibration.temperature(logits: combined, labels: vy, classes: classes) : nil
        let report = EvaluationReport(logits: combined, labels: vy, classNames: dataset.classes,
                                      temperature: combinedTemperature ?? 1)

        let first = members[0].model.specification
        var decision = first.decision
        let dog = common.compactMap { i -> Float? in
            let each = dogProbabilities.compactMap { $0[i] }
            return each.count == members.count ? each.reduce(0, +) / Float(each.count) : nil
        }
        decision.noDogBelow = noDogThreshold(validationDogProbabilities: dog, start: decision.noDogBelow)
        // "Not one of my breeds": how like its predicted breed's photos each checked photo is, that breed's
        // prototype built without the photo itself; the threshold lets `otherBreedShare` of them through as other.
        let width = EfficientNetLite.featureCount
        let similarities = common.enumerated().map { row, i -> Float in
            let scores = combined[(row * classes)..<((row + 1) * classes)]
            let predicted = scores.indices.max { scores[$0] < scores[$1] }! - scores.startIndex
            var total: Float = 0
            for (b, sums) in prototypeSums.enumerated() {
                let d = directions[b][i]!
                var prototype = Array(sums[(predicted * width)..<((predicted + 1) * width)])
                if crossValidation && predicted == validation[i].label { for k in 0..<width { prototype[k] -= d[k] } }
                total += zip(d, Model.direction(prototype)).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            }
            return total / Float(prototypeSums.count)
        }
        decision.otherBreedBelow = Self.otherBreedThreshold(heldOutSimilarities: similarities, share: config.otherBreedShare)
        var fingerprint = ContentHash()
        // Paths inside the dataset folder, so that the fingerprint is the dataset's wherever it lies, and a shared
        // model carries no one's home folder.
        let root = dataset.root.path.hasSuffix("/") ? dataset.root.path : dataset.root.path + "/"
        for s in all.sorted(by: { $0.path < $1.path }) {
            let inside = s.path.hasPrefix(root) ? String(s.path.dropFirst(root.count)) : (s.path as NSString).lastPathComponent
            fingerprint.update("\(inside)\t\(s.label)\n")
        }
        var training = [
            "date": ISO8601DateFormatter().string(from: Date()),
            "dataset": dataset.root.standardizedFileURL.lastPathComponent,
            "datasetFingerprint": fingerprint.hex,
            "backbones": architectures.map(Backbone.shortName).joined(separator: "+"),
            "classes": "\(classes)",
            "trainImages": "\(trainImages)",
            "validationImages": "\(vy.count)",
            "validation": crossValidation ? "\(folds)-fold cross-validation" : "held out",
            "imagesPerClass": "\(perClass.values.min() ?? 0)–\(perClass.values.max() ?? 0)",
            "augmentation": config.augmentation.rawValue,
            "testSizeIncrease": "\(config.testSizeIncrease)",
            "seed": "\(config.options.seed)",
            "validationTop1": String(format: "%.4f", report.top1),
            "validationTop5": String(format: "%.4f", report.top5),
        ]
        for (b, r) in reports.enumerated() {
            let key = members.count > 1 ? Backbone.shortName(r.architecture) + "." : ""
            training[key + "epochs"] = "\(r.epochs)"
            training[key + "temperature"] = String(format: "%.4f", written[b].breedHead?.temperature ?? 1)
            training[key + "validationTop1CenterOnly"] = String(format: "%.4f", r.validationTop1CenterOnly)
            training[key + "validationTop1MirrorAveraged"] = String(format: "%.4f", r.validationTop1MirrorAveraged)
            if members.count > 1 { training[key + "validationTop1"] = String(format: "%.4f", r.validation.top1) }
        }
        training["noDogBelow"] = String(format: "%.3f", decision.noDogBelow)
        if let t = decision.otherBreedBelow { training["otherBreedBelow"] = String(format: "%.3f", t) }
        if resumed > 0 { training["resumedClasses"] = "\(resumed)" }
        let model = ModelDescription(source: first.source, backbones: written, decision: decision,
                                     combinedTemperature: combinedTemperature, training: training,
                                     memory: keptMemory.isEmpty ? nil : keptMemory.map(\.element))
        do {
            try ModelWriter.write(model, parts: parts, to: config.output)
        } catch let .cannotWrite(_, reason) {
            throw .output(path: config.output.path, reason: reason)
        } catch {
            throw .output(path: config.output.path, reason: error.description)
        }
        return TrainingReport(classes: dataset.classes, labels: labels, matches: matches, warnings: warnings,
                              crossValidationFolds: crossValidation ? folds : nil, resumedClasses: resumed,
                              memoryKept: keptMemory.count, trainImages: trainImages, validationImages: vy.count,
                              notImages: dataset.skipped, unreadable: unreadable, backbones: reports, validation: report,
                              noDogBelow: decision.noDogBelow,
                              validationNoDogShare: dog.isEmpty ? nil : Float(dog.filter { $0 < decision.noDogBelow }.count) / Float(dog.count),
                              otherBreedBelow: decision.otherBreedBelow,
                              featuresFromCache: fromCache, featuresComputed: computed, cacheProblem: cacheProblem,
                              extractionSeconds: extractionSeconds, trainingSeconds: trainingSeconds)
    }

    /// The "no dog" threshold for a model whose validation photos all show dogs: the base's (0.5) unless more
    /// than 1 % of them fall below it; then lowered until at most 1 % do, but not below `floor`. Stronger
    /// backbones spread their ImageNet belief over more classes (Lite1 and Lite2 put under half of it on dog
    /// classes for 3 % of Stanford Dogs validation photos, Lite0 for under 2 %), while photos without dogs stay
    /// far below the floor: the cats, birds, horses, giraffe, painting and objects of public test images get at
    /// most 12 % from the Lite1+Lite2 model.
    /// With fewer than 100 photos, a 1 % quantile cannot be told, and the floor is used.
    public static func noDogThreshold(validationDogProbabilities p: [Float], start: Float, floor: Float = 0.3) -> Float {
        let sorted = p.sorted()
        guard !sorted.isEmpty else { return start }
        guard sorted.count >= 100 else { return min(start, floor) }
        let allowed = sorted.count / 100  // photos that may fall below
        guard sorted.filter({ $0 < start }).count > allowed else { return start }
        return min(start, max(floor, sorted[allowed]))
    }

    /// Estimated peak memory of a training run: the features of every view of every image, held for the head's
    /// epochs; the head with its gradient and two Adam moments (which matter only with very many classes); plus
    /// the network, its batch buffers and decoding (`workingMemory`).
    public static func memoryNeeded(train: Int, views: Int, validation: Int, classes: Int) -> Int {
        FeatureExtractor.memoryNeeded(samples: train, views: views)
            + FeatureExtractor.memoryNeeded(samples: validation, views: 2)
            + 4 * classes * (EfficientNetLite.featureCount + 1) * MemoryLayout<Float>.size + workingMemory
    }

    /// What training needs besides the features (measured: about 120 MB; decoding a very large PNG needs more).
    public static let workingMemory = 200 << 20

    /// Folds of the cross-validation used when there are too few photos to hold some out.
    static let folds = 5
    /// Below this many photos a class gets a warning: the head can learn it, but its answers will be shaky.
    public static let recommendedPhotos = 10
    /// A temperature is fitted only on at least this many held-out answers; below, the head's own is kept.
    /// (The fit itself is smoothed by Laplace's rule, so that a few answers all right do not mean certainty.)
    public static let minimumCalibrationPhotos = 10

    /// The starting head: each class's row of the ImageNet classifier, found by any of its `keys` (the folder
    /// name, then the Stanford Dogs keys of the catalogue breed it matched), zeros for the others.
    static func imagenetStart(network: EfficientNetLite, keys: [[String]]) -> SoftmaxHead? {
        var start: SoftmaxHead? = nil
        copyRows(from: network.imagenetHead, labels: network.specification.imagenetHead?.labels, keys: keys, onto: &start)
        return start
    }

    /// A base that is a trained model: its breed head's rows for the classes it already knows (by key) replace
    /// the starting rows, so that training again continues where it left off. Returns how many did.
    static func breedStart(network: EfficientNetLite, keys: [String], onto start: inout SoftmaxHead?) -> Int {
        copyRows(from: network.breedHead, labels: network.specification.breedHead?.labels, keys: keys.map { [$0] }, onto: &start)
    }

    /// Class c's row becomes the row of `head` whose label key is the first of `keys[c]` it has; `start` (zeros
    /// if nil) changes only if some class found one. Returns how many did.
    @discardableResult
    static func copyRows(from head: Linear?, labels: [Label]?, keys: [[String]], onto start: inout SoftmaxHead?) -> Int {
        guard let head, let labels else { return 0 }
        let row = Dictionary(labels.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        var matched = 0, result = start ?? SoftmaxHead(classes: keys.count, inputs: head.inputs)
        for (c, names) in keys.enumerated() {
            guard let r = names.lazy.compactMap({ row[$0] }).first else { continue }
            result.setRow(c, from: head, row: r)
            matched += 1
        }
        if matched > 0 { start = result }
        return matched
    }

    /// Each sample's fold: per class, a seeded shuffle dealt round the folds, so every class is spread evenly.
    public static func stratifiedFolds(_ samples: [Dataset.Sample], folds: Int, seed: UInt64) -> [Int] {
        var rng = SplitMix64(seed: seed &+ 0x5F0D)
        var fold = [Int](repeating: 0, count: samples.count)
        for label in Set(samples.map(\.label)).sorted() {
            var members = samples.indices.filter { samples[$0].label == label }
            rng.shuffle(&members)
            for (n, i) in members.enumerated() { fold[i] = n % folds }
        }
        return fold
    }

    /// The similarity below which a dog counts as none of the model's breeds: the `share` quantile of held-out
    /// photos of its own breeds (nil without any).
    public static func otherBreedThreshold(heldOutSimilarities s: [Float], share: Float) -> Float? {
        guard !s.isEmpty, share > 0 else { return nil }
        let sorted = s.sorted()
        return sorted[min(sorted.count - 1, Int(Float(sorted.count) * share))]
    }
}

/// Something the user should know about a training run; it went on regardless.
public enum TrainWarning: Sendable, Equatable, CustomStringConvertible {
    /// A class with fewer photos than `Trainer.recommendedPhotos`.
    case fewPhotos(className: String, photos: Int)
    /// Too few photos to hold some out: every photo was answered by a head trained without it.
    case crossValidated(folds: Int, photos: Int)
    /// Too few held-out answers to fit a temperature; confidences are the head's own.
    case notCalibrated(photos: Int, needed: Int)

    public var description: String {
        switch self {
        case let .fewPhotos(name, n):
            return "\(name) has only \(n) photo\(n == 1 ? "" : "s"): too few to learn it well. "
                + "\(Trainer.recommendedPhotos) or more help; 30 give steadier answers."
        case let .crossValidated(folds, n):
            return "\(n) photos are too few to set some aside for validation: the number of epochs and the "
                + "confidences were chosen by \(folds)-fold cross-validation, each photo answered by a head trained "
                + "without it. Confidences are honest to about ±\(Int((100 / Double(max(1, n)).squareRoot()).rounded())) points."
        case let .notCalibrated(n, needed):
            return "only \(n) photos to check confidences on (\(needed) needed): they are left as the head gives "
                + "them, not calibrated. Add photos to calibrate."
        }
    }
}

extension Label {
    /// A label for an ImageFolder class: the folder name is the key; the name drops a leading WordNet id
    /// (`n02085620-`) and turns underscores into spaces.
    public init(folder: String) {
        var name = folder
        if let dash = folder.firstIndex(of: "-"), folder.first == "n", folder[folder.index(after: folder.startIndex)..<dash].allSatisfy(\.isNumber) {
            name = String(folder[folder.index(after: dash)...])
        }
        self.init(key: folder, name: name.replacingOccurrences(of: "_", with: " "), isDog: true)
    }
}
