import Foundation
import DedogNN
import DedogTrain
import DedogCatalogue
import DedogImage

// `dedog train` and `dedog evaluate` through the facade: settings in the facade's own words, the trainer's reports
// out. The reports are values of the trainer's (what training found); the engine's types stay behind this door.

/// What training found: per backbone, its epochs and validation; the classes, the warnings, the photos left out.
public typealias TrainingReport = DedogTrain.TrainingReport
/// What stopped training or evaluation.
public typealias TrainingError = DedogTrain.TrainError
/// A step of training or evaluation, for a progress display.
public typealias TrainingProgress = DedogTrain.TrainProgress
/// Top-1 and top-5, calibration, verdicts and the most confused classes of a model on a dataset.
public typealias EvaluationReport = DedogTrain.EvaluationReport
/// Extra views of each training photo.
public typealias Augmentation = DedogTrain.Augmentation

/// What `Training.run` is asked to do.
public struct TrainingSettings: Sendable {
    /// A folder with one sub-folder of photos per class.
    public var dataset: URL
    /// The model files to take the pretrained backbones from (every backbone each holds), or one trained before to
    /// resume from (its heads for the classes it knows, its confirmed photos).
    public var baseModels: [URL]
    /// Where to write the model file (replaced atomically).
    public var output: URL
    /// Only the photos listed in this file (`<class>/<file>` per line).
    public var split: URL?
    /// Validate on the photos listed here instead of a random part of each class.
    public var validationSplit: URL?
    public var validationFraction = 0.1
    public var augmentation: Augmentation = .mirror
    /// Classify at a crop this many pixels larger than training uses (0: off).
    public var testSizeIncrease = TrainingSettings.defaultTestSizeIncrease
    /// How photos that are not square become the network's square; nil: pad, or the fit of the model resumed.
    public var fit: PhotoFit?
    /// The feature cache's folder; nil, none.
    public var cacheRoot: URL?
    public var threads = 2
    public var kernels: Kernels = .best
    /// Refuse to start a run that would need more memory than this many bytes.
    public var memoryLimit: Int?
    public var epochs = 60
    public var learningRate: Float = 1e-4
    public var weightDecay: Float = 1e-4
    public var labelSmoothing: Float = 0.1
    /// Same data, same seed, same model.
    public var seed: UInt64 = 1
    /// The catalogue class folders are matched against (nil: folder names are labels only).
    public var catalogue: Catalogue?
    /// Whether the model gets the dog detector of its first backbone (bundled for Lite0 and Lite1: a detector
    /// belongs to the frozen backbone, so it needs no boxes of the user's photos).
    public var includesDetector = true

    /// +32 pixels: 1 point more on Stanford Dogs.
    public static let defaultTestSizeIncrease = Backbone.testSizeIncrease

    public init(dataset: URL, baseModels: [URL], output: URL) {
        self.dataset = dataset
        self.baseModels = baseModels
        self.output = output
    }

    var configuration: TrainConfiguration {
        var c = TrainConfiguration(dataset: dataset, baseModels: baseModels, output: output)
        c.split = split
        c.validationSplit = validationSplit
        c.validationFraction = validationFraction
        c.augmentation = augmentation
        c.testSizeIncrease = testSizeIncrease
        c.fit = fit?.engine
        c.cacheRoot = cacheRoot
        c.threads = threads
        c.kernels = kernels.kernelSet
        c.memoryLimit = memoryLimit
        c.options.epochs = epochs
        c.options.learningRate = learningRate
        c.options.weightDecay = weightDecay
        c.options.labelSmoothing = labelSmoothing
        c.options.seed = seed
        c.catalogue = catalogue
        return c
    }
}

/// Training and evaluating models on a folder of photos.
public enum Training {
    /// Trains a breed classifier on `settings.dataset` and writes it to `settings.output`; `progress` hears of
    /// each step (it may end the process between steps: nothing is half-written then).
    public static func run(_ settings: TrainingSettings,
                           progress: (TrainingProgress) -> Void = { _ in }) throws(TrainingError) -> TrainingReport {
        var configuration = settings.configuration
        configuration.detectors = settings.includesDetector ? ModelLocator.detectors() : []
        return try Trainer.run(configuration, progress: progress)
    }

    /// How the model at `model` does on `dataset` (or the photos `split` lists): top-1 and top-5, calibration,
    /// verdicts; at `precision` (nil: what classify would run) and, when given, another `fit` than the model's.
    public static func evaluate(model: URL, dataset: URL, split: URL?, cacheRoot: URL?, threads: Int, kernels: Kernels = .best,
                                precision: Precision? = nil, memoryLimit: Int? = nil, fit: PhotoFit? = nil,
                                progress: (TrainingProgress) -> Void = { _ in }) throws(TrainingError) -> EvaluationReport {
        try Evaluator.run(model: model, dataset: dataset, split: split, cacheRoot: cacheRoot, threads: threads,
                          kernels: kernels.kernelSet, precision: precision?.engine, memoryLimit: memoryLimit, fit: fit?.engine,
                          progress: progress)
    }

    /// The photos of a dataset folder (or those `split` lists), each with its class folder's name.
    public static func photos(in dataset: URL, split: URL?) throws(TrainingError) -> [(url: URL, folder: String)] {
        let data = try Dataset(root: dataset)
        let samples = try split.map { url throws(TrainingError) in try data.samples(listedIn: url) } ?? data.samples
        return samples.map { (url: data.url($0), folder: data.classes[$0.label]) }
    }

    /// The feature cache's usual folder: `$XDG_CACHE_HOME/dedog/features`, else `~/.cache/dedog/features`, from the
    /// environment the front end passes (the library reads none).
    public static func defaultCacheRoot(environment: [String: String]) -> URL {
        FeatureCache.defaultRoot(environment: environment)
    }

    /// The memory this process can still take (the machine's available memory, or its cgroup's limit), if known.
    public static var availableMemory: Int? { SystemMemory.available }
}
