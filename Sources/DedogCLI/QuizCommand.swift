import ArgumentParser
import Dedog
import DedogCatalogue
import DedogFiles
import Foundation

struct QuizCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quiz",
        abstract: "Breed quizzes made from your photos, played on dedog serve's page.",
        subcommands: [QuizMake.self]
    )
}

struct QuizMake: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Make a quiz: each photo with its breed and two or three breeds the model confuses it with.",
        discussion: """
            A photo's right answer is its folder's breed when the folder is named after one of the model's \
            breeds (matched as dedog train matches class folders: "beagle", "čivava", "n02085620-Chihuahua"); \
            otherwise the model's own answer when it is sure. Photos with no dog, an unsure answer or a breed the \
            model does not know are left out, and counted. The wrong answers are the breeds the model ranks next \
            for that very photo: the ones it confuses with the right one, so they are hard in the right way.

            One file holds everything (small JPEG copies of the photos inside), so a quiz can be shared. Play it on \
            the page of dedog serve: upload it there, or start the server with --quizzes DIR.

            Examples:
              dedog quiz make ~/Pictures/dogs --output dogs.quiz.json
              dedog quiz make stanford/test --questions 20 --answers 4 --output hard.json --title "Hard one"
            """
    )

    @Argument(help: ArgumentHelp("A folder of photos (sub-folders named after breeds give the right answers).", valueName: "photos-dir"))
    var photos: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The quiz file to write.", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("At most this many questions, taken across the folders (default: every usable photo, up to \(Quiz.Limits.questions)).",
                               valueName: "n"))
    var questions: Int?

    @Option(help: ArgumentHelp("Answers per question, the right one among them: 3 or 4.", valueName: "3|4"))
    var answers = 3

    @Option(help: ArgumentHelp("The quiz's title (default: the folder's name).", valueName: "text"))
    var title: String?

    @Option(help: ArgumentHelp("The model whose confusions make the wrong answers: a model file, or a bundled one by name (default: $DEDOG_MODEL, else \"default\").",
                               valueName: "name|file"))
    var model: String?

    @Option(help: ArgumentHelp("Breed catalogue JSON for breed names instead of the bundled one.", valueName: "file"))
    var catalogue: String?

    @Option(help: "Threads for the network.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    func validate() throws {
        guard answers == 3 || answers == 4 else { throw ValidationError("--answers must be 3 or 4, not \(answers).") }
        if let questions, !(1...Quiz.Limits.questions).contains(questions) {
            throw ValidationError("--questions must be between 1 and \(Quiz.Limits.questions).")
        }
        if let title, title.isEmpty || title.count > Quiz.Limits.text {
            throw ValidationError("--title must have 1 to \(Quiz.Limits.text) characters.")
        }
        guard FolderWalk.isFolder(photos) else { throw ValidationError("\(photos): \(FolderWalk.whyMissing(photos)); give a folder of photos.") }
        guard force || !FileManager.default.fileExists(atPath: output) else {
            throw ValidationError("\(output) exists; give another --output, or --force to replace it.")
        }
    }

    func run() throws {
        let breeds = try loadCatalogue(catalogue)
        let report: QuizMaker.Report
        let bar = ProgressBar("quiz")
        guard let kernels = Environment.kernelsOrReport(nil) else { throw ExitCode.validationFailure }
        let classifier: Classifier
        do throws(ClassifierError) {
            classifier = try Classifier(modelURL: Environment.model(model),
                                        configuration: .init(threadsPerWorker: threads, kernels: kernels))
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
        do throws(ClassifierError) {
            report = try QuizMaker.make(folder: photos, classifier: classifier, catalogue: breeds, wrongAnswers: answers - 1,
                                        questions: questions ?? Quiz.Limits.questions, title: title) { bar.update($0, of: $1) }
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
        let data: Data
        do throws(ClassifierError) {
            data = try report.quiz.encoded()
        } catch {
            Terminal.error(error)
            throw Status.outputFailed
        }
        do throws(FileError) {
            try AtomicFile.write(data, to: output)
        } catch {
            Terminal.error("\(output): \(error.description)")
            throw Status.outputFailed
        }
        let quiz = report.quiz
        Terminal.out("\(output): \(quiz.questions.count) question\(quiz.questions.count == 1 ? "" : "s") "
                     + "(\(report.fromFolders) answered by their folder, \(report.fromModel) by the model), "
                     + "\(data.count / 1024) KB; wrong answers from \(quiz.model).")
        if !report.leftOut.isEmpty { Terminal.out("left out: \(report.leftOutCounts).") }
        for item in report.leftOut where item.why == .unreadable {
            Terminal.error("\(item.photo): \(item.detail ?? "could not be read")")
        }
    }
}
