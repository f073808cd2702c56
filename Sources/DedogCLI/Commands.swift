import ArgumentParser
import Foundation

/// The command line's commands, for the `dedog` executable, which adds `serve` (the HTTP front end, a module of its
/// own beside this one).
public enum CommandLineTool {
    public static let commands: [any ParsableCommand.Type] = [
        Classify.self, Tag.self, Train.self, Learn.self, Forget.self, Evaluate.self, Breeds.self, QuizCommand.self,
    ]

    /// Work to start before the command line is parsed: commands that show or write breeds get their catalogue read
    /// meanwhile (see `EarlyCatalogue`).
    public static func prepare(arguments: [String]) {
        if let command = arguments.dropFirst().first, ["classify", "breeds", "tag"].contains(command) {
            EarlyCatalogue.start()
        }
    }
}

/// Exit statuses shared by the subcommands (documented in `dedog --help`).
public enum Status {
    public static let someInputsFailed = ExitCode(1)
    public static let modelUnavailable = ExitCode(2)
    public static let outputFailed = ExitCode(3)
}
