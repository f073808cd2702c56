import ArgumentParser
import Dedog
import Foundation

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Measure a model on a labelled folder of photos.",
        discussion: """
            MODEL is a bundled model's name (default, fast), a model file, or "bundled" for every bundled \
            breed model, compared in one table. DATASET is laid out as for `dedog train` (one sub-folder per \
            class, named like the model's labels).

            Prints top-1 and top-5 accuracy, the expected calibration error (how far confidences are from the \
            accuracy they claim), the verdicts classify would give (a breed named, unsure, no dog) with the \
            accuracy of the named breeds, the network's time per photo on one thread, accuracy per class and the \
            most confused pairs.

            Examples:
              dedog evaluate default stanford-dogs-224 --split stanford-dogs-224/splits/test.txt
              dedog evaluate bundled stanford-dogs-224 --split stanford-dogs-224/splits/test.txt
              dedog evaluate mydogs.safetensors ~/dogs-holdout --json > report.json
              dedog evaluate fast ~/my-photos --fit all    # the whole photo, its middle, or stretched?
              dedog evaluate default ~/checks/two-dogs --looks  # as classify answers
              dedog evaluate default stanford-dogs-224 --split stanford-dogs-224/splits/test.txt --precision all

            With --looks every photo is classified as `dedog classify` does it, with the second look at a dog \
            small in the frame and an answer per dog when the detector finds several dogs, and the \
            report counts those too: on photos of one dog each, photos answered per dog are false splits.

            With --precision all each model is measured in int8 and in fp32 on the same photos, and the int8 \
            report says how many of its top-1 answers are the fp32 ones.
            """
    )

    @Argument(help: ArgumentHelp("A bundled model's name, a model file, or \"bundled\".", valueName: "model"))
    var model: String

    @Argument(help: ArgumentHelp("Folder with one sub-folder of photos per class.", valueName: "dataset"))
    var dataset: String

    @Option(help: ArgumentHelp("Evaluate only the images listed in this file.", valueName: "file"))
    var split: String?

    @Flag(help: ArgumentHelp("Print the report as one JSON object (with \"bundled\" or --fit all: an object keyed by "
                             + "model name, and fit)."))
    var json = false

    @Option(help: ArgumentHelp("Make photos square this way instead of as the model does: crop, pad, squeeze, or all "
                               + "(one report each, compared).", valueName: "fit"))
    var fit: String?

    @Flag(help: ArgumentHelp("Classify each photo as `dedog classify` does (closer looks at small dogs and at dogs held "
                             + "back, an answer per dog) and count those answers, instead of the networks' answer for the whole photo."))
    var looks = false

    func validate() throws {
        guard fit == nil || fit == "all" || fit.flatMap(PhotoFit.init(rawValue:)) != nil else {
            throw ValidationError("--fit must be crop, pad, squeeze or all.")
        }
        if looks && fit != nil { throw ValidationError("--looks measures a model as it classifies; leave out --fit.") }
        if precisions(.best).isEmpty { throw ValidationError("--precision must be int8, fp32 or all.") }
        if looks && precision == "all" { throw ValidationError("--looks takes one --precision: int8 or fp32.") }
    }

    @Option(help: ArgumentHelp("The network's arithmetic: int8, fp32, or all (both, compared). Default: int8 on "
                               + "x86-64 CPUs with AVX2, fp32 elsewhere (as classify).", valueName: "int8|fp32|all"))
    var precision: String?

    /// The precisions --precision names (nil: the one classify would run with these kernels).
    func precisions(_ kernels: Kernels) -> [Precision] {
        guard let precision else { return [.preferred(for: kernels)] }
        return precision == "all" ? [.int8, .fp32] : Precision(rawValue: precision).map { [$0] } ?? []
    }

    @OptionGroup var features: FeatureOptions

    func run() throws {
        let names = model == "bundled" ? ["default", "fast"] : [model]
        if looks { return try runLooks(names) }
        let fits: [PhotoFit?] = fit == "all" ? PhotoFit.allCases : [fit.flatMap(PhotoFit.init(rawValue:))]
        var reports: [(name: String, report: EvaluationReport)] = []
        let kernels = try features.kernelSet(), precisions = self.precisions(kernels)
        for (name, fit, precision) in names.flatMap({ name in fits.flatMap { fit in precisions.map { (name, fit, $0) } } }) {
            let bar = ProgressBar("features")
            do {
                let url = try Environment.model(name)
                let report = try Training.evaluate(model: url, dataset: URL(fileURLWithPath: dataset),
                                               split: split.map { URL(fileURLWithPath: $0) },
                                               cacheRoot: features.cacheRoot, threads: features.threads, kernels: kernels,
                                               precision: precision,
                                               memoryLimit: features.memoryLimit, fit: fit) { event in
                    if case let .extracting(_, done, total) = event { bar.update(done, of: total) }
                }
                if precision == .fp32, let int8 = reports.last, int8.report.agreement == nil, precisions.count > 1 {
                    reports[reports.count - 1].report.agreement = int8.report.agreement(with: report)
                }
                reports.append(([name, fits.count > 1 ? fit.map(\.rawValue) : nil, precisions.count > 1 ? precision.rawValue : nil]
                                    .compactMap { $0 }.joined(separator: " "), report))
            } catch let error as ClassifierError {
                Terminal.error(error)
                throw Status.modelUnavailable
            } catch let error as TrainingError {
                Terminal.error(error)
                throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
            }
        }
        if json { return try Self.printJSON(reports) }
        for (name, report) in reports { Report.evaluation(report, title: reports.count > 1 ? "Model \(name)" : "Evaluation") }
        if reports.count > 1 { Report.comparison(reports) }
    }

    /// `--looks`: each photo through the classifier, as classify answers it.
    func runLooks(_ names: [String]) throws {
        let kernels = try features.kernelSet()
        let photos: [(url: URL, folder: String)]
        do {
            photos = try Training.photos(in: URL(fileURLWithPath: dataset), split: split.map { URL(fileURLWithPath: $0) })
        } catch {
            Terminal.error(error)
            throw Status.someInputsFailed
        }
        var reports: [(name: String, report: LookReport)] = []
        for name in names {
            let classifier: Classifier
            do {
                classifier = try Classifier(modelURL: Environment.model(name),
                                            configuration: .init(workers: features.threads, kernels: kernels,
                                                                 precision: precisions(kernels)[0]))
            } catch {
                Terminal.error(error)
                throw Status.modelUnavailable
            }
            let bar = ProgressBar("photos")
            reports.append((name, classifier.checkLooks(photos) { done, total in bar.update(done, of: total) }))
        }
        if json {
            try Self.printJSON(reports)
        } else {
            for (name, report) in reports { Report.looks(report, title: reports.count > 1 ? "Model \(name)" : "Looks") }
        }
        if reports.contains(where: { !$0.report.unreadable.isEmpty }) { throw Status.someInputsFailed }
    }

    /// One report as a JSON object, or several as one object keyed by their names.
    static func printJSON<R: Encodable>(_ reports: [(name: String, report: R)]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let data = reports.count == 1 ? try encoder.encode(reports[0].report)
                                      : try encoder.encode(Dictionary(uniqueKeysWithValues: reports.map { ($0.name, $0.report) }))
        Terminal.out(String(decoding: data, as: UTF8.self))
    }
}
