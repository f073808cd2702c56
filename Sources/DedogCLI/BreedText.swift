import Dedog
import DedogCatalogue
import Foundation

/// How breeds look in text and JSON output.
enum BreedText {
    static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // JSONEncoder fails only on NaN and infinity, which JSON cannot hold; they are written as strings.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Left-aligned columns separated by two spaces; no trailing spaces.
    static func table(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in c == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count) }
                .joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// A number as `language` writes it: 12.5 in English, 12,5 in Czech.
    static func number(_ x: Double, _ language: Language = .en) -> String {
        decimal(x == x.rounded() ? String(Int(x)) : String(format: "%.1f", x), language)
    }

    /// `text`, a number formatted with a decimal point, with the decimal sign `language` uses.
    static func decimal(_ text: String, _ language: Language) -> String {
        language == .cs ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    static func range(_ lo: Double, _ hi: Double, _ unit: String, _ language: Language) -> String {
        let u = language == .cs && unit == "years" ? "let" : unit
        return (lo == hi ? number(lo, language) : "\(number(lo, language))–\(number(hi, language))") + " " + u
    }

    static func measure(_ m: Breed.Measure, _ language: Language) -> String {
        var s = range(m.min, m.max, m.unit, language)
        var sexes: [String] = []
        if let male = m.male { sexes.append((language == .cs ? "pes " : "male ") + range(male.min, male.max, male.unit, language)) }
        if let female = m.female { sexes.append((language == .cs ? "fena " : "female ") + range(female.min, female.max, female.unit, language)) }
        if !sexes.isEmpty { s += " (" + sexes.joined(separator: ", ") + ")" }
        return s
    }

    static func size(_ size: String, _ language: Language) -> String {
        Catalogue.size(size, in: language)
    }

    /// Countries of origin in `language` (the catalogue stores FCI's English wording; its vocabulary has the rest).
    static func origin(_ origin: String, _ catalogue: Catalogue, _ language: Language) -> String {
        catalogue.origin(origin, in: language)
    }

    /// One line for a prediction: size · weight · life span · origin.
    static func summary(_ b: Breed, _ catalogue: Catalogue, _ language: Language) -> String {
        [b.size.map { size($0, language) },
         b.weight.map { range($0.min, $0.max, $0.unit, language) },
         b.lifeSpan.map { range($0.min, $0.max, $0.unit, language) },
         b.origin.map { origin($0, catalogue, language) }].compactMap { $0 }.joined(separator: " · ")
    }

    /// The breed's name, and in Czech a note when the catalogue has no Czech name (no source gave one). A cross's
    /// name is its own word in both languages (Labradoodle).
    static func title(_ b: Breed, _ language: Language) -> String {
        switch (language, b.name.cs) {
        case (.cs, let cs?): return "\(cs) (\(b.name.en))"
        case (.cs, nil) where b.cross != nil: return b.name.en
        case (.cs, nil): return "\(b.name.en) (český název nemáme: žádný veřejný zdroj ho neuvádí)"
        case (_, let cs?): return "\(b.name.en) (\(cs))"
        case (_, nil): return b.name.en
        }
    }

    /// `model`: what a model file knows of the breed (`breeds show --model`), said in the row "this model".
    static func details(_ b: Breed, catalogue: Catalogue, language: Language, model: ModelKnows? = nil) -> String {
        let czech = language == .cs
        let t = { (term: String) in catalogue.term(term, in: language) }
        var rows: [[String]] = [["id", b.id]]
        let aliases = (czech ? b.aliases.cs + b.aliases.en : b.aliases.en + b.aliases.cs)
        if !aliases.isEmpty { rows.append([czech ? "také" : "also known as", aliases.joined(separator: ", ")]) }
        if !b.aliases.fci.isEmpty {
            rows.append([czech ? "názvy FCI" : "FCI names", b.aliases.fci.joined(separator: ", ")])
        }
        if let cross = b.cross {
            let parents = cross.parents.map { czech ? $0.name.cs ?? $0.name.en : $0.name.en }
            rows.append([czech ? "kříženec plemen" : "a cross of", parents.joined(separator: " × ")])
        }
        if let f = b.fci {
            var text = "\(f.number) · " + (czech ? "skupina" : "group") + " \(f.group) \(t(f.groupName))"
            if let section = f.section { text += " · " + (czech ? "sekce " : "section ") + t(section) }
            if let variety = f.variety { text += " · " + (czech ? "varieta " : "variety ") + t(variety) }
            if f.provisional { text += czech ? " (prozatímně uznané)" : " (provisionally accepted)" }
            rows.append(["FCI", text])
        } else {
            rows.append(["FCI", "– (" + (b.fciNote.map(t) ?? (czech ? "bez záznamu" : "no entry")) + ")"])
        }
        func row(_ en: String, _ czechLabel: String, _ value: String?) {
            rows.append([czech ? czechLabel : en, value ?? "–"])
        }
        row("origin", "původ", b.origin.map { origin($0, catalogue, language) })
        row("size", "velikost", b.size.map { size($0, language) })
        row("height", "výška", b.height.map { measure($0, language) })
        row("weight", "hmotnost", b.weight.map { measure($0, language) })
        row("life span", "délka života", b.lifeSpan.map { range($0.min, $0.max, $0.unit, language) })
        row("coat care", "péče o srst", b.coat.map { c in
            [c.grooming.map { (czech ? "česání: " : "grooming: ") + t($0).lowercased() },
             c.shedding.map { (czech ? "línání: " : "shedding: ") + t($0).lowercased() }].compactMap { $0 }.joined(separator: "; ")
        })
        row("colours", "barvy", b.colours.isEmpty ? nil : b.colours.map(t).joined(separator: ", "))
        row("temperament", "povaha", b.temperament.isEmpty ? nil : b.temperament.map(t).joined(separator: ", "))
        row("bundled model", "vestavěný model",
            b.bundledModel ? (czech ? "rozpozná" : "recognises it") : (czech ? "nerozpozná" : "does not recognise it"))
        if !b.labels.isEmpty { row("model labels", "štítky modelu", b.labels.joined(separator: ", ")) }
        if let model { row("this model", "tento model", model.text(czech: czech)) }
        let titles = Dictionary(uniqueKeysWithValues: catalogue.sources.map { ($0.id, "\(t($0.title)) (\($0.repository))") })
        let fieldNames = czech ? ["fci": "FCI", "origin": "původ", "height": "výška", "weight": "hmotnost",
                                  "lifeSpan": "délka života", "coat": "srst", "colours": "barvy",
                                  "temperament": "povaha", "name.cs": "český název", "aliases.cs": "další české názvy",
                                  "aliases.en": "další anglické názvy", "aliases.fci": "názvy FCI v dalších jazycích",
                                  "cross": "rodičovská plemena", "cross.cs": "česká jména rodičovských plemen"] : [:]
        let sources = b.sources.map { use in
            "\(titles[use.source] ?? use.source): \(use.fields.map { fieldNames[$0] ?? $0 }.joined(separator: ", "))"
        }
        rows.append([czech ? "zdroje" : "sources", sources.joined(separator: "; ")])
        return title(b, language) + "\n" + table(rows.map { ["  " + $0[0], $0[1]] })
    }
}

/// What a model file knows of one breed, for `breeds show --model`: nothing, a trained breed, or a taught one, with the
/// confirmed photos it has of it (a taught breed's are what it was made from, and it grows with each).
enum ModelKnows {
    case unknown
    case trained(photos: Int)
    case taught(photos: Int)

    func text(czech: Bool) -> String {
        switch self {
        case .unknown: return czech ? "nezná" : "does not know it"
        case let .trained(n) where n == 0: return czech ? "zná (natrénováno)" : "knows it (trained)"
        case let .trained(n):
            return czech ? "zná (natrénováno); potvrzené fotografie: \(n)" : "knows it (trained); \(n) confirmed photo\(n == 1 ? "" : "s")"
        case let .taught(n):
            return czech ? "zná (naučeno z potvrzených fotografií: \(n))" : "knows it, taught from \(n) confirmed photo\(n == 1 ? "" : "s")"
        }
    }
}
