import ArgumentParser

@main
struct DedogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dedog",
        abstract: "Tell dog breeds from photos, on your own machine.",
        version: "0.1.0",
        subcommands: []
    )
}
