import Foundation

/// One breed of the catalogue, as stored in `breeds.json`.
public struct Breed: Codable, Sendable, Equatable {
    /// Stable slug, e.g. `golden-retriever`.
    public var id: String
    /// Model labels (Stanford Dogs folders) that stand for this breed.
    public var labels: [String]
    public var name: Names
    public var aliases: Aliases
    /// FCI nomenclature entry; nil for breeds the FCI does not recognise (see `fciNote`).
    public var fci: FCI?
    public var fciNote: String?
    public var origin: String?
    /// toy, small, medium, large or giant (from the weight range; see scripts/catalogue/build_catalogue.py).
    public var size: String?
    public var height: Measure?
    public var weight: Measure?
    public var lifeSpan: Range?
    public var coat: Coat?
    public var colours: [String]
    /// AKC's three keywords, e.g. ["Friendly", "Intelligent", "Devoted"]; empty when no source gives them.
    public var temperament: [String]
    public var sources: [SourceUse]
    /// Whether dedog's bundled models recognise this breed (it is one of their classes, the Stanford Dogs breeds).
    public var bundledModel: Bool
    /// For a cross of two breeds (a Labradoodle), its parent breeds; nil for a breed.
    public var cross: Cross?

    public struct Names: Codable, Sendable, Equatable {
        public var en: String
        /// nil when no public source gives a Czech name (the catalogue never makes one up).
        public var cs: String?
    }

    public struct Aliases: Codable, Sendable, Equatable {
        public var en: [String]
        public var cs: [String]
        /// The breed's names in the FCI's other languages (German, French, Spanish: "Berner Sennenhund", "Teckel"),
        /// those that differ from its other names. Empty in catalogues written before them.
        public var fci: [String]

        public init(en: [String], cs: [String], fci: [String] = []) {
            self.en = en
            self.cs = cs
            self.fci = fci
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            en = try c.decode([String].self, forKey: .en)
            cs = try c.decode([String].self, forKey: .cs)
            fci = try c.decodeIfPresent([String].self, forKey: .fci) ?? []
        }
    }

    public struct FCI: Codable, Sendable, Equatable {
        public var number: Int
        public var group: Int
        public var groupName: String
        public var section: String?
        public var provisional: Bool
        /// For breeds the FCI lists as varieties of one standard (Poodle sizes, Belgian Shepherd types…).
        public var variety: String?
    }

    public struct Range: Codable, Sendable, Equatable {
        public var min: Double
        public var max: Double
        public var unit: String
    }

    /// An overall range, and per sex where the source gives it.
    public struct Measure: Codable, Sendable, Equatable {
        public var min: Double
        public var max: Double
        public var unit: String
        public var male: Range?
        public var female: Range?
    }

    public struct Coat: Codable, Sendable, Equatable {
        public var grooming: String?
        public var shedding: String?
    }

    /// A cross's parents, each a breed or a family of catalogue entries (a poodle of any size).
    public struct Cross: Codable, Sendable, Equatable {
        public struct Parent: Codable, Sendable, Equatable {
            public var name: Names
            /// The catalogue entries the parent may be, by id.
            public var breeds: [String]
        }

        public var parents: [Parent]
    }

    public struct SourceUse: Codable, Sendable, Equatable {
        public var source: String
        public var fields: [String]
    }

    /// The name in `language`; the English name when the catalogue has no Czech one.
    public func name(in language: Language) -> String { language == .cs ? name.cs ?? name.en : name.en }

    /// For a cross, what it is a cross of, in `language`: "a cross of Labrador Retriever and Poodle",
    /// "kříženec: labradorský retriever × pudl" (the Czech without declension); nil for a breed.
    public func crossDescription(in language: Language) -> String? {
        guard let parents = cross?.parents, !parents.isEmpty else { return nil }
        let names = parents.map { language == .cs ? $0.name.cs ?? $0.name.en : $0.name.en }
        switch language {
        case .cs: return "kříženec: " + names.joined(separator: " × ")
        case .en: return "a cross of " + (names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1])
        }
    }

    /// Every name and alias, English first.
    public var allNames: [String] { [name.en] + (name.cs.map { [$0] } ?? []) + aliases.en + aliases.cs + aliases.fci }
}

/// Languages of the catalogue's names.
public enum Language: String, Sendable, CaseIterable, Codable {
    case en, cs

    /// The language the user's locale asks for: Czech when the first of LC_ALL, LC_MESSAGES and LANG that is set
    /// starts with `cs` (cs_CZ.UTF-8, say), else English. `environment` is the front end's: the library reads none.
    public static func fromLocale(_ environment: [String: String]) -> Language {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        return locale?.lowercased().hasPrefix("cs") == true ? .cs : .en
    }
}

/// Where the facts of the catalogue come from.
public struct Source: Codable, Sendable, Equatable {
    public var id: String
    public var title: String
    public var repository: String
    public var commit: String
    public var path: String
    public var licence: String
}
