import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

/// How `classify` writes its results.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    /// For people: the breeds with their details, and a closing summary.
    case text
    /// JSON Lines: one object per photo, every key always present.
    case json
    /// One row per photo (RFC 4180, with a header row): file, verdict, breed, probability, the other top-k, error.
    case csv
}

/// Formats classification results as text for people, JSON Lines or CSV for scripts and spreadsheets.
struct ResultPrinter {
    let format: OutputFormat
    let catalogue: Catalogue
    let language: Language
    /// Breeds per photo: the number of breed/probability column pairs in CSV.
    var top = 3

    /// What goes before the first result: CSV's header row. `kind` is the kind of dog said when no breed is
    /// named. The last five columns say where the dog is: `dog` is empty for a photo answered as a whole, and
    /// numbers the dogs of a photo of several, one row each.
    func begin() {
        guard format == .csv else { return }
        var header = ["file", "verdict", "breed", "probability"]
        for rank in stride(from: 2, through: top, by: 1) { header += ["breed_\(rank)", "probability_\(rank)"] }
        Terminal.out(Self.csvRow(header + ["looks_like", "kind", "error", "dog", "x", "y", "width", "height"]))
    }

    func result(file: String, _ c: Classification) {
        switch format {
        case .json: emit(ClassificationRecord(file: file, result: c, error: nil, catalogue: catalogue, language: language))
        case .text: Terminal.out(text(file: file, c))
        case .csv:
            if c.dogs.count > 1 {
                for (i, dog) in c.dogs.enumerated() { Terminal.out(csvRow(file: file, dog, number: i + 1)) }
            } else {
                Terminal.out(csvRow(file: file, c, number: nil))
            }
        }
    }

    /// One CSV row: a photo's answer, or the answer for its dog `number`.
    private func csvRow(file: String, _ c: Classification, number: Int?) -> String {
        var row = [file, c.verdict.rawValue]
        for rank in 0..<top {
            if rank < c.breeds.count {
                row += [name(c.breeds[rank]), String(format: "%.4f", Double(c.breeds[rank].probability))]
            } else {
                row += ["", ""]
            }
        }
        let box = c.location.map { ["\($0.x)", "\($0.y)", "\($0.width)", "\($0.height)"] } ?? ["", "", "", ""]
        return Self.csvRow(row + [c.looksLike?.name(in: language) ?? "", c.kind?.name(catalogue, in: language) ?? "", "",
                                  number.map(String.init) ?? ""] + box)
    }

