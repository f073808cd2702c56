import DedogImage
import DedogTestSupport
import Foundation
import Testing

/// A photo of two dogs, made from two Stanford test photos (a Samoyed and a Staffordshire Bull Terrier, restored to
/// their proportions, side by side): each dog named on its own with its box, in text, JSON and CSV, English and Czech, both models.
@Suite(.needsStanfordDogs) struct TwoDogsCommandTests {
    static let pair = DogPhotos.testPair

    /// The two-dog photo as a JPEG in a fresh folder, and what is in it.
    static func photo() throws -> (url: URL, made: DogPhotos.Made) {
        let made = try DogPhotos.sideBySide(pair)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-two-dogs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent("two-dogs.jpg")
        try Data(JPEGEncoder.encode(made.image, quality: 92)).write(to: url)
        return (url, made)
    }

    @Test(arguments: ["default", "fast"]) func eachDogIsNamedWithItsBox(model: String) throws {
        let (url, made) = try Self.photo()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let json = try CLI.run(["classify", "--model", model, "--json", url.path])
        #expect(json.status == 0)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let dogs = try #require(record["dogs"] as? [[String: Any]], "\(json.stdout)")
        try #require(dogs.count == 2, "\(json.stdout)")
        var names: [String] = []
        for dog in dogs {
            let location = try #require(dog["location"] as? [String: Any])
            let box = (location["x"] as? Int ?? -1, location["y"] as? Int ?? -1, location["width"] as? Int ?? 0, location["height"] as? Int ?? 0)
            let key = (dog["breeds"] as? [[String: Any]])?.first?["key"] as? String ?? "-"
            let truth = try #require(made.breeds.firstIndex(of: key), "\(model): a dog named \(key)")
            #expect(DogPhotos.overlap(box, made.boxes[truth]) >= 0.5, "\(model): \(key) at \(box)")
            #expect(dog["verdict"] as? String == "dog")
            names.append(key)
        }
        #expect(Set(names) == Set(made.breeds))

        // Text: the photo's answer, then a line per dog with its box and names, in English and Czech.
        let text = try CLI.run(["classify", "--model", model, url.path])
        #expect(text.stdout.contains("  The photo shows 2 dogs:\n    1. ("), "\(text.stdout)")
        #expect(DogPhotos.testPairNames.en.allSatisfy(text.stdout.contains), "\(text.stdout)")
        let cs = try CLI.run(["classify", "--model", model, "--lang", "cs", url.path])
        #expect(cs.stdout.contains("  Na fotce jsou 2 psi:\n    1. ("), "\(cs.stdout)")
        #expect(DogPhotos.testPairNames.cs.allSatisfy(cs.stdout.contains), "\(cs.stdout)")

        // CSV: one row per dog, numbered, with its box.
        let csv = try CLI.run(["classify", "--model", model, "--format", "csv", "-k", "1", url.path])
        let rows = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        try #require(rows.count == 3, "\(csv.stdout)")
        #expect(rows[0] == ["file", "verdict", "breed", "probability", "looks_like", "kind", "error", "dog", "x", "y", "width", "height"])
        #expect(rows[1][7] == "1" && rows[2][7] == "2", "\(csv.stdout)")
        for row in rows.dropFirst() {
            let box = (Int(row[8]) ?? -1, Int(row[9]) ?? -1, Int(row[10]) ?? 0, Int(row[11]) ?? 0)
            let truth = box.0 + box.2 / 2 < made.boxes[1].x ? 0 : 1  // the first photo is on the left
            #expect(DogPhotos.overlap(box, made.boxes[truth]) >= 0.5 && row[2] == DogPhotos.testPairNames.en[truth], "\(row)")
        }
    }

    /// The same two dogs close together, their boxes overlapping (`DogPhotos.closeTogether`): a box on each dog, both
    /// models.
    @Test(arguments: ["default", "fast"]) func dogsCloseTogetherGetABoxEach(model: String) throws {
        let made = try DogPhotos.closeTogether(Self.pair)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-close-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("close-together.jpg")
        try Data(JPEGEncoder.encode(made.image, quality: 92)).write(to: url)
        let json = try CLI.run(["classify", "--model", model, "--json", url.path])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let dogs = try #require(record["dogs"] as? [[String: Any]], "\(model): \(json.stdout)")
        try #require(dogs.count == 2, "\(model): \(json.stdout)")
        let boxes = DogPhotos.boxes(ofDogs: dogs)
        for (box, truth) in zip(boxes, made.boxes) { #expect(DogPhotos.overlap(box, truth) >= 0.5, "\(model): \(box) against \(truth)") }
    }
}
