/// A breed's words in one language, for front ends that show them: the catalogue stores FCI's and the AKC's
/// English wording, and its vocabulary gives the Czech for each term. Numbers stay numbers (a front end writes
/// them as its language does).
public struct LocalizedBreed: Codable, Sendable, Equatable {
    public struct SourceText: Codable, Sendable, Equatable {
        public var id: String
        public var title: String
        public var repository: String
        /// The breed fields taken from it (`fci`, `origin`, `height`, … as in the catalogue).
        public var fields: [String]
    }

    public var language: Language
    /// The name in the language; in Czech the English name when no public source gives a Czech one.
    public var name: String
    /// Whether `name` is in the language asked for (false: a Czech name is missing).
    public var nameInLanguage: Bool
    public var origin: String?
    public var size: String?
    public var fciGroup: String?
    public var fciSection: String?
    public var fciVariety: String?
    public var fciNote: String?
    public var grooming: String?
    public var shedding: String?
    public var colours: [String]
    public var temperament: [String]
    public var sources: [SourceText]
}

extension Catalogue {
    /// Size classes in Czech (the catalogue's toy/small/medium/large/giant).
    static let czechSizes = ["toy": "trpasličí", "small": "malé", "medium": "střední", "large": "velké", "giant": "obří"]

    /// `size` (toy, small, …) in `language`.
    public static func size(_ size: String, in language: Language) -> String {
        language == .cs ? czechSizes[size] ?? size : size
    }

    /// Countries of origin in `language` (FCI's English wording, comma-separated).
    public func origin(_ origin: String, in language: Language) -> String {
        origin.components(separatedBy: ", ").map { term($0, in: language) }.joined(separator: ", ")
    }

    /// Every word of `breed` a reader sees, in `language`.
    public func localized(_ breed: Breed, in language: Language) -> LocalizedBreed {
        let t = { (word: String) in self.term(word, in: language) }
        let byID = Dictionary(sources.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return LocalizedBreed(
            language: language, name: breed.name(in: language), nameInLanguage: language == .en || breed.name.cs != nil,
            origin: breed.origin.map { origin($0, in: language) }, size: breed.size.map { Self.size($0, in: language) },
            fciGroup: breed.fci.map { t($0.groupName) }, fciSection: breed.fci?.section.map(t),
            fciVariety: breed.fci?.variety.map(t), fciNote: breed.fciNote.map(t),
            grooming: breed.coat?.grooming.map(t), shedding: breed.coat?.shedding.map(t),
            colours: breed.colours.map(t), temperament: breed.temperament.map(t),
            sources: breed.sources.map { use in
                let source = byID[use.source]
                return .init(id: use.source, title: source.map { t($0.title) } ?? use.source,
                             repository: source?.repository ?? "", fields: use.fields)
            })
    }
}
