import DedogImage
import DedogTestSupport
import Foundation
import Testing

/// Owners' photos (`OwnersPhotos`) as a user classifies them: the puppy held back by the whole photo is named, the
/// answer saying it comes from a closer look; `--no-zoom` answers from the whole photo alone; the dog with a ball,
/// the one in the snow and a head close-up are dogs of their breeds.
@Suite(.needsAmateurPets) struct OwnersPhotosCommandTests {
    static func record(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    static func topKey(_ record: [String: Any]) -> String? {
        (record["breeds"] as? [[String: Any]])?.first?["key"] as? String
    }

    @Test func thePuppyIsNamedFromTheDogsOwnLook() throws {
        let path = OwnersPhotos.puppy.url.path
        let json = try CLI.run(["classify", "--model", "default", "--json", path])
        #expect(json.status == 0, "\(json.stderr)")
        let record = try Self.record(json.stdout)
        #expect(record["verdict"] as? String == "dog" && Self.topKey(record) == OwnersPhotos.puppy.key, "\(json.stdout)")
        #expect((record["location"] as? [String: Any])?["zoomed"] as? Bool == true)
        let text = try CLI.run(["classify", "--model", "default", path])
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(path): Saint Bernard (") == true, "\(text.stdout)")
        #expect(lines.dropFirst().first?.hasPrefix("  (the answer also comes from a second, closer look at the dog: ") == true, "\(text.stdout)")
        let whole = try Self.record(try CLI.run(["classify", "--model", "default", "--json", "--no-zoom", path]).stdout)
        #expect(whole["verdict"] as? String == "otherBreed" && Self.topKey(whole) == OwnersPhotos.puppy.key, "\(whole)")
    }

    /// The Doberman's head close-up cut from a test photo, saved as a JPEG: named, with its box.
    @Test(.needsStanfordDogs, arguments: ["default", "fast"]) func aHeadCloseUpIsNamed(_ model: String) throws {
        let head = try OwnersPhotos.headCloseUp()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-head-\(UUID().uuidString).jpg")
        try Data(JPEGEncoder.encode(head.image, quality: 92)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let record = try Self.record(try CLI.run(["classify", "--model", model, "--json", file.path]).stdout)
        #expect(record["verdict"] as? String == "dog" && Self.topKey(record) == head.key, "\(model): \(record)")
        #expect(record["location"] is [String: Any], "\(model): \(record)")
    }

    @Test(arguments: ["default", "fast"]) func aDogWithABallOrInTheSnowIsNamed(_ model: String) throws {
        for photo in [OwnersPhotos.ball, OwnersPhotos.snow] {
            let record = try Self.record(try CLI.run(["classify", "--model", model, "--json", photo.url.path]).stdout)
            #expect(record["verdict"] as? String == "dog" && Self.topKey(record) == photo.key, "\(model): \(record)")
        }
    }
}
