import ArgumentParser
import DedogCLI
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
        subcommands: Array(CommandLineTool.commands.prefix(6)) + [Serve.self] + Array(CommandLineTool.commands.dropFirst(6))
    )

    static func main() async {
        // Past a file size limit (`ulimit -f`), a write then fails with a message instead of killing us.
        signal(SIGXFSZ, SIG_IGN)
        CommandLineTool.prepare(arguments: CommandLine.arguments)
        await main(nil)
    }
}
