import ArgumentParser
import Dedog
import Foundation

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a model on a labelled folder of photos.",
        discussion: """
            DATASET is laid out as for `dedog train` (one sub-folder per class, named like the model's labels). \
            Prints top-1 and top-5 accuracy, accuracy per class, the most confused pairs and the expected \
            calibration error (how far confidences are from the accuracy they claim).

            Examples:
              dedog evaluate models/dedog-breeds.safetensors stanford-dogs-224 --split stanford-dogs-224/splits/test.txt
              dedog evaluate mydogs.safetensors ~/dogs-holdout --json > report.json
            """
    )

    @Argument(help: ArgumentHelp("The model file.", valueName: "model"))
    var model: String

    @Argument(help: ArgumentHelp("Folder with one sub-folder of photos per class.", valueName: "dataset"))
    var dataset: String

    @Option(help: ArgumentHelp("Evaluate only the images listed in this file.", valueName: "file"))
    var split: String?

    @Flag(help: "Print the report as one JSON object.")
    var json = false


    @OptionGroup var features: FeatureOptions

    func run() throws {
        let bar = ProgressBar("features")
        let report: EvaluationReport
        do throws(TrainError) {
            report = try Evaluator.run(model: URL(fileURLWithPath: model), dataset: URL(fileURLWithPath: dataset),
                                       split: split.map { URL(fileURLWithPath: $0) },
                                       cacheRoot: features.cacheRoot, threads: features.threads,
                                       memoryLimit: features.memoryLimit) { event in
                if case let .extracting(_, done, total) = event { bar.update(done, of: total) }
            }
        } catch {
            Terminal.error(error.description)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            Terminal.out(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            Report.evaluation(report)
        }
    }
}
