import Foundation

/// Text as search compares it: lower case, without diacritics, punctuation as spaces, single-spaced.
enum TextKey {
    static func normalized(_ s: String) -> String {
        let stripped = s.decomposedStringWithCanonicalMapping.unicodeScalars
            .filter { !$0.properties.isDiacritic && $0.properties.generalCategory != .nonspacingMark }
        var out = ""
        var space = false
        for scalar in stripped {
            let c = Character(scalar)
            if c.isLetter || c.isNumber {
                if space && !out.isEmpty { out.append(" ") }
                out += c.lowercased()
                space = false
            } else {
                space = true
            }
        }
        return out
    }
}

/// A name or alias as search compares it, folded once when the catalogue loads.
struct SearchKey: Sendable {
    let name: String
    let key: String
    let words: [String]
    /// An alias (an everyday form, a variety, an older name), not one of the breed's two names.
    let isAlias: Bool
    /// The words a misspelt single word is compared with: the name's own words, or none for a name in the FCI's
    /// other languages, whose common words ("chasse", "perro", "chien") would otherwise be near misses of any
    /// short word typed ("class0" is two letters from "chasse"). Such a name is still found whole, by a word's
    /// beginning, and with typos when several words are typed.
    let typoWords: [String]

    init(_ name: String, isAlias: Bool, foreign: Bool = false) {
        self.name = name
        key = TextKey.normalized(name)
        words = key.split(separator: " ").map(String.init)
        self.isAlias = isAlias
        typoWords = foreign ? [] : words
    }

    /// A breed's names, then its aliases.
    static func keys(for breed: Breed) -> [SearchKey] {
        ([breed.name.en] + (breed.name.cs.map { [$0] } ?? [])).map { SearchKey($0, isAlias: false) }
            + (breed.aliases.en + breed.aliases.cs).map { SearchKey($0, isAlias: true) }
            + breed.aliases.fci.map { SearchKey($0, isAlias: true, foreign: true) }
    }
}

/// One search result and why it matched.
public struct SearchHit: Sendable, Equatable {
    public enum Kind: Int, Sendable, Comparable {
        case exact = 0, prefix, wordPrefix, substring, similar
        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    public let breed: Breed
    public let kind: Kind
    /// The name or alias that matched, as written in the catalogue.
    public let matched: String
    /// Whether `matched` is an alias rather than the breed's English or Czech name.
    public let isAlias: Bool
    /// Edit distance for `similar` hits, 0 otherwise.
    public let distance: Int
}

extension Catalogue {
    /// Whether two names are the same to search: equal after folding case, diacritics and punctuation.
    public static func sameName(_ a: String, _ b: String) -> Bool {
        TextKey.normalized(a) == TextKey.normalized(b)
    }

    /// Breeds whose English or Czech name or alias matches `text`, ignoring case and diacritics: exact matches
    /// first (a breed's name before an alias), then names starting with the text, then names with a word starting
    /// with it, then containing it, then typo-tolerant matches (edit distance up to 1 for short queries, 2 from 6
    /// letters, 3 from 10).
    public func search(_ text: String) -> [SearchHit] {
        let query = TextKey.normalized(text)
        guard !query.isEmpty else { return [] }
        let limit = Self.typoLimit(query.count)
        let queryWords = query.split(separator: " ").map(String.init)
        var best: [String: SearchHit] = [:]
        for (breed, names) in zip(breeds, searchKeys) {
            for name in names {
                let key = name.key
                let hit: SearchHit?
                if key == query {
                    hit = SearchHit(breed: breed, kind: .exact, matched: name.name, isAlias: name.isAlias, distance: 0)
                } else if key.hasPrefix(query) {
                    hit = SearchHit(breed: breed, kind: .prefix, matched: name.name, isAlias: name.isAlias, distance: 0)
                } else if name.words.contains(where: { $0.hasPrefix(query) }) {
                    hit = SearchHit(breed: breed, kind: .wordPrefix, matched: name.name, isAlias: name.isAlias, distance: 0)
                } else if key.contains(query) {
                    hit = SearchHit(breed: breed, kind: .substring, matched: name.name, isAlias: name.isAlias, distance: 0)
                } else if let d = Self.wordsMatch(queryWords, name.words, limit: limit) {
                    // Several words, each the beginning of one of the name's words or a near miss, in order.
                    hit = SearchHit(breed: breed, kind: d == 0 ? .wordPrefix : .similar, matched: name.name, isAlias: name.isAlias,
                                    distance: d)
                } else {
                    // Whole name, or any single word of it, within the limit.
                    let d = ([key] + name.typoWords).map { Self.editDistance(query, $0, limit: limit) }.min() ?? .max
                    hit = d <= limit ? SearchHit(breed: breed, kind: .similar, matched: name.name, isAlias: name.isAlias, distance: d) : nil
                }
                if let hit, best[breed.id].map({ Self.ranks(hit, before: $0) }) ?? true {
                    best[breed.id] = hit
                }
            }
        }
        return best.values.sorted { Self.ranks($0, before: $1) }
    }

    /// The `count` names closest to `text` by edit distance, for "did you mean" suggestions.
    public func suggestions(for text: String, count: Int = 3) -> [Breed] {
        let query = TextKey.normalized(text)
        var scored: [(distance: Int, breed: Breed)] = []
        for (breed, names) in zip(breeds, searchKeys) {
            let keys = names.flatMap { [$0.key] + $0.typoWords }
            let distance = keys.map { Self.editDistance(query, $0, limit: 64) }.min() ?? Int.max
            scored.append((distance, breed))
        }
        scored.sort { a, b in a.distance != b.distance ? a.distance < b.distance : Self.breedFirst(a.breed, b.breed) }
        return scored.prefix(count).map(\.breed)
    }

