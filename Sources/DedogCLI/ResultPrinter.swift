import Dedog
import Foundation

/// Formats classification results as text for people or as JSON Lines for scripts.
struct ResultPrinter {
    let json: Bool

    func result(file: String, _ c: Classification) {
        if json {
            emit(Record(file: file, result: c, error: nil))
        } else {
            Terminal.out(Self.text(file: file, c))
        }
    }

    func failure(file: String, message: String) {
        if json { emit(Record(file: file, result: nil, error: message)) }
    }

    private func emit(_ record: Record) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        Terminal.out(String(decoding: try! encoder.encode(record), as: UTF8.self))
    }

    static func percent(_ p: Float) -> String {
        let value = Double(p) * 100
        return value >= 99.95 || value < 0.05 && value > 0 ? String(format: "%.2f %%", value) : String(format: "%.1f %%", value)
    }

    static func text(file: String, _ c: Classification) -> String {
        var lines: [String] = []
        let best = c.breeds.first
        switch c.verdict {
        case .dog:
            lines.append("\(file): \(best?.name ?? "?") (\(percent(best?.probability ?? 0)))")
        case .unsure:
            let names = c.breeds.prefix(2).map(\.name).joined(separator: " or ")
            lines.append("\(file): unsure — perhaps \(names)")
        case .noDog:
            let like = c.lookalikes.first.map { "; it looks more like: \($0.name)" } ?? ""
            lines.append("\(file): no dog found (dog probability \(percent(c.dogProbability ?? 0))\(like))")
        }
        if c.verdict != .noDog {
            let width = c.breeds.map(\.name.count).max() ?? 0
            for (i, p) in c.breeds.enumerated() {
                let pad = String(repeating: " ", count: width - p.name.count)
                lines.append("  \(i + 1). \(p.name)\(pad)  \(percent(p.probability).leftPadded(to: 8))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON Lines record; every key is always present (null when not applicable).
    struct Record: Encodable {
        let file: String
        let result: Classification?
        let error: String?

        enum Keys: String, CodingKey { case file, verdict, dogProbability, breeds, lookalikes, error }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(file, forKey: .file)
            try c.encode(result?.verdict.rawValue, forKey: .verdict)
            try c.encode(result?.dogProbability, forKey: .dogProbability)
            try c.encode(result?.breeds ?? [], forKey: .breeds)
            try c.encode(result?.lookalikes ?? [], forKey: .lookalikes)
            try c.encode(error, forKey: .error)
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
