import Foundation
import DedogFiles

/// The breed catalogue: breeds with English and Czech names, FCI data, sizes and sources.
///
/// ```swift
/// let catalogue = try Catalogue.bundled()
/// let hits = catalogue.search("čivava")          // the Chihuahua first
/// let breed = catalogue.breed(forLabel: "n02085620-Chihuahua")
/// ```
public struct Catalogue: Sendable {
    public let formatVersion: Int
    public let sources: [Source]
    public let breeds: [Breed]
    /// For each language but English: the word for each English term the breeds use (FCI groups and sections,
    /// countries, coat care, colours, temperament, notes, source titles).
    public let vocabulary: [String: [String: String]]
    private let byLabel: [String: Int]
    private let byID: [String: Int]
    /// Each breed's names and aliases, folded for search (see `TextKey`) on the first search: a quarter of the
    /// catalogue's load, which listing and classifying do not need.
    private let foldedNames: FoldedNames
    var searchKeys: [[SearchKey]] { foldedNames.keys(for: breeds) }

    /// The file as stored (read by `Codable`, or by `quickly`).
    struct File: Codable {
        var formatVersion: Int
        var sources: [Source]
        var vocabulary: [String: [String: String]]?  // optional so that a version-1 file gets the version message
        var breeds: [Breed]
    }

