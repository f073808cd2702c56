import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

struct Breeds: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breeds",
        abstract: "Browse the breed catalogue (English and Czech names, FCI data, sizes).",
        discussion: """
            Examples:
              dedog breeds list --lang cs
              dedog breeds list --group 3
              dedog breeds list --recognised     # only the breeds the bundled models know
              dedog breeds search ovcak
              dedog breeds show "golden retriever"
            """,
        subcommands: [List.self, Search.self, Show.self]
    )

    struct CatalogueOptions: ParsableArguments {
        @Option(help: ArgumentHelp("Use this catalogue JSON instead of the bundled one.", valueName: "file"))
        var catalogue: String?

        @Option(help: ArgumentHelp("Language of names and details: en or cs. Default: Czech when the locale "
                                   + "(LC_ALL, LC_MESSAGES or LANG) starts with cs, else English.", valueName: "lang"))
        var lang: Language?

        var language: Language { lang ?? Environment.language }

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func load() throws -> Catalogue { try loadCatalogue(catalogue) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the breeds, sorted by name.")

        @OptionGroup var options: CatalogueOptions

        @Option(help: ArgumentHelp("Only breeds of this FCI group (1–10).", valueName: "n"))
        var group: Int?

        @Flag(help: "Only the breeds the bundled models recognise (the \"model\" column).")
        var recognised = false

        func validate() throws {
            if let group, !(1...10).contains(group) { throw ValidationError("--group must be an FCI group, 1 to 10.") }
        }

        func run() throws {
            let catalogue = try options.load()
            let language = options.language
            let breeds = catalogue.list(language: language, fciGroup: group, recognisedOnly: recognised)
            if options.json {
                Terminal.out(BreedText.json(breeds))
                return
            }
            let yes = language == .cs ? "ano" : "yes"
            let rows = breeds.map { b in
                [b.name(in: language), b.fci.map { "\($0.group)" } ?? "–", b.size.map { BreedText.size($0, language) } ?? "–",
                 b.origin.map { BreedText.origin($0, catalogue, language) } ?? "–", b.bundledModel ? yes : "–"]
            }
            let header = language == .cs ? ["plemeno", "FCI", "velikost", "původ", "model"]
                                         : ["breed", "FCI", "size", "origin", "model"]
            Terminal.out(BreedText.table([header] + rows))
        }
    }

    /// No breed name is near this long; a longer text is a mistake (a pasted file?), not a query to spell-check.
    static func checkLength(_ text: String) throws {
        guard text.count <= 100 else { throw ValidationError("the search text is \(text.count) characters long; breed names are under 100.") }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Find breeds by English or Czech name, ignoring case and diacritics; tolerates typos.")

        @Argument(help: "Text to look for, e.g. čivava, civava, chihuahau, ovčák.")
        var text: String

        @OptionGroup var options: CatalogueOptions

        func validate() throws { try Breeds.checkLength(text) }

        func run() throws {
            let catalogue = try options.load()
            let hits = catalogue.search(text)
            if options.json {
                Terminal.out(BreedText.json(hits.map(\.breed)))
                if hits.isEmpty { throw Status.someInputsFailed }
                return
            }
            guard !hits.isEmpty else {
                let names = catalogue.suggestions(for: text).map { $0.name(in: options.language) }
                Terminal.out("No breed matches \"\(text)\". Closest names: \(names.joined(separator: ", ")).")
                throw Status.someInputsFailed
            }
            let rows = hits.map { hit -> [String] in
                let name = hit.breed.name(in: options.language)
                let other = options.language == .cs ? hit.breed.name.en : hit.breed.name.cs ?? "–"
                let via = Catalogue.sameName(hit.matched, name) || Catalogue.sameName(hit.matched, other) ? "" : "(\(hit.matched))"
                return [name, other, hit.breed.id, via]
            }
            Terminal.out(BreedText.table(rows))
        }
    }

    struct Show: ParsableCommand {
        /// What `--model` knows of `breed`; nil without `--model`.
        func knows(_ breed: Breed) throws -> ModelKnows? {
            guard let model else { return nil }
            let breeds: [Confirmations.ModelBreed]
            do throws(ClassifierError) {
                breeds = try Confirmations.breeds(model: URL(fileURLWithPath: model))
            } catch {
                Terminal.error(error)
                throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
            }
            guard let known = breeds.first(where: { $0.label.breed == breed.id || breed.labels.contains($0.label.key) }) else {
                return .unknown
            }
            return known.label.taught ? .taught(photos: known.photos) : .trained(photos: known.photos)
        }

        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show everything the catalogue knows about a breed.")

        @Argument(help: ArgumentHelp("Breed name (English or Czech, any case, with or without diacritics) or id.",
                                     valueName: "name-or-id"))
        var name: String

        @OptionGroup var options: CatalogueOptions

        @Option(help: ArgumentHelp("Also say whether this model file knows the breed: trained, or taught with dedog learn "
                                   + "and from how many confirmed photos (in text output).", valueName: "file"))
        var model: String?

        func validate() throws { try Breeds.checkLength(name) }

        func run() throws {
            let catalogue = try options.load()
            let hits = catalogue.search(name)
            let exact = hits.filter { $0.kind == .exact }
            let chosen: Breed?
            if let byID = catalogue.breed(id: name) {
                chosen = byID
            } else if exact.count == 1 {
                chosen = exact[0].breed
            } else if exact.isEmpty && hits.count == 1 {
                chosen = hits[0].breed
            } else {
                chosen = nil
            }
            guard let breed = chosen else {
                if hits.isEmpty {
                    let names = catalogue.suggestions(for: name).map { $0.name(in: options.language) }
                    Terminal.out("No breed matches \"\(name)\". Closest names: \(names.joined(separator: ", ")).")
                } else {
                    let candidates = (exact.isEmpty ? hits : exact)
                    Terminal.out("\"\(name)\" matches \(candidates.count) breeds; say which:")
                    Terminal.out(BreedText.table(candidates.map { ["  " + $0.breed.name(in: options.language), $0.breed.id] }))
                }
                throw Status.someInputsFailed
            }
            if options.json {
                Terminal.out(BreedText.json(breed))
            } else {
                Terminal.out(BreedText.details(breed, catalogue: catalogue, language: options.language, model: try knows(breed)))
            }
        }
    }
}

extension Language: ExpressibleByArgument {}

/// The catalogue of `--catalogue FILE`, or the bundled one; a file that cannot be used is said and exits 1 (it is
/// never silently replaced by the bundled one).
func loadCatalogue(_ path: String?) throws -> Catalogue {
    try loadCatalogue { () throws(CatalogueError) in try EarlyCatalogue.load(path) }
}

/// The catalogue `load` gives, or its error said and the exit status for it.
func loadCatalogue(_ load: () throws(CatalogueError) -> Catalogue) throws -> Catalogue {
    do throws(CatalogueError) {
        return try load()
    } catch {
        Terminal.error(error)
        throw Status.someInputsFailed
    }
}
