@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogTestSupport
import Foundation
import Synchronization
import Testing

/// `--lang cs` output holds no English words but proper names: every breed's `breeds show`, `breeds list`, and
/// `classify` of dogs and of a picture with no dog (the word list: `CzechWords`).
@Suite struct CzechOutputTests {
    static func englishIn(_ output: String) -> [String] { CzechWords.englishIn(output) }

    @Test func everyBreedShownInCzechIsCzech() throws {
        let ids = CzechWords.breedIDs
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