    /// The catalogue shipped with dedog: every FCI breed, plus the Stanford Dogs classes the FCI does not list.
    public static func bundled() throws(CatalogueError) -> Catalogue {
        let candidates = bundledLocations()
        guard let url = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0.path) }) else {
            throw .notInstalled(searched: candidates.map(\.path))
        }
        return try Catalogue(contentsOf: url)
    }

    /// Where the bundled catalogue may be, in order: installed (`share/dedog/`, see scripts/install), or beside a
    /// binary built by SwiftPM (its resource bundle). Never SwiftPM's `Bundle.module`, which ends the program when
    /// the build folder it remembers is gone.
    static func bundledLocations() -> [URL] {
        [InstalledData.sharedFolder.appendingPathComponent("breeds.json"),
         InstalledData.binaryFolder.appendingPathComponent("dedog_DedogCatalogue.resources/breeds.json")]
    }

    /// The catalogue at `path`, or the bundled one when `path` is nil.
    public static func load(_ path: String?) throws(CatalogueError) -> Catalogue {
        if let path { return try Catalogue(contentsOf: URL(fileURLWithPath: path)) }
        return try bundled()
    }

    /// Catalogue files larger than this are refused before reading (the bundled one is ~400 kB).
    public static let maxFileBytes = 64 << 20

    public init(contentsOf url: URL) throws(CatalogueError) {
        let data: Data
        do {
            data = try FileReader.readData(url.path, limit: Self.maxFileBytes)
        } catch {
            throw .unreadable(file: url.path, reason: error.description)
        }
        try self.init(data, file: url.path)
    }

    public init(_ data: Data, file: String) throws(CatalogueError) {
        try self.init(data, file: file, quickly: true)
    }

    /// The catalogue in `data` read with `Codable` only (for tests of the quick reading).
    @_spi(Testing) public static func decodedWithCodable(_ data: Data, file: String) throws(CatalogueError) -> Catalogue {
        try Catalogue(data, file: file, quickly: false)
    }

    /// Whether the catalogue in `data` is read without `Codable` (Catalogue+Quick.swift).
    @_spi(Testing) public static func readsQuickly(_ data: Data) -> Bool { data.withUnsafeBytes(quickly) != nil }

    private init(_ data: Data, file: String, quickly: Bool) throws(CatalogueError) {
        let decoded: File
        do {
            if quickly, let quick = data.withUnsafeBytes(Self.quickly) {
                decoded = quick
            } else {
                decoded = try JSONDecoder().decode(File.self, from: data)
            }
        } catch let DecodingError.keyNotFound(key, context) {
            throw .invalid(file: file, path: Self.path(context.codingPath), detail: "\"\(key.stringValue)\" is missing")
        } catch let DecodingError.typeMismatch(type, context) {
            throw .invalid(file: file, path: Self.path(context.codingPath), detail: "expected \(Self.describe(type))")
        } catch let DecodingError.valueNotFound(type, context) {
            throw .invalid(file: file, path: Self.path(context.codingPath), detail: "expected \(Self.describe(type)), found null")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw .invalid(file: file, path: Self.path(context.codingPath), detail: context.debugDescription)
        } catch {
            throw .notJSON(file: file, detail: "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "unreadable")")
        }
        guard decoded.formatVersion == 2 else {
            throw .invalid(file: file, path: "formatVersion", detail: "version \(decoded.formatVersion) is not supported (2 is)")
        }
        var byLabel: [String: Int] = [:], byID: [String: Int] = [:]
        for (i, breed) in decoded.breeds.enumerated() {
            if byID.updateValue(i, forKey: breed.id) != nil { throw .inconsistent(file: file, detail: "id \"\(breed.id)\" appears twice") }
            for label in breed.labels where byLabel.updateValue(i, forKey: label) != nil {
                throw .inconsistent(file: file, detail: "label \"\(label)\" belongs to two breeds")
            }
            for (name, r) in [("height", breed.height.map { ($0.min, $0.max) }), ("weight", breed.weight.map { ($0.min, $0.max) }),
                              ("lifeSpan", breed.lifeSpan.map { ($0.min, $0.max) })] {
                if let (lo, hi) = r, !(lo > 0 && lo <= hi) {
                    throw .inconsistent(file: file, detail: "breeds[\(i)].\(name): min \(lo) and max \(hi) are not a range")
                }
            }
        }
        formatVersion = decoded.formatVersion
        sources = decoded.sources
        vocabulary = decoded.vocabulary ?? [:]
        breeds = decoded.breeds
        foldedNames = FoldedNames()
        self.byLabel = byLabel
        self.byID = byID
    }

    /// The breed a model label (Stanford Dogs folder) stands for.
    public func breed(forLabel label: String) -> Breed? { byLabel[label].map { breeds[$0] } }

    public func breed(id: String) -> Breed? { byID[id].map { breeds[$0] } }

    /// The breed behind a model label: by the catalogue id training gave it (a folder matched by name), else by
    /// its key.
    public func breed(id: String?, label key: String) -> Breed? {
        id.flatMap { breed(id: $0) } ?? breed(forLabel: key)
    }

    /// `term` (an English word or phrase the breeds use) in `language`; the term itself in English or when the
    /// catalogue has no word for it.
    public func term(_ term: String, in language: Language) -> String {
        language == .en ? term : vocabulary[language.rawValue]?[term] ?? term
    }

    /// FCI group `group`'s name in `language` ("Terriers", "teriéři"), as its breeds give it; nil when no breed of
    /// the catalogue is in that group.
    public func groupName(_ group: Int, in language: Language) -> String? {
        breeds.lazy.compactMap(\.fci).first { $0.group == group }.map { term($0.groupName, in: language) }
    }

    /// Breeds sorted by name in `language` (Czech alphabet order for `cs`), optionally only FCI group `group`, and
    /// only those the bundled models recognise.
    public func list(language: Language, fciGroup group: Int? = nil, recognisedOnly: Bool = false) -> [Breed] {
        breeds.filter { (group == nil || $0.fci?.group == group) && (!recognisedOnly || $0.bundledModel) }
            .sorted { a, b in
                let (x, y) = (a.name(in: language), b.name(in: language))
                let order = language == .cs ? CzechCollation.compare(x, y) : Self.compareEnglish(x, y)
                return order != 0 ? order < 0 : a.id < b.id
            }
    }

    static func compareEnglish(_ a: String, _ b: String) -> Int {
        let (x, y) = (TextKey.normalized(a), TextKey.normalized(b))
        return x < y ? -1 : x > y ? 1 : 0
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            .trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = "\(type)"
            return name.hasPrefix("Array") ? "a list" : name.hasPrefix("Dictionary") ? "an object" : "an object"
        }
    }
}

/// The breeds' names folded for search, made once, by the first search that needs them (from any thread).
private final class FoldedNames: @unchecked Sendable {
    private let lock = NSLock()
    private var folded: [[SearchKey]]?

    func keys(for breeds: [Breed]) -> [[SearchKey]] {
        lock.lock()
        defer { lock.unlock() }
        if let folded { return folded }
        let keys = breeds.map(SearchKey.keys(for:))
        folded = keys
        return keys
    }
}
