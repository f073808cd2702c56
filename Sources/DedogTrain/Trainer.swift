import Foundation
import DedogFiles
import DedogNN
import DedogBreedModel
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
    /// How photos that are not square become the network's square, in training and then in classify (the model
    /// file keeps it). Nil: `pad` on an ImageNet base, the base's own fit on a trained one (`--resume`). On 400
    /// non-square photos of 20 breeds (3:2 and 2:3 middles of Stanford train photos, trained on 800 others, Lite0),
    /// top-1 was 94.0 % cropped, 96.75 % padded, 97.0 % squeezed.
    public var fit: InputDescription.Fit?
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
    /// Dog detector files (`scripts/train_dog_detector.py` writes them; `models/dog-detector-lite1.safetensors`),
    /// each trained for one backbone: the one for the model's first backbone goes into the model written. A detector
    /// belongs to its frozen backbone, not to the breeds, so a model of any photos finds every dog.
    public var detectors: [URL] = []

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

        init(base: BaseBackbone, fit: BackboneFit, validationLabels: [Int], classNames: [String]) {
            architecture = base.description.architecture
            history = fit.history
            epochs = fit.epochs
            validation = EvaluationReport(logits: fit.validationLogits, labels: validationLabels, classNames: classNames,
                                          temperature: fit.temperature)
            validationTop1CenterOnly = fit.centerOnlyTop1
            validationTop1MirrorAveraged = fit.mirrorAveragedTop1
            averagesMirror = fit.averagesMirror
        }
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
    public var confirmedPhotosKept: Int
    /// The breeds the base model was taught (`dedog learn`) that the data set does not train: taught again.
    public var taughtBreedsKept: [String]
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
    /// The "no dog" threshold chosen on the validation photos, and the share of them (all dogs) answered "no dog".
    public var noDogBelow: Float
    public var validationNoDogShare: Float?
    /// The "not one of my breeds" threshold (see `DecisionThresholds.otherBreedBelow`).
    public var otherBreedBelow: Float?
    /// With the ImageNet head's vote (`DecisionThresholds.breedVote`): how many of the model's breeds that head
    /// knows, whose "not one of my breeds" it can overrule; nil without the vote.
    public var breedsTheImageNetHeadKnows: Int? = nil
    public var featuresFromCache: Int
    public var featuresComputed: Int
    /// Why the feature cache stopped storing, if it did (training went on without it).
    public var cacheProblem: String?
    public var extractionSeconds: Double
    public var trainingSeconds: Double
    /// The dog detector put into the model (its backbone's), if there was one for it.
    public var detector: DetectorDescription?
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
    /// Trains a breed head on each base backbone and writes the model: the stages of `TrainingStages.swift`, in order.
    public static func run(_ config: TrainConfiguration, progress: (TrainProgress) -> Void = { _ in })
        throws(TrainError) -> TrainingReport {
        try checkOutput(config.output)
        let dataset = try Dataset(root: config.dataset)
        let split = try TrainingSplit(dataset: dataset, configuration: config)
        let bases = try BaseBackbone.load(config.baseModels)
        let names = ClassNames(classes: dataset.classes, catalogue: config.catalogue)
        let carried = CarriedOver(bases: bases, configuration: config, keys: names.labels.map(\.key))
        var tally = ExtractionTally()
        let (features, fits) = try fitHeads(bases, split: split, dataset: dataset, names: names, configuration: config,
                                            tally: &tally, progress: progress)
        let ensemble = EnsembleFit(fits, validation: split.validation, classes: dataset.classes.count)
        let report = EvaluationReport(logits: ensemble.combined, labels: ensemble.labels, classNames: dataset.classes,
                                      temperature: ensemble.temperature ?? 1)
        let thresholds = ThresholdFit(base: bases[0].model.specification.decision, fits: fits, ensemble: ensemble,
                                      validation: split.validation, crossValidated: split.isCrossValidated,
                                      otherBreedShare: config.otherBreedShare)
        let backbones = zip(bases, zip(fits, features)).map { base, fit in
            TrainingReport.Backbone(base: base, fit: fit.0, validationLabels: fit.1.vy, classNames: dataset.classes)
        }
        let record = TrainingRecord(split: split, dataset: dataset, configuration: config, backbones: backbones,
                                    trainImages: features[features.count - 1].keptTrain.count, report: report,
                                    thresholds: thresholds.decision, resumedClasses: fits.map(\.resumedClasses).max() ?? 0)
        let ranges = try activationRanges(bases, features: features, split: split, dataset: dataset, configuration: config)
        try write(bases: bases, fits: fits, features: features, ranges: ranges, names: names, ensemble: ensemble,
                  thresholds: thresholds, record: record, confirmedPhotos: carried.photos, to: config.output)
        // The 8-bit answers' own temperatures, on the photos that calibrated the float ones (not when
        // cross-validating: there every photo also trained the head that would answer for it).
        if !split.isCrossValidated {
            try fitInt8Temperatures(config.output, photos: split.validation.map(dataset.url),
                                    labels: split.validation.map(\.label), configuration: config) { b, done, total in
                progress(.extracting(phase: "validation, 8-bit" + (bases.count > 1 ? " (\(bases[b].name))" : ""),
                                     done: done, total: total))
            }
        }
        if let resumed = carried.model, !carried.taught.isEmpty {
            try teach(carried.taught, from: resumed, to: config.output)
        }
        let detector = try installDetector(config.detectors, into: config.output)
        var trained = TrainingReport(dataset: dataset, names: names, split: split, carried: carried, record: record, report: report,
                                     backbones: backbones, ensemble: ensemble, thresholds: thresholds, tally: tally,
                                     imagenetLabels: bases[0].description.imagenetHead?.labels ?? [])
        trained.detector = detector
        return trained
    }

    /// The detector among `files` trained for the first backbone of the model at `url`, put into it; nil when none is.
    static func installDetector(_ files: [URL], into url: URL) throws(TrainError) -> DetectorDescription? {
        do throws(ModelError) {
            let model = try SafeTensors(contentsOf: url)
            let description = try ModelDescription(from: model)
            guard let first = description.backbones.first else { return nil }
            for file in files {
                let tensors = try SafeTensors(contentsOf: file)
                let detector = try ModelFile.detectorDescription(in: tensors)
                guard detector.architecture == first.architecture else { continue }
                try ModelFile.replacingDetector(of: model, model: description, with: tensors, to: url)
                return detector
            }
            return nil
        } catch {
            throw .model(error)
        }
    }

    /// Each base backbone's features of the photos and the breed head fitted on them, started from the ImageNet
    /// classifier's rows (and from a resumed model's own rows).
    static func fitHeads(_ bases: [BaseBackbone], split: TrainingSplit, dataset: Dataset, names: ClassNames,
                         configuration config: TrainConfiguration, tally: inout ExtractionTally,
                         progress: (TrainProgress) -> Void) throws(TrainError) -> ([BackboneFeatures], [BackboneFit]) {
        var fits: [BackboneFit] = [], features: [BackboneFeatures] = []
        let keys = names.labels.map(\.key)
        for base in bases {
            features.append(try BackboneFeatures.extract(base, split: split, dataset: dataset, configuration: config,
                                                         phase: bases.count > 1 ? " (\(base.name))" : "", tally: &tally,
                                                         progress: progress))
            let started = Date()
            var start = config.startFromImageNet ? imagenetStart(heads: base.heads, source: base.description, keys: names.startKeys) : nil
            let resumed = breedStart(heads: base.heads, source: base.description, keys: keys, onto: &start)
            fits.append(BackboneFit.fit(features[features.count - 1], classes: dataset.classes.count,
                                        folds: split.folds.map { ($0, split.fold) }, start: start, resumedClasses: resumed,
                                        imagenet: base.heads.imagenet.flatMap { h in base.description.imagenetHead.map { (h, $0) } },
                                        options: config.options, progress: progress))
            tally.trainingSeconds += Date().timeIntervalSince(started)
        }
        return (features, fits)
    }

    /// The 8-bit engine's activation ranges of each backbone, on training photos prepared as classify will prepare them.
    static func activationRanges(_ bases: [BaseBackbone], features: [BackboneFeatures], split: TrainingSplit, dataset: Dataset,
                                 configuration config: TrainConfiguration) throws(TrainError) -> [ActivationRanges] {
        let photos = ActivationCalibration.spread(split.train.map(dataset.url), count: ActivationCalibration.defaultPhotos)
        var ranges: [ActivationRanges] = []
        for (base, f) in zip(bases, features) {
            ranges.append(try ActivationCalibration.ranges(of: base.network, photos: photos, threads: config.threads,
                                                           kernels: config.kernels, input: f.testInput).ranges)
        }
        return ranges
    }

    /// Adds to the model just written the breeds `keys` that `base` was taught, with their confirmed photos, each
    /// made again from its photos against the new heads (`TaughtBreed.write`).
    static func teach(_ keys: [String], from base: Model, to output: URL) throws(TrainError) {
        try writing(output) { () throws(ModelError) in
            let file = try SafeTensors(contentsOf: output)
            let stored = try ModelDescription(from: file)
            var model = stored
            let taught = Set(keys), trained = Set(stored.backbones.first?.breedHead?.labels.map(\.key) ?? [])
            for b in model.backbones.indices where base.specification.backbones.indices.contains(b) {
                model.backbones[b].breedHead?.labels += base.specification.backbones[b].breedHead?.labels.filter { taught.contains($0.key) } ?? []
            }
            let photos = base.confirmedPhotos.filter { trained.contains($0.label) || taught.contains($0.label) }
            try TaughtBreed.write(file, stored: stored, as: model, confirmed: photos, to: output)
        }
    }

    /// Fits the 8-bit temperatures of the model just written (`Int8Temperatures`) and writes its description again.
    static func fitInt8Temperatures(_ output: URL, photos: [URL], labels: [Int], configuration config: TrainConfiguration,
                                    progress: (Int, Int, Int) -> Void) throws(TrainError) {
        let file: SafeTensors, model: Model
        do {
            file = try SafeTensors(contentsOf: output)
            model = try Model(tensors: file, precision: .int8, kernels: config.kernels)
        } catch {
            throw .model(error)
        }
        let description = try Int8Temperatures.fit(model, photos: photos, labels: labels, threads: config.threads,
                                                   kernels: config.kernels, progress: progress)
        guard description != model.specification else { return }
        try writing(output) { () throws(ModelError) in try ModelFile.replacingDescription(of: file, with: description, to: output) }
    }

    /// Runs `write`, which writes the model file `output`, and says what went wrong as a problem with the output.
    static func writing(_ output: URL, _ write: () throws(ModelError) -> Void) throws(TrainError) {
        do {
            try write()
        } catch let .cannotWrite(_, reason) {
            throw .output(path: output.path, reason: reason)
        } catch {
            throw .output(path: output.path, reason: error.description)
        }
    }

    /// Fails before the long part if the model could not be written anyway.
    static func checkOutput(_ output: URL) throws(TrainError) {
        let folder = output.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .output(path: output.path, reason: "the folder \(folder) does not exist")
        }
        guard access(folder, W_OK) == 0 else {
            let reason = errno == EROFS ? FileError.readOnly.description : "the folder \(folder) is not writable"
            throw .output(path: output.path, reason: reason)
        }
        if FileManager.default.fileExists(atPath: output.path, isDirectory: &isFolder), isFolder.boolValue {
            throw .output(path: output.path, reason: "it is a folder; give a file name such as mydogs.safetensors")
        }
    }

    /// What the user should know about the photos: classes with few of them, cross-validation, no calibration.
    static func warnings(split: TrainingSplit, classes: [String], calibrationPhotos: Int) -> [TrainWarning] {
        var warnings: [TrainWarning] = classes.indices.compactMap { c in
            let n = split.perClass[c] ?? 0
            return n < recommendedPhotos ? .fewPhotos(className: classes[c], photos: n) : nil
        }
        if let folds = split.folds { warnings.append(.crossValidated(folds: folds, photos: split.all.count)) }
        if calibrationPhotos < minimumCalibrationPhotos {
            warnings.append(.notCalibrated(photos: calibrationPhotos, needed: minimumCalibrationPhotos))
        }
        return warnings
    }

    /// The model file: each base backbone with its fitted breed head, prototypes and input, the thresholds, the
    /// combined temperature, the training record and the confirmed photos kept.
    static func write(bases: [BaseBackbone], fits: [BackboneFit], features: [BackboneFeatures], ranges: [ActivationRanges],
                      names: ClassNames, ensemble: EnsembleFit, thresholds: ThresholdFit, record: TrainingRecord,
                      confirmedPhotos: ConfirmedPhotos?, to output: URL) throws(TrainError) {
        var written: [BackboneDescription] = [], parts: [ModelFile.Part] = []
        for (b, (base, (fit, f))) in zip(bases, zip(fits, features)).enumerated() {
            var description = base.description
            description.activationRanges = ranges[b]
            description.tensorPrefix = bases.count > 1 ? base.name + "." : ""
            description.averagesMirror = fit.averagesMirror
            description.preprocessing = f.testInput
            description.breedHead = HeadDescription(weight: "", bias: "", labels: names.labels, temperature: fit.temperature)
            written.append(description)
            parts.append(ModelFile.Part(base: base.tensors, source: base.description, breedWeight: fit.head.weight,
                                        breedBias: fit.head.bias, prototypes: fit.prototypes))
        }
        let model = ModelDescription(source: bases[0].model.specification.source, backbones: written,
                                     decision: thresholds.decision, combinedTemperature: ensemble.temperature,
                                     training: record.fields)
        try writing(output) { () throws(ModelError) in
            try ModelFile.write(model, parts: parts, confirmedPhotos: confirmedPhotos, to: output)
        }
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
    static func imagenetStart(heads: BackboneHeads, source: BackboneDescription, keys: [[String]]) -> SoftmaxHead? {
        var start: SoftmaxHead? = nil
        copyRows(from: heads.imagenet, labels: source.imagenetHead?.labels, keys: keys, onto: &start)
        return start
    }

    /// A base that is a trained model: its breed head's rows for the classes it already knows (by key) replace
    /// the starting rows, so that training again continues where it left off. Returns how many did.
    static func breedStart(heads: BackboneHeads, source: BackboneDescription, keys: [String], onto start: inout SoftmaxHead?) -> Int {
        copyRows(from: heads.breed, labels: source.breedHead?.labels, keys: keys.map { [$0] }, onto: &start)
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

/// What a base that is itself a trained model with these breeds (`--resume`) passes on: its heads start the new ones
/// (`Trainer.breedStart`), its confirmed photos of breeds still trained are kept, and the breeds it was taught
/// (`dedog learn`) that the data set does not train are taught again from their photos.
struct CarriedOver {
    /// The resumed model, when there is one base and it is a trained model.
    let model: Model?
    /// Keys of the breeds taught again.
    let taught: [String]
    /// The confirmed photos the new model keeps, of trained breeds (taught ones are added with them).
    let photos: ConfirmedPhotos?
    /// Keys of the data set's classes.
    let keys: [String]

    init(bases: [BaseBackbone], configuration config: TrainConfiguration, keys: [String]) {
        model = config.baseModels.count == 1 ? bases.first?.model : nil
        taught = (model?.breedLabels ?? []).filter { $0.taught != nil && !keys.contains($0.key) }.map(\.key)
        photos = model?.confirmedPhotos.filter { keys.contains($0.label) }
        self.keys = keys
    }
}

extension TrainingReport {
    /// The report of a run, from what its stages made.
    init(dataset: Dataset, names: ClassNames, split: TrainingSplit, carried: CarriedOver, record: TrainingRecord,
         report: EvaluationReport, backbones: [Backbone], ensemble: EnsembleFit, thresholds: ThresholdFit,
         tally: ExtractionTally, imagenetLabels: [Label]) {
        let taught = Set(carried.taught)
        self.init(classes: dataset.classes, labels: names.labels, matches: names.matches,
                  warnings: Trainer.warnings(split: split, classes: dataset.classes, calibrationPhotos: ensemble.labels.count),
                  crossValidationFolds: split.folds, resumedClasses: record.resumedClasses,
                  confirmedPhotosKept: carried.model?.confirmedPhotos.filter { carried.keys.contains($0.label) || taught.contains($0.label) }.count ?? 0,
                  taughtBreedsKept: (carried.model?.breedLabels ?? []).filter { taught.contains($0.key) }.map(\.name),
                  trainImages: record.trainImages, validationImages: ensemble.labels.count, notImages: dataset.skipped,
                  unreadable: tally.unreadable, backbones: backbones, validation: report,
                  noDogBelow: thresholds.decision.noDogBelow, validationNoDogShare: thresholds.noDogShare,
                  otherBreedBelow: thresholds.decision.otherBreedBelow, featuresFromCache: tally.fromCache,
                  featuresComputed: tally.computed, cacheProblem: tally.cacheProblem,
                  extractionSeconds: tally.extractionSeconds, trainingSeconds: tally.trainingSeconds)
        if thresholds.decision.breedVote != nil {
            breedsTheImageNetHeadKnows = names.labels.imagenetCounterparts(in: imagenetLabels).filter { !$0.isEmpty }.count
        }
    }
}
