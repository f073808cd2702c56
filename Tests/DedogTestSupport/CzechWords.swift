import Foundation

/// Finds English in text meant to be Czech, for the CLI's `--lang cs` output and the web page in Czech. The
/// English words are the catalogue vocabulary's terms (every FCI group, section, country, coat, colour and
/// temperament word it translates) and the interfaces' own words; proper names are allowed.
public enum CzechWords {
    /// The catalogue the binary ships, read as plain JSON (this module depends on no dedog module).
    static func catalogueJSON() -> [String: Any] {
        let url = SharedData.packageRoot.appendingPathComponent("Sources/DedogCatalogue/Resources/breeds.json")
        guard let data = try? Data(contentsOf: url), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return [:]
        }
        return json
    }

    /// Every breed id of the catalogue.
    public static var breedIDs: [String] {
        (catalogueJSON()["breeds"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    public static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter }.map(String.init)
    }

    /// Proper names that Czech text may show as they are: breed names and aliases (a breed without a public Czech
    /// name keeps its English one), ids, model labels, source repositories and organisations, and product names.
    public static let properNames: [String] = {
        let catalogue = catalogueJSON()
        var names: [String] = []
        for b in catalogue["breeds"] as? [[String: Any]] ?? [] {
            let name = b["name"] as? [String: Any] ?? [:], aliases = b["aliases"] as? [String: [String]] ?? [:]
            names.append(b["id"] as? String ?? "")
            names += [name["en"] as? String, name["cs"] as? String].compactMap { $0 }
            names += (aliases["en"] ?? []) + (aliases["cs"] ?? []) + (aliases["fci"] ?? []) + (b["labels"] as? [String] ?? [])
        }
        names += (catalogue["sources"] as? [[String: Any]] ?? []).compactMap { $0["repository"] as? String }
        names += ["American Kennel Club", "Stanford Dogs", "70 Dog Breeds"]
        return names.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }()

    public static let englishWords: Set<String> = {
        let vocabulary = (catalogueJSON()["vocabulary"] as? [String: [String: String]])?["cs"] ?? [:]
        var english = Set(vocabulary.flatMap { english, czech in Set(words(english)).subtracting(words(czech)) })
        english.formUnion(["group", "section", "origin", "size", "height", "weight", "life", "span", "years", "male",
                           "female", "coat", "care", "grooming", "shedding", "colours", "temperament", "bundled",
                           "recognises", "labels", "sources", "also", "known", "unsure", "perhaps", "found",
                           "dog", "probability", "looks", "like", "breeds", "knows", "closest", "small", "medium",
                           "large", "giant", "provisionally", "accepted", "entry", "none", "the", "and", "of", "or",
                           // the web page's own words
                           "identify", "breed", "quiz", "about", "photo", "choose", "take", "drop", "search", "only",
                           "score", "question", "right", "wrong", "hint", "next", "again", "missed", "undo", "confirm",
                           "learned", "loading", "accuracy", "measured", "file", "token", "save", "play", "time",
                           "limit", "seconds", "visit", "there", "seems", "most", "likely", "which", "is", "it", "this",
                           "your", "not", "sure", "might", "be", "model", "server", "error", "went"])
        // Words that are also the Czech (or international) spelling: not evidence of English.
        english.subtract(["mali", "peru", "malta", "argentina", "uruguay", "papillon", "groenendael", "malinois",
                          "kromfohrländer", "toy", "chin", "fci", "model", "server", "to", "standard"])
        return english.filter { $0.count > 1 }
    }()

    /// The English words in `text`, proper names taken out first.
    public static func englishIn(_ text: String) -> [String] {
        var text = text
        for name in properNames { text = text.replacingOccurrences(of: name, with: " ", options: .caseInsensitive) }
        return words(text).filter { englishWords.contains($0) }
    }
}
