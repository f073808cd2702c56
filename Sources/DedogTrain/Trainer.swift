import Foundation
import DedogFiles
import DedogNN

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
    /// Start from the base model's ImageNet classifier rows for classes whose folder names its labels.
    public var startFromImageNet = true
    public var baseModel: URL
    public var output: URL
    /// nil: no cache.
    public var cacheRoot: URL?
    public var threads = 2
    /// If set, training refuses to start when its estimated peak memory (`Trainer.memoryNeeded`) is larger.
    public var memoryLimit: Int?
    public var options = TrainingOptions()

    public init(dataset: URL, baseModel: URL, output: URL) {
        self.dataset = dataset
        self.baseModel = baseModel
        self.output = output
    }
}

/// Progress of a training run, for a progress bar.
public enum TrainProgress: Sendable {
    case extracting(phase: String, done: Int, total: Int)
    case epoch(EpochMetrics)
}

public struct TrainingReport: Sendable {
    public var classes: [String]
    /// Images actually used (unreadable ones are in `unreadable`).
    public var trainImages: Int
    public var validationImages: Int
    /// Files in class folders that are not images (ignored).
    public var notImages: [(path: String, reason: String)]
    /// Images that could not be read or decoded (skipped; training went on without them).
    public var unreadable: [(path: String, reason: String)]
    public var history: [EpochMetrics]
    public var validation: EvaluationReport
    public var validationTop1CenterOnly: Float
    public var validationTop1MirrorAveraged: Float
    /// Whether the model averages each photo with its mirror image (chosen on the validation loss).
    public var averagesMirror: Bool
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

