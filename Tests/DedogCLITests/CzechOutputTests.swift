import Dedog
import DedogCatalogue
import DedogTestSupport
import Foundation
import Synchronization
import Testing

/// `--lang cs` output holds no English words but proper names: every breed's `breeds show`, `breeds list`, and
/// `classify` of dogs and of a picture with no dog. The English words are the catalogue vocabulary's terms (every
/// FCI group, section, country, coat, colour and temperament word it translates) and the interface's own words.
@Suite struct CzechOutputTests {
    /// The catalogue the binary ships, read by the library's own loader.
    static let catalogue = try! Catalogue(contentsOf: SharedData.packageRoot
        .appendingPathComponent("Sources/DedogCatalogue/Resources/breeds.json"))

    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter }.map(String.init)
    }

    /// Proper names that Czech output may show as they are: breed names and aliases (a breed without a public Czech
    /// name keeps its English one), ids, model labels, source repositories and organisations.
    static let properNames: [String] = {
        var names: [String] = []
        for b in catalogue.breeds {
            names += [b.id] + b.allNames + b.labels
        }
        names += catalogue.sources.map(\.repository) + ["American Kennel Club", "Stanford Dogs"]
        return names.sorted { $0.count > $1.count }
    }()

    static let englishWords: Set<String> = {
        let vocabulary = catalogue.vocabulary["cs"] ?? [:]
        var english = Set(vocabulary.flatMap { english, czech in Set(words(english)).subtracting(words(czech)) })
        english.formUnion(["group", "section", "origin", "size", "height", "weight", "life", "span", "years", "male",
                           "female", "coat", "care", "grooming", "shedding", "colours", "temperament", "bundled",
                           "recognises", "labels", "sources", "also", "known", "unsure", "perhaps", "found",
                           "dog", "probability", "looks", "like", "breeds", "knows", "closest", "small", "medium",
                           "large", "giant", "provisionally", "accepted", "entry", "none", "the", "and", "of", "or"])
        // Words that are also the Czech (or international) spelling: not evidence of English.
        english.subtract(["mali", "peru", "malta", "argentina", "uruguay", "papillon", "groenendael", "malinois",
                          "kromfohrländer", "toy", "chin", "fci"])
        return english.filter { $0.count > 1 }
    }()

    static func englishIn(_ output: String) -> [String] {
        var text = output
        for name in properNames { text = text.replacingOccurrences(of: name, with: " ", options: .caseInsensitive) }
        return words(text).filter { englishWords.contains($0) }
    }

    @Test func everyBreedShownInCzechIsCzech() throws {
        let ids = Self.catalogue.breeds.map(\.id)
        let found = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: ids.count) { i in
            guard let r = try? CLI.run(["breeds", "show", ids[i], "--lang", "cs"]), r.status == 0 else {
                found.withLock { $0.append("\(ids[i]): could not be shown") }
                return
            }
            let english = Self.englishIn(r.stdout)
            if !english.isEmpty { found.withLock { $0.append("\(ids[i]): \(english)") } }
        }
        #expect(found.withLock { $0 }.isEmpty, "\(found.withLock { $0 }.sorted().joined(separator: "\n"))")
    }

    @Test func theCzechListIsCzech() throws {
        let r = try CLI.run(["breeds", "list", "--lang", "cs"])
        #expect(r.status == 0)
        #expect(Self.englishIn(r.stdout).isEmpty, "\(Self.englishIn(r.stdout))")
    }

    @Test func czechClassificationIsCzech() throws {
        let photos = ["datasets/samples/beagle.jpg", "datasets/samples/beagle.heic",
                      "Tests/DedogImageTests/Fixtures/png-rgb8.png"]
        let r = try CLI.run(["classify", "--lang", "cs", "-k", "5"] + photos)
        #expect(r.status == 0)
        #expect(r.stdout.contains("žádný pes"), "the noise picture shows no dog: \(r.stdout)")
        let english = Self.englishIn(r.stdout.split(separator: "\n").map { line in
            // File names are the user's, not ours.
            photos.reduce(String(line)) { $0.replacingOccurrences(of: $1, with: " ") }
        }.joined(separator: "\n"))
        #expect(english.isEmpty, "\(english)\n\(r.stdout)")
    }

    /// The check itself catches English: a sentence of the interface's and the vocabulary's words.
    @Test func theWordListCatchesEnglish() {
        #expect(Self.englishIn("grooming: weekly brushing; group 1 Sheepdogs") == ["grooming", "weekly", "brushing",
                                                                                  "group", "sheepdogs"])
        #expect(Self.englishIn("čivava (Chihuahua) · Velká Británie").isEmpty)
    }
}