    /// A CSV row: fields with a comma, quote or line break are quoted, quotes doubled (RFC 4180). A field starting
    /// with =, +, - or @ gets a leading apostrophe, so that a spreadsheet shows a file name rather than running it.
    static func csvRow(_ fields: [String]) -> String {
        fields.map { field -> String in
            var f = field
            if let first = f.first, "=+-@".contains(first) { f = "'" + f }
            guard f.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return f }
            return "\"" + f.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",")
    }

    /// A prediction's name in the chosen language: the catalogue's, else the model's label name.
    func name(_ p: Prediction) -> String {
        catalogue.details(p)?.name(in: language) ?? p.name
    }

    func failure(file: String, message: String) {
        switch format {
        case .json: emit(ClassificationRecord(file: file, result: nil, error: message, catalogue: catalogue, language: language))
        case .csv: Terminal.out(Self.csvRow([file, "error"] + Array(repeating: "", count: 2 * top + 2) + [message] + Array(repeating: "", count: 5)))
        case .text: break  // the error is on stderr already
        }
    }

    private func emit(_ record: ClassificationRecord) {
        Terminal.out(String(decoding: record.json(), as: UTF8.self))
    }

    static func percent(_ p: Float, _ language: Language = .en) -> String {
        let value = Double(p) * 100
        let text = value >= 99.95 || value < 0.05 && value > 0 ? String(format: "%.2f %%", value) : String(format: "%.1f %%", value)
        return BreedText.decimal(text, language)
    }

    func text(file: String, _ c: Classification) -> String {
        var lines: [String] = []
        let best = c.breeds.first
        let cs = language == .cs
        switch c.verdict {
        case .dog:
            let cross = best.flatMap { catalogue.details($0)?.crossDescription(in: language) }.map { ", " + $0 } ?? ""
            lines.append("\(file): \(best.map(name) ?? "?")\(cross) (\(Self.percent(best?.probability ?? 0, language)))")
        case .unsure, .otherBreed:
            lines.append("\(file): " + noBreedNamed(c))
        case .noDog:
            // ImageNet's class names exist in English only; Czech output leaves them out rather than mix languages.
            // The class named is the kind said, where there is one ("a cat … most like: tabby", not "… most like: mink").
            let named = c.lookalikes.first.flatMap { c.looksLike == nil || LooksLike(imagenetKey: $0.key) == c.looksLike ? $0 : nil }
            let like = cs ? "" : named.map { "; most like: " + $0.name } ?? ""
            let p = Self.percent(c.dogProbability ?? 0, language)
            let seen = c.looksLike.map { (cs ? " — vypadá to jako " : " — it looks like ") + $0.name(in: language) } ?? ""
            lines.append(cs ? "\(file): žádný pes\(seen) (pravděpodobnost psa \(p)\(like))"
                            : "\(file): no dog\(seen) (dog probability \(p)\(like))")
        }
        if let box = c.location, box.zoomed, c.verdict != .noDog {
            lines.append(cs ? "  (odpověď je i z druhého, bližšího pohledu na psa: \(box.width)×\(box.height) px na \(box.x), \(box.y))"
                            : "  (the answer also comes from a second, closer look at the dog: \(box.width)×\(box.height) px at \(box.x), \(box.y))")
        }
        if c.verdict != .noDog {
            let names = c.breeds.map(name)
            let width = names.map(\.count).max() ?? 0
            for (i, p) in c.breeds.enumerated() {
                let pad = String(repeating: " ", count: width - names[i].count)
                var line = "  \(i + 1). \(names[i])\(pad)  \(Self.percent(p.probability, language).leftPadded(to: 8))"
                if let breed = catalogue.details(p) { line += "   " + BreedText.summary(breed, catalogue, language) }
                lines.append(line)
            }
        }
        if c.dogs.count > 1 {
            lines.append(cs ? "  Na fotce jsou \(c.dogs.count) psi:" : "  The photo shows \(c.dogs.count) dogs:")
            for (i, dog) in c.dogs.enumerated() {
                let place = dog.location.map { " (\($0.width)×\($0.height) px \(cs ? "na" : "at") \($0.x), \($0.y))" } ?? ""
                lines.append("    \(i + 1).\(place): " + dogLine(dog))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One dog of a photo of several, with its own verdict: its breed, or the two it may be, or none it knows.
    func dogLine(_ dog: Classification) -> String {
        let cs = language == .cs
        let named = dog.breeds.prefix(2).map { "\(name($0)) \(Self.percent($0.probability, language))" }
        switch dog.verdict {
        case .dog, .noDog:
            return named.joined(separator: cs ? ", nebo " : ", or ")
        case .unsure, .otherBreed:
            return noBreedNamed(dog)
        }
    }

    /// An answer that names no breed: unsure between two, or a breed the model does not know, with the kind of dog
    /// where the model is sure of that much ("a dog of a breed this model does not know — kind: Terriers (FCI
    /// group 3); looks most like Border Terrier, Norfolk Terrier").
    func noBreedNamed(_ c: Classification) -> String {
        let cs = language == .cs
        let kind = c.kind.map { (cs ? "druh: " : "kind: ") + $0.name(catalogue, in: language) }
        if c.verdict == .unsure {
            let names = c.breeds.prefix(2).map(name).joined(separator: cs ? " nebo " : " or ")
            return (cs ? "nejisté — možná " : "unsure — perhaps ") + names + (kind.map { "; " + $0 } ?? "")
        }
        let alike = c.breeds.prefix(2).map(name).joined(separator: ", ")
        let unknown = cs ? "pes plemene, které tento model nezná" : "a dog of a breed this model does not know"
        guard let kind else { return unknown + (cs ? " (nejvíc se podobá: \(alike))" : " (looks most like \(alike))") }
        return "\(unknown) — \(kind); " + (cs ? "nejvíc se podobá: \(alike)" : "looks most like \(alike)")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