    /// Better kinds of match first, a breed's own name before an alias, then fewer typos, then breeds the bundled
    /// models recognise (what most people look up), then by name.
    static func ranks(_ a: SearchHit, before b: SearchHit) -> Bool {
        if a.kind != b.kind { return a.kind < b.kind }
        if a.isAlias != b.isAlias { return !a.isAlias }
        if a.distance != b.distance { return a.distance < b.distance }
        return breedFirst(a.breed, b.breed)
    }

    /// Between equally good matches: breeds the bundled models recognise first, then by English name.
    static func breedFirst(_ a: Breed, _ b: Breed) -> Bool {
        a.bundledModel != b.bundledModel ? a.bundledModel : a.name.en < b.name.en
    }

    static func typoLimit(_ length: Int) -> Int { length >= 10 ? 3 : length >= 6 ? 2 : 1 }

    /// For a query of two or more words: the typos it takes for each word, in order, to be the beginning of a
    /// different word of `name` ("central asian" in "central asia shepherd dog": 1, "asian" against "asia"), at
    /// most 1 a word of 4 or 5 letters and 2 from 6 (none below 4), `limit` in all; nil when the words do not fit.
    static func wordsMatch(_ query: [String], _ name: [String], limit: Int) -> Int? {
        guard query.count >= 2, query.count <= name.count else { return nil }
        var next = 0, total = 0
        for word in query {
            let allowed = word.count >= 6 ? 2 : word.count >= 4 ? 1 : 0
            var found: (index: Int, distance: Int)?
            for i in next..<name.count {
                let candidate = name[i]
                if candidate.hasPrefix(word) {
                    found = (i, 0)
                    break
                }
                guard allowed > 0 else { continue }
                let d = min(editDistance(word, candidate, limit: allowed),
                            editDistance(word, String(candidate.prefix(word.count)), limit: allowed))
                if d <= allowed, d < (found?.distance ?? .max) { found = (i, d) }
            }
            guard let found else { return nil }
            total += found.distance
            next = found.index + 1
        }
        return total <= limit ? total : nil
    }

    /// Damerau–Levenshtein (optimal string alignment) distance, giving up early above `limit`.
    static func editDistance(_ a: String, _ b: String, limit: Int) -> Int {
        let x = Array(a), y = Array(b)
        if abs(x.count - y.count) > limit { return limit + 1 }
        if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
        var before = [Int](repeating: 0, count: y.count + 1)
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            var rowMin = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                var v = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { v = min(v, before[j - 2] + 1) }
                current[j] = v
                rowMin = min(rowMin, v)
            }
            if rowMin > limit { return limit + 1 }
            (before, previous, current) = (previous, current, before)
        }
        return previous[y.count]
    }
}

/// What a class folder's name (or a name given on the command line) stands for in the catalogue.
public enum NameMatch: Sendable, Equatable {
    /// One breed, and the name or label it matched by.
    case breed(Breed, matched: String)
    /// Several breeds answer to the name exactly (e.g. "poodle": toy, miniature and standard).
    case ambiguous([Breed])
    /// No breed answers to it exactly; the breeds `search` finds for it, best first (often none).
    case unknown(closest: [Breed])

    public var breed: Breed? {
        if case let .breed(b, _) = self { return b }
        return nil
    }
}

extension Catalogue {
    /// The breed a class name stands for, folding case, diacritics and punctuation as `search` does: a model
    /// label or Stanford Dogs folder (`n02085620-Chihuahua`), or a breed's English or Czech name or alias, whole
    /// (`čivava`, `Golden_Retriever`, `german-shepherd-dog`). A leading WordNet id (`n02085620-`) is ignored, so
    /// ImageNet-style folders match by their name too. Only whole names match; for anything else the closest
    /// breeds are given, so that a folder is never silently taken for a breed it only resembles.
    public func match(className: String) -> NameMatch {
        if let breed = breed(forLabel: className) { return .breed(breed, matched: className) }
        let name = Self.withoutWordNetID(className)
        let key = TextKey.normalized(name)
        guard !key.isEmpty else { return .unknown(closest: []) }
        var found: [(Breed, String)] = []
        for breed in breeds {
            let names = [breed.id] + breed.allNames + breed.labels.map(Self.withoutWordNetID)
            if let hit = names.first(where: { TextKey.normalized($0) == key }) { found.append((breed, hit)) }
        }
        switch found.count {
        case 1: return .breed(found[0].0, matched: found[0].1)
        case 0:
            return .unknown(closest: search(name).prefix(3).map(\.breed))
        default: return .ambiguous(found.map(\.0).sorted { $0.name.en < $1.name.en })
        }
    }

    /// `n02085620-Chihuahua` → `Chihuahua`; other names as they are.
    static func withoutWordNetID(_ name: String) -> String {
        guard name.first == "n", let dash = name.firstIndex(of: "-"),
              name[name.index(after: name.startIndex)..<dash].count == 8,
              name[name.index(after: name.startIndex)..<dash].allSatisfy(\.isNumber) else { return name }
        return String(name[name.index(after: dash)...])
    }
}
