import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

struct Train: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train a breed classifier on your own folder of photos (transfer learning).",
        discussion: """
            DATASET is a folder with one sub-folder per breed (the sub-folder's name is the label), photos \
            inside (JPEG, PNG, HEIC, AVIF or WebP, found by content). The pretrained EfficientNet-Lite backbones (Lite1 and \
            Lite2 unless --backbone says otherwise) stay frozen; dedog computes their 1280 features once per \
            photo (cached on disk, so a second run skips this) and trains a softmax classifier on each, \
            starting from the ImageNet classifier where the folder names match its classes (as the Stanford \
            Dogs folders do). Confidences are calibrated on the validation images (temperature scaling), each \
            backbone's and then their combination's, in floats and again in 8 bits (the int8 answers classify gives \
            by default). The output is one model file for `dedog classify --model`.

            Backbones: lite0 is the fastest (about 9 ms a photo on one core), lite1 and lite2 are 1.5 and 2 times \
            slower and 1 and 3 points more accurate on Stanford Dogs; lite1+lite2 combines both (the default, \
            like the bundled model). Feature extraction is most of the first run's time.

            Unreadable images are skipped and listed at the end; training goes on (exit status 1 then tells \
            scripts that some photos were left out). Files that are not images are ignored with a note.

            Examples:
              dedog train ~/dogs
              dedog train ~/dogs --output mydogs.safetensors --val-fraction 0.2
              dedog train stanford-dogs-224 --split stanford-dogs-224/splits/train.txt
              dedog train ~/dogs --backbone lite0            # fastest to train and to use

            Where the dogs are: the model gets the dog detector bundled for its first backbone (lite0 or lite1), \
            so that classify finds and names each dog of a photo; your photos need no boxes. The detector was \
            trained once for the backbone, which training leaves as it is (docs/where-the-dog-is.md). With lite2 \
            first there is none: classify then locates one dog per photo from the breed's activation map.
            """
    )

    @Argument(help: ArgumentHelp("Folder with one sub-folder of photos per class.", valueName: "dataset"))
    var dataset: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the model file (replaced atomically).", valueName: "file"))
    var output = "dedog-breeds.safetensors"

    @Option(help: ArgumentHelp("Use only the images listed in this file (`<class>/<file>` per line).", valueName: "file"))
    var split: String?

    @Option(help: ArgumentHelp("Validate on the images listed in this file instead of a random part.", valueName: "file"))
    var validationSplit: String?

    @Option(help: "Share of each class held out for validation when no --validation-split is given.")
    var valFraction = 0.1

    @Option(help: ArgumentHelp("Extra views of each training photo: none, mirror, crops (mirror plus a wider and a closer crop) "
                               + "or aspect (mirror plus the photo stretched 33 % wider and 25 % narrower).",
                               valueName: "kind"))
    var augment: Augmentation = .mirror

    @Option(help: ArgumentHelp("Pretrained backbones to build on: lite0, lite1, lite2, or up to three joined by + "
                               + "(lite1+lite2, the default).", valueName: "names"))
    var backbone: String?

    @Option(help: ArgumentHelp("A model file to take the pretrained backbones from instead (repeatable; every "
                               + "backbone a file holds is used).", valueName: "file"))
    var baseModel: [String] = []

    @Option(help: ArgumentHelp("Classify at a crop this many pixels larger than training uses (validation and "
                               + "calibration too); +32 gave 1 point more on Stanford Dogs. 0 turns it off.",
                               valueName: "pixels"))
    var testSizeIncrease = TrainingSettings.defaultTestSizeIncrease

    @Option(help: ArgumentHelp("How photos that are not square become the network's square, in training and later "
                               + "in classify: crop (the middle of a long photo), pad (the whole photo, with grey "
                               + "bars) or squeeze (stretched). Default: pad, or the fit of the model given to --resume.", valueName: "fit"))
    var fit: PhotoFit?

    @Option(help: "Maximum passes over the training features.")
    var epochs = 60

    @Option(help: "Adam learning rate.")
    var learningRate: Float = 1e-4

    @Option(help: "Decoupled weight decay.")
    var weightDecay: Float = 1e-4

    @Option(help: "Label smoothing (0 = none).")
    var labelSmoothing: Float = 0.1

    @Option(help: "Random seed (same seed, same model).")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Continue from a model trained before (its backbones, its heads for the classes it "
                               + "knows, its confirmed photos): adding photos or breeds then needs only the new features.",
                               valueName: "file"))
    var resume: String?

    @Option(help: ArgumentHelp("Breed catalogue JSON to match class folders against instead of the bundled one.",
                               valueName: "file"))
    var catalogue: String?

    @Flag(help: "Do not match class folders to catalogue breeds (folder names are labels only).")
    var noCatalogue = false

    @Flag(help: ArgumentHelp("Leave the dog detector out of the model (classify then locates a dog from the breed's "
                             + "activation map and answers one dog per photo)."))
    var noDetector = false

    @OptionGroup var features: FeatureOptions


    /// The bundled base models `--backbone` names, in order.
    static func backboneNames(_ value: String) throws -> [String] {
        let names = value.split(separator: "+", omittingEmptySubsequences: false).map { String($0).lowercased() }
        let known = ["lite0", "lite1", "lite2"]
        if let bad = names.first(where: { !known.contains($0) }) {
            throw ValidationError("--backbone: \"\(bad)\" is not a backbone; use \(known.joined(separator: ", ")) or "
                                  + "several joined by +, e.g. lite1+lite2.")
        }
        guard Set(names).count == names.count else { throw ValidationError("--backbone: each backbone can be named once.") }
        return names
    }

    func validate() throws {
        if let backbone { _ = try Self.backboneNames(backbone) }
        guard [backbone != nil, !baseModel.isEmpty, resume != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("give one of --backbone, --base-model and --resume.")
        }
        guard (0.0..<1.0).contains(valFraction) else { throw ValidationError("--val-fraction must be in [0, 1).") }
        guard (0...256).contains(testSizeIncrease) else { throw ValidationError("--test-size-increase must be between 0 and 256.") }
        guard epochs >= 1 else { throw ValidationError("--epochs must be at least 1.") }
        guard learningRate > 0, weightDecay >= 0, (0..<1).contains(labelSmoothing) else {
            throw ValidationError("--learning-rate must be positive, --weight-decay ≥ 0, --label-smoothing in [0, 1).")
        }
    }

    func run() throws {
        var bases: [URL]
        let names = try Self.backboneNames(backbone ?? "lite1+lite2")
        do throws(ClassifierError) {
            if let resume {
                bases = [URL(fileURLWithPath: resume)]
            } else if baseModel.isEmpty {
                bases = []
                for name in names { bases.append(try ModelLocator.url(ofBundled: name)) }
            } else {
                bases = baseModel.map { URL(fileURLWithPath: $0) }
            }
        } catch {
            Terminal.error(error)
            throw Status.modelUnavailable
        }
        var config = TrainingSettings(dataset: URL(fileURLWithPath: dataset), baseModels: bases,
                                      output: URL(fileURLWithPath: output))
        config.split = split.map { URL(fileURLWithPath: $0) }
        config.validationSplit = validationSplit.map { URL(fileURLWithPath: $0) }
        config.validationFraction = valFraction
        config.augmentation = augment
        config.testSizeIncrease = testSizeIncrease
        config.fit = fit
        config.cacheRoot = features.cacheRoot
        config.threads = features.threads
        config.kernels = try features.kernelSet()
        config.memoryLimit = features.memoryLimit
        config.epochs = epochs
        config.learningRate = learningRate
        config.weightDecay = weightDecay
        config.labelSmoothing = labelSmoothing
        config.seed = seed
        if !noCatalogue { config.catalogue = try loadCatalogue(catalogue) }
        config.includesDetector = !noDetector

        var bars: [String: ProgressBar] = [:]
        let report: TrainingReport
        Interruption.catchSignals()
        do throws(TrainingError) {
            report = try Training.run(config) { event in
                // Between batches and epochs no file is half-written: the previous model is as it was, and every
                // cached feature is whole.
                Interruption.exitIfRequested("interrupted; \(output) was not changed, and the features computed so far are cached")
                switch event {
                case let .extracting(phase, done, total):
                    let bar = bars[phase] ?? ProgressBar("features (\(phase))")
                    bars[phase] = bar
                    bar.update(done, of: total)
                case let .epoch(m):
                    Terminal.progress(String(format: "epoch %3d  train loss %.4f top-1 %5.1f%% top-5 %5.1f%%  val loss %.4f top-1 %5.1f%% top-5 %5.1f%%",
                                             m.epoch, m.trainLoss, m.trainTop1 * 100, m.trainTop5 * 100, m.validationLoss,
                                             m.validationTop1 * 100, m.validationTop5 * 100))
                }
            }
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
        if let problem = report.cacheProblem {
            Terminal.warning("the feature cache stopped storing (\(problem)); the next run will compute those features again")
        }
        Report.training(report, output: output, detectorLeftOut: noDetector)
        if !report.unreadable.isEmpty { throw Status.someInputsFailed }
    }
}

extension TrainingError {
    var isModelProblem: Bool {
        switch self {
        case .model, .baseModels, .inputTooLarge: return true
        default: return false
        }
    }
}

extension Augmentation: ExpressibleByArgument {}
