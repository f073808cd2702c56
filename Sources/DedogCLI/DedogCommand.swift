import ArgumentParser
import Foundation

@main
struct DedogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dedog",
        abstract: "Tell dog breeds from photos, on your own machine.",
        discussion: """
            Runs EfficientNet-Lite networks locally: no network access, no uploads. The default model combines \
            Lite1 and Lite2; `--model fast` uses Lite0 alone (about 3 times faster, a few points less accurate).

            Exit status: 0 success; 1 some inputs could not be processed (the rest were), or none was \
            found; 2 the model could not be loaded; 3 the results could not be written (standard output \
            failed); 64 invalid command-line usage.
            """,
        version: "0.1.0",
        subcommands: [Classify.self, Train.self, Learn.self, Forget.self, Evaluate.self, Breeds.self, Serve.self, QuizCommand.self]
    )

    static func main() async {
        // Past a file size limit (`ulimit -f`), a write then fails with a message instead of killing us.
        signal(SIGXFSZ, SIG_IGN)
        // Commands that show breeds get their catalogue read while the command line is parsed (see EarlyCatalogue).
        if let command = CommandLine.arguments.dropFirst().first, ["classify", "breeds"].contains(command) {
            EarlyCatalogue.start()
        }
        await main(nil)
    }
}

/// Exit statuses shared by the subcommands (documented in `dedog --help`).
enum Status {
    static let someInputsFailed = ExitCode(1)
    static let modelUnavailable = ExitCode(2)
    static let outputFailed = ExitCode(3)
}
