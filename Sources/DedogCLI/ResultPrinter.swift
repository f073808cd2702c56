import ArgumentParser
import Dedog
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

    /// What goes before the first result: CSV's header row.
    func begin() {
        guard format == .csv else { return }
        var header = ["file", "verdict", "breed", "probability"]
        for rank in stride(from: 2, through: top, by: 1) { header += ["breed_\(rank)", "probability_\(rank)"] }
        Terminal.out(Self.csvRow(header + ["error"]))
    }

    func result(file: String, _ c: Classification) {
        switch format {
        case .json: emit(Record(file: file, result: c, error: nil, catalogue: catalogue, language: language))
        case .text: Terminal.out(text(file: file, c))
        case .csv:
            var row = [file, c.verdict.rawValue]
            for rank in 0..<top {
                if rank < c.breeds.count {
                    row += [name(c.breeds[rank]), String(format: "%.4f", Double(c.breeds[rank].probability))]
                } else {
                    row += ["", ""]
                }
            }
            Terminal.out(Self.csvRow(row + [""]))
        }
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
        case .json: emit(Record(file: file, result: nil, error: message, catalogue: catalogue, language: language))
        case .csv: Terminal.out(Self.csvRow([file, "error"] + Array(repeating: "", count: 2 * top) + [message]))
        case .text: break  // the error is on stderr already
        }
    }

    private func emit(_ record: Record) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // JSONEncoder fails only on NaN and infinity (a model with absurd weights can produce them); JSON cannot
        // hold them, so they are written as strings rather than ending the run.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(record) else {
            Terminal.out(#"{"error":"this result could not be written as JSON"}"#)
            return
        }
        Terminal.out(String(decoding: data, as: UTF8.self))
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
            lines.append("\(file): \(best.map(name) ?? "?") (\(Self.percent(best?.probability ?? 0, language)))")
        case .unsure:
            let names = c.breeds.prefix(2).map(name).joined(separator: cs ? " nebo " : " or ")
            lines.append(cs ? "\(file): nejisté — možná \(names)" : "\(file): unsure — perhaps \(names)")
        case .otherBreed:
            let closest = best.map(name) ?? "?"
            lines.append(cs ? "\(file): pes, ale žádné z plemen, která tento model zná (nejblíž: \(closest))"
                            : "\(file): a dog, but none of the breeds this model knows (closest: \(closest))")
        case .noDog:
            // ImageNet's class names exist in English only; Czech output leaves them out rather than mix languages.
            let like = cs ? "" : c.lookalikes.first.map { "; it looks more like: " + $0.name } ?? ""
            let p = Self.percent(c.dogProbability ?? 0, language)
            lines.append(cs ? "\(file): žádný pes (pravděpodobnost psa \(p)\(like))"
                            : "\(file): no dog found (dog probability \(p)\(like))")
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
        return lines.joined(separator: "\n")
    }

    /// One JSON Lines record; every key is always present (null when not applicable).
    struct Record: Encodable {
        let file: String
        let result: Classification?
        let error: String?
        let catalogue: Catalogue
        let language: Language

        enum Keys: String, CodingKey { case file, verdict, dogProbability, similarity, breeds, lookalikes, error }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(file, forKey: .file)
            try c.encode(result?.verdict.rawValue, forKey: .verdict)
            try c.encode(result?.dogProbability, forKey: .dogProbability)
            try c.encode(result?.similarity, forKey: .similarity)
            try c.encode((result?.breeds ?? []).map { PredictionRecord(prediction: $0, breed: catalogue.details($0),
                                                                       language: language) }, forKey: .breeds)
            try c.encode(result?.lookalikes ?? [], forKey: .lookalikes)
            try c.encode(error, forKey: .error)
        }
    }

    /// A ranked breed with its catalogue details (null when the catalogue has no entry for the label).
    struct PredictionRecord: Encodable {
        let prediction: Prediction
        let breed: Breed?
        let language: Language

        enum Keys: String, CodingKey { case key, name, probability, breed }
        enum BreedKeys: String, CodingKey { case id, name, size, weight, lifeSpan, origin, fci }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(prediction.key, forKey: .key)
            try c.encode(breed?.name(in: language) ?? prediction.name, forKey: .name)
            try c.encode(prediction.probability, forKey: .probability)
            if let breed {
                var b = c.nestedContainer(keyedBy: BreedKeys.self, forKey: .breed)
                try b.encode(breed.id, forKey: .id)
                try b.encode(breed.name, forKey: .name)
                try b.encode(breed.size, forKey: .size)
                try b.encode(breed.weight, forKey: .weight)
                try b.encode(breed.lifeSpan, forKey: .lifeSpan)
                try b.encode(breed.origin, forKey: .origin)
                try b.encode(breed.fci?.number, forKey: .fci)
            } else {
                try c.encodeNil(forKey: .breed)
            }
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

extension Catalogue {
    /// The catalogue entry for a prediction: by the breed id its model gave it, else by its label key.
    func details(_ p: Prediction) -> Breed? {
        breed(id: p.breed, label: p.key)
    }
}
