import Dedog
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

    static func number(_ x: Double) -> String {
        x == x.rounded() ? String(Int(x)) : String(format: "%.1f", x)
    }

    static func range(_ lo: Double, _ hi: Double, _ unit: String, _ language: Language) -> String {
        let u = language == .cs && unit == "years" ? "let" : unit
        return (lo == hi ? number(lo) : "\(number(lo))–\(number(hi))") + " " + u
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
        guard language == .cs else { return size }
        return ["toy": "trpasličí", "small": "malé", "medium": "střední", "large": "velké", "giant": "obří"][size] ?? size
    }

    /// Countries of origin in Czech (the catalogue stores FCI's English wording).
    static let czechCountries: [String: String] = [
        "Afghanistan": "Afghánistán", "Australia": "Austrálie", "Belgium": "Belgie", "Canada": "Kanada",
        "Central Africa": "Střední Afrika", "Central Mediterranean Basin": "Středomoří", "China": "Čína",
        "France": "Francie", "Germany": "Německo", "Great Britain": "Velká Británie", "Hungary": "Maďarsko",
        "Ireland": "Irsko", "Italy": "Itálie", "Japan": "Japonsko", "Mexico": "Mexiko", "Middle East": "Blízký východ",
        "Northern Russia": "severní Rusko", "Siberia": "Sibiř", "Norway": "Norsko", "Russian Federation": "Rusko",
        "South Africa": "Jihoafrická republika", "Spain": "Španělsko", "Switzerland": "Švýcarsko",
        "Tibet (China)": "Tibet (Čína)", "United States of America": "USA", "United States": "USA",
    ]

    static func origin(_ origin: String, _ language: Language) -> String {
        guard language == .cs else { return origin }
        return origin.components(separatedBy: ", ").map { czechCountries[$0] ?? $0 }.joined(separator: ", ")
    }

    /// One line for a prediction: size · weight · life span · origin.
    static func summary(_ b: Breed, _ language: Language) -> String {
        [b.size.map { size($0, language) },
         b.weight.map { range($0.min, $0.max, $0.unit, language) },
         b.lifeSpan.map { range($0.min, $0.max, $0.unit, language) },
         b.origin.map { origin($0, language) }].compactMap { $0 }.joined(separator: " · ")
    }

    static func details(_ b: Breed, catalogue: Catalogue, language cs: Language) -> String {
        let czech = cs == .cs
        let (primary, secondary) = czech ? (b.name.cs, b.name.en) : (b.name.en, b.name.cs)
        var rows: [[String]] = [["id", b.id]]
        let aliases = (czech ? b.aliases.cs + b.aliases.en : b.aliases.en + b.aliases.cs)
        if !aliases.isEmpty { rows.append([czech ? "také" : "also known as", aliases.joined(separator: ", ")]) }
        if let f = b.fci {
            var text = "\(f.number) · " + (czech ? "skupina" : "group") + " \(f.group) \(f.groupName)"
            if let section = f.section { text += " · " + (czech ? "sekce " : "section ") + section }
            if let variety = f.variety { text += " · " + (czech ? "varieta " : "variety ") + variety }
            if f.provisional { text += czech ? " (prozatímně uznané)" : " (provisionally accepted)" }
            rows.append(["FCI", text])
        } else {
            rows.append(["FCI", "– (" + (b.fciNote ?? "no entry") + ")"])
        }
        func row(_ en: String, _ czechLabel: String, _ value: String?) {
            rows.append([czech ? czechLabel : en, value ?? "–"])
        }
        row("origin", "původ", b.origin.map { origin($0, cs) })
        row("size", "velikost", b.size.map { size($0, cs) })
        row("height", "výška", b.height.map { measure($0, cs) })
        row("weight", "hmotnost", b.weight.map { measure($0, cs) })
        row("life span", "délka života", b.lifeSpan.map { range($0.min, $0.max, $0.unit, cs) })
        row("coat care", "péče o srst", b.coat.map { c in
            [c.grooming.map { (czech ? "česání: " : "grooming: ") + $0.lowercased() },
             c.shedding.map { (czech ? "línání: " : "shedding: ") + $0.lowercased() }].compactMap { $0 }.joined(separator: "; ")
        })
        row("colours", "barvy", b.colours.isEmpty ? nil : b.colours.joined(separator: ", "))
        row("temperament", "povaha", b.temperament)
        row("model labels", "štítky modelu", b.labels.joined(separator: ", "))
        let titles = Dictionary(uniqueKeysWithValues: catalogue.sources.map { ($0.id, "\($0.title) (\($0.repository))") })
        let sources = b.sources.map { "\(titles[$0.source] ?? $0.source): \($0.fields.joined(separator: ", "))" }
        rows.append([czech ? "zdroje" : "sources", sources.joined(separator: "; ")])
        return "\(primary) (\(secondary))\n" + table(rows.map { ["  " + $0[0], $0[1]] })
    }
}
