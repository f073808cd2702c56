import Dedog
import DedogCatalogue
import Foundation

/// What `classify` found over many photos: how many of each verdict, and how many of each named breed.
struct ClassifySummary {
    var named: [String: Int] = [:]
    var dogs = 0, unsure = 0, noDog = 0, otherBreed = 0, failed = 0

    /// Photos that got a verdict.
    var classified: Int { dogs + unsure + noDog + otherBreed }
    /// Every input counted: classified, or failed (a photo that could not be read, a named file that is none).
    var photos: Int { classified + failed }

    mutating func add(_ c: Classification, name: String?) {
        switch c.verdict {
        case .dog:
            dogs += 1
            named[name ?? "?", default: 0] += 1
        case .unsure: unsure += 1
        case .noDog: noDog += 1
        case .otherBreed: otherBreed += 1
        }
    }

    /// A line of counts, then the named breeds, most frequent first (as `label: n`, which needs no plural forms).
    func text(_ language: Language) -> String {
        let cs = language == .cs
        var parts = [(cs ? "fotek" : "photos", photos), (cs ? "plemeno určeno" : "breed named", dogs),
                     (cs ? "nejisté" : "unsure", unsure), (cs ? "bez psa" : "no dog", noDog)]
        if otherBreed > 0 { parts.append((cs ? "jiné plemeno" : "another breed", otherBreed)) }
        parts.append((cs ? "nelze přečíst" : "failed", failed))
        var lines = [(cs ? "Souhrn — " : "Summary — ") + parts.map { "\($0.0): \($0.1)" }.joined(separator: " · ")]
        let ranked = named.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let width = ranked.map(\.key.count).max() ?? 0
        for (breed, count) in ranked {
            lines.append("  " + breed + String(repeating: " ", count: width - breed.count) + "  \(count)")
        }
        return lines.joined(separator: "\n")
    }
}

/// The line on stderr while `classify` works through folders: count, share, rate and time left. Only on a
/// terminal; cleared before each result so that results and the line never mix.
final class ClassifyProgress {
    private let total: Int
    private let language: Language
    private let started = Date()
    private var shown = false

    init(total: Int, language: Language) {
        self.total = total
        self.language = language
    }

    /// Shows `done` of the total photos finished.
    func draw(done: Int) {
        guard total > 0, done < total else { return }
        let elapsed = Date().timeIntervalSince(started)
        var line = "\(done)/\(total) (\(done * 100 / total) %)"
        if done > 0 {
            let left = elapsed / Double(done) * Double(total - done)
            line += language == .cs ? " · zbývá asi \(ProgressBar.duration(left))" : " · about \(ProgressBar.duration(left)) left"
        }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        shown = true
    }

    func clear() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = false
    }
}

extension PhotoFiles.Found {
    var isImage: Bool {
        if case .image = self { return true }
        return false
    }
}
