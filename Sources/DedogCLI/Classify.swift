import ArgumentParser
import Dedog
import DedogFiles
import DedogCatalogue
import Foundation

struct Classify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "Name the breed of the dog in each photo.",
        discussion: """
            Give photos (JPEG, PNG, HEIC, AVIF or WebP, any size) or folders; folders are searched recursively and files \
            that are not images are skipped with a warning. Results are printed as each photo is done.

            For each photo dedog prints the most likely breeds with their probability. It says "no dog" \
            when the networks put less of their belief on dog classes than the model allows (30 % for the \
            bundled models; above half that, only if they see something else in the photo, and not where \
            the dog detector finds a dog whose breed the model is sure of) or see a cat, \
            and says what the photo shows instead ("no dog — it looks like a cat"); \
            "a breed this model does not know" (with the breeds the dog looks most like) when the dog is \
            less like any of the model's breeds than their own photos are, and "unsure" when the top \
            breed is below 45 % (for a model made by `dedog train`, also when it is less than 15 points ahead \
            of the next; the thresholds come from the model file). When it names no breed, it says the kind \
            of dog where it is sure of that much: its FCI group ("kind: Terriers (FCI group 3)").

            Where the dogs are: the bundled models find each dog in the photo (a detector trained on Stanford \
            Dogs' boxes) and give its box; a photo of several dogs gets an answer per dog, each from that dog \
            alone — in text a line per dog, in JSON the `dogs` list, in CSV a row per dog (the `dog` column numbers \
            them; x, y, width and height are its box in the photo's pixels).

            Examples:
              dedog classify rex.jpg
              dedog classify --top 5 ~/Pictures/dogs
              dedog classify --json photos/ > results.jsonl
              dedog classify --format csv ~/Pictures > breeds.csv      # one row per photo (per dog), for a spreadsheet
              dedog classify --careful shelter-photos/        # rather "a breed it does not know" than a wrong breed
              dedog classify --model fast ~/Pictures/dogs     # Lite0 alone: faster, less accurate
              dedog classify --model mydogs.safetensors rex.jpg
            """
    )

    @Argument(help: ArgumentHelp("Photos or folders to classify.", valueName: "path"))
    var paths: [String]

    @Option(name: [.customShort("k"), .long], help: "How many breeds to show per photo.")
    var top = 3

    @Option(help: ArgumentHelp("Output: text (for people, with a closing summary), json (JSON Lines: one object per "
                               + "photo) or csv (one row per photo, or per dog of a photo of several: file, verdict, breed, "
                               + "probability, the other breeds, looks like, error, dog, and the box).", valueName: "format"))
    var format: OutputFormat?

    @Flag(help: "The same as --format json.")
    var json = false

    @Flag(help: "Never show the progress line (shown on a terminal while folders are classified).")
    var noProgress = false

    @Flag(help: ArgumentHelp("Answer from the whole photo only: no second, closer look at a dog that is small in the "
                             + "photo, or at a dog the whole photo would answer as a breed this model does not know (each "
                             + "look takes one more pass through the network, for a few photos in a hundred)."))
    var noZoom = false

    @Flag(help: ArgumentHelp(CarefulMode.help))
    var careful = false

    @Option(help: ArgumentHelp("The model: a model file from `dedog train`, or a bundled one by name ("
                               + ModelLocator.bundled.map { "\($0.name): \($0.summary)" }.joined(separator: "; ")
                               + "). Default: $DEDOG_MODEL, else \"default\".", valueName: "name|file"))
    var model: String?

    @Option(help: ArgumentHelp("Threads to use. One photo's network runs on all of them; several photos are "
                               + "classified side by side, a thread each (up to \(ClassifierConfiguration.maxSideBySide) at once)."))
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: Environment.kernelsHelp)
    var kernels: String?

    @Option(help: Precision.help)
    var precision: Precision?

    @Option(help: ArgumentHelp("Refuse photos larger than this many megapixels (checked from the header, before "
                               + "decoding, so that a tiny file declaring a giant picture cannot exhaust memory).",
                               valueName: "n"))
    var maxMegapixels = 100

    @Option(help: ArgumentHelp("Classify only part K of N of the photos (K from 0), e.g. 0/4 … 3/4 on four machines: "
                               + "each photo falls in exactly one part, by a hash of its path, so N runs with the same "
                               + "paths share the work with no coordination (a Kubernetes Indexed Job passes "
                               + "$(JOB_COMPLETION_INDEX)/N).", valueName: "K/N"))
    var shard: Shard?

    @Option(help: ArgumentHelp("Language of the results: en or cs. Default: Czech when the locale (LC_ALL, "
                               + "LC_MESSAGES or LANG) starts with cs, else English.", valueName: "lang"))
    var lang: Language?

    @Option(help: ArgumentHelp("Breed catalogue JSON to use instead of the bundled one.", valueName: "file"))
    var catalogue: String?

    var outputFormat: OutputFormat { json ? .json : format ?? .text }

    func validate() throws {
        if json, let format, format != .json { throw ValidationError("--json and --format \(format.rawValue) disagree; give one.") }
        guard top >= 1 else { throw ValidationError("--top must be at least 1.") }
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be between 1 and 256.") }
        guard (1...10_000).contains(maxMegapixels) else { throw ValidationError("--max-megapixels must be between 1 and 10000.") }
    }

    func run() throws {
        // The catalogue is read on another thread while the model loads here: each takes a good part of the
        // start-up. The bundled one has been read since the process started (EarlyCatalogue).
        let catalogueReading = catalogue.map { CatalogueReading(path: $0) }
        let classifier: Classifier
        guard let kernelSet = Environment.kernelsOrReport(kernels) else { throw Status.modelUnavailable }
        do throws(ClassifierError) {
            var configuration = ClassifierConfiguration(kernels: kernelSet, precision: precision,
                                                        maxPixels: maxMegapixels * 1_000_000)
            configuration.share(threads: threads, manyPhotos: paths.count > 1 || paths.contains { FolderWalk.isFolder($0) })
            if noZoom { configuration.zoom = nil }
            classifier = try CarefulMode.classifier(try Classifier(modelURL: Environment.model(model), configuration: configuration),
                                                    careful: careful)
        } catch {
            Terminal.error(error)
            throw Status.modelUnavailable
        }
        let breeds = try loadCatalogue { () throws(CatalogueError) in
            if let catalogueReading { return try catalogueReading.catalogue() }
            return try EarlyCatalogue.load(nil)
        }
        let language = lang ?? Environment.language
        let printer = ResultPrinter(format: outputFormat, catalogue: breeds, language: language, top: top)
        var photos = 0
        var summary = ClassifySummary()
        Interruption.catchSignals()
        // With a folder to go through and a person watching stderr, the photos are found first so that the progress
        // line can say how many are left; otherwise each is classified as it is found.
        let part = ShardFilter(shard: shard)
        let showsProgress = !noProgress && isatty(STDERR_FILENO) == 1 && paths.contains { FolderWalk.isFolder($0) }
        var found: [PhotoFiles.Found] = []
        if showsProgress { PhotoFiles.find(paths) { if part.isMine($0) { found.append($0) } } }
        let progress = showsProgress ? ClassifyProgress(total: found.reduce(0) { $0 + ($1.isImage ? 1 : 0) }, language: language) : nil
        printer.begin()
        // Photos are classified side by side (`ClassifierConfiguration.share`); each answer is printed in the order
        // the photos were found, as soon as those before it are.
        let work = OrderedWork<Outcome>(concurrency: classifier.configuration.workers)
        let top = top
        func report(_ outcome: Outcome) {
            progress?.clear()
            switch outcome {
            case .skipped(let path, var reason):
                if CommandLine.invalidUTF8Arguments.contains(path) { reason = FileError.nameNotUTF8.description }
                // A file named on the command line that cannot be used is a failure; one inside a folder is not.
                if paths.contains(path) {
                    summary.failed += 1
                    Terminal.error("\(path): \(reason)")
                    printer.failure(file: path, message: reason)
                } else {
                    Terminal.warning("skipping \(path): \(reason)")
                }
            case let .classified(path, .success(result)):
                photos += 1
                printer.result(file: path, result)
                summary.add(result, name: result.breeds.first.map(printer.name))
            case let .classified(path, .failure(error)):
                photos += 1
                summary.failed += 1
                Terminal.error(error)
                printer.failure(file: path, message: error.description)
            }
            progress?.draw(done: photos)
        }
        func handle(_ item: PhotoFiles.Found) {
            guard showsProgress || part.isMine(item) else { return }
            Interruption.exitIfRequested("interrupted after \(photos) photo\(photos == 1 ? "" : "s"); the results printed are complete")
            switch item {
            case let .skipped(path, reason):
                work.submit({ .skipped(path, reason) }, deliver: report)
            case let .image(path):
                work.submit({
                    do throws(ClassifierError) {
                        return .classified(path, .success(try classifier.classify(contentsOf: URL(fileURLWithPath: path), top: top)))
                    } catch {
                        return .classified(path, .failure(error))
                    }
                }, deliver: report)
            }
        }
        if showsProgress { found.forEach(handle) } else { PhotoFiles.find(paths, visit: handle) }
        work.finish(deliver: report)
        progress?.clear()
        if outputFormat == .text && summary.photos > 1 { Terminal.out(summary.text(language)) }
        let failures = summary.failed, classified = summary.classified
        if summary.photos == 0 && part.othersPhotos > 0, let shard {
            Terminal.warning("none of the \(part.othersPhotos) photos found fell in part \(shard); the other parts have them")
            return
        }
        if summary.photos == 0 {
            Terminal.error("no \(PhotoFiles.readableFormats) images found in \(paths.joined(separator: ", "))")
            throw Status.someInputsFailed
        }
        if failures > 0 {
            Terminal.error(classified == 0 ? "no input could be classified"
                           : "\(failures) of \(summary.photos) inputs could not be classified; \(classified) "
                               + (classified == 1 ? "was." : "were."))
            throw Status.someInputsFailed
        }
        // Everything is printed: the process ends here rather than first taking the classifier, its model and the
        // catalogue apart, which the kernel does anyway, faster (1–2 ms of a fast one-photo run; with the default
        // model no difference could be measured).
        Foundation.exit(0)
    }
}

/// What became of one path found: skipped (with why), or classified (or not, with why).
enum Outcome: Sendable {
    case skipped(String, String)
    case classified(String, Result<Classification, ClassifierError>)
}

extension Shard: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// Which inputs `--shard` leaves to this run, counting the photos it leaves to the other parts.
final class ShardFilter {
    let shard: Shard?
    private(set) var othersPhotos = 0

    init(shard: Shard?) {
        self.shard = shard
    }

    func isMine(_ item: PhotoFiles.Found) -> Bool {
        guard let shard else { return true }
        switch item {
        case let .image(path), let .skipped(path, _):
            if shard.contains(path) { return true }
            if item.isImage { othersPhotos += 1 }
            return false
        }
    }
}