    public var views: [FeatureView] {
        switch self {
        case .none: return [.center]
        case .mirror: return [.center, .mirrored]
        case .crops: return [.center, .mirrored, .wide, .zoomed]
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

        let tensors: SafeTensors, network: EfficientNetLite
        do {
            tensors = try SafeTensors(contentsOf: config.baseModel)
            network = try EfficientNetLite(tensors: tensors)
        } catch {
            throw .model(error.description)
        }
        let cache = try config.cacheRoot.map { root throws(TrainError) in
            try FeatureCache(root: root, backboneFingerprint: FeatureExtractor.fingerprint(of: tensors, model: network.model),
                             width: EfficientNetLite.featureCount)
        }
        let extractor = FeatureExtractor(network: network, cache: cache, threads: config.threads)

        let started = Date()
        var unreadable: [(path: String, reason: String)] = []
        var trainFeatures = try extractor.features(of: train.map(dataset.url), views: trainViews) {
            progress(.extracting(phase: "train", done: $0, total: $1))
        }
        var validationFeatures = try extractor.features(of: validation.map(dataset.url), views: [.center, .mirrored]) {
            progress(.extracting(phase: "validation", done: $0, total: $1))
        }
        let extractionSeconds = Date().timeIntervalSince(started)
        for failure in trainFeatures.failures { unreadable.append((train[failure.index].path, failure.message)) }
        for failure in validationFeatures.failures { unreadable.append((validation[failure.index].path, failure.message)) }

        // The features become the training matrices in place: rows of unreadable images are dropped, nothing copied.
        let y = trainFeatures.removeFailed().flatMap { Array(repeating: train[$0].label, count: trainViews.count) }
        let x = trainFeatures.features
        let vy = validationFeatures.removeFailed().map { validation[$0].label }
        let width = EfficientNetLite.featureCount
        var vx = [Float](), mirroredX = [Float]()
        for i in vy.indices {
            let both = validationFeatures.features(of: i)
            vx += both.prefix(width)
            mirroredX += both.suffix(width)
        }
        guard !y.isEmpty else { throw .datasetTooSmall(path: dataset.root.path, detail: "no training image could be read") }

        let initial = config.startFromImageNet ? imagenetStart(network: network, classes: dataset.classes) : nil
        let trainingStarted = Date()
        let (head, history) = HeadTrainer.train(x: x, y: y, vx: vx, vy: vy, classes: dataset.classes.count, inputs: width,
                                                options: config.options, initial: initial) { progress(.epoch($0)) }
        // Averaging with the mirrored view is kept only if it helps on the validation images.
        let centerLogits = head.logits(vx)
        let averagedLogits = zip(centerLogits, head.logits(mirroredX)).map { ($0 + $1) / 2 }
        let classes = dataset.classes.count
        let centerOnly = HeadTrainer.summarize(logits: centerLogits, labels: vy, classes: classes)
        let averaged = HeadTrainer.summarize(logits: averagedLogits, labels: vy, classes: classes)
        let averagesMirror = averaged.loss < centerOnly.loss
        let validationLogits = averagesMirror ? averagedLogits : centerLogits
        let temperature = Calibration.temperature(logits: validationLogits, labels: vy, classes: classes)
        let trainingSeconds = Date().timeIntervalSince(trainingStarted)
        let report = EvaluationReport(logits: validationLogits, labels: vy, classNames: dataset.classes, temperature: temperature)

        var model = network.model
        model.averagesMirror = averagesMirror
        model.breedHead = HeadDescription(weight: ModelWriter.breedWeight, bias: ModelWriter.breedBias,
                                          labels: dataset.classes.map(Label.init(folder:)), temperature: temperature)
        let counts = Dictionary(grouping: train, by: \.label).mapValues(\.count)
        var fingerprint = ContentHash()
        // Paths inside the dataset folder, so that the fingerprint is the dataset's wherever it lies, and a shared
        // model carries no one's home folder.
        let root = dataset.root.path.hasSuffix("/") ? dataset.root.path : dataset.root.path + "/"
        for s in (train + validation).sorted(by: { $0.path < $1.path }) {
            let inside = s.path.hasPrefix(root) ? String(s.path.dropFirst(root.count)) : (s.path as NSString).lastPathComponent
            fingerprint.update("\(inside)\t\(s.label)\n")
        }
        model.training = [
            "date": ISO8601DateFormatter().string(from: Date()),
            "dataset": dataset.root.standardizedFileURL.lastPathComponent,
            "datasetFingerprint": fingerprint.hex,
            "classes": "\(dataset.classes.count)",
            "trainImages": "\(y.count / trainViews.count)",
            "validationImages": "\(vy.count)",
            "imagesPerClass": "\(counts.values.min() ?? 0)–\(counts.values.max() ?? 0)",
            "augmentation": config.augmentation.rawValue,
            "seed": "\(config.options.seed)",
            "epochs": "\(history.count)",
            "validationTop1": String(format: "%.4f", report.top1),
            "validationTop5": String(format: "%.4f", report.top5),
            "temperature": String(format: "%.4f", temperature),
            "validationTop1CenterOnly": String(format: "%.4f", centerOnly.top1),
            "validationTop1MirrorAveraged": String(format: "%.4f", averaged.top1),
        ]
        do {
            try ModelWriter.write(base: tensors, model: model, breedWeight: head.weight, breedBias: head.bias, to: config.output)
        } catch let .cannotWrite(_, reason) {
            throw .output(path: config.output.path, reason: reason)
        } catch {
            throw .output(path: config.output.path, reason: error.description)
        }
        return TrainingReport(classes: dataset.classes, trainImages: y.count / trainViews.count, validationImages: vy.count,
                              notImages: dataset.skipped, unreadable: unreadable, history: history, validation: report,
                              validationTop1CenterOnly: centerOnly.top1, validationTop1MirrorAveraged: averaged.top1,
                              averagesMirror: averagesMirror,
                              featuresFromCache: trainFeatures.fromCache + validationFeatures.fromCache,
                              featuresComputed: trainFeatures.computed + validationFeatures.computed,
                              cacheProblem: trainFeatures.cacheProblem ?? validationFeatures.cacheProblem,
                              extractionSeconds: extractionSeconds, trainingSeconds: trainingSeconds)
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

    /// The ImageNet classifier's rows for the classes it knows by the same key (for Stanford Dogs, all 120),
    /// zeros for the others: training starts where the pretrained network already is.
    static func imagenetStart(network: EfficientNetLite, classes: [String]) -> SoftmaxHead? {
        guard let head = network.imagenetHead, let labels = network.model.imagenetHead?.labels else { return nil }
        let width = head.inputs
        var start = SoftmaxHead(classes: classes.count, inputs: width)
        var matched = 0
        for (c, name) in classes.enumerated() {
            guard let row = labels.firstIndex(where: { $0.key == name }), let (weight, bias) = head.row(row) else { continue }
            for k in 0..<width { start.weight[c * width + k] = weight[k] }
            start.bias[c] = bias
            matched += 1
        }
        return matched > 0 ? start : nil
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
