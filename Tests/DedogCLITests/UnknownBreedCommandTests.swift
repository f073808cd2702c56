import DedogTestSupport
import Foundation
import Testing

/// "A breed this model does not know" as `classify` says it (text, JSON, CSV, English and Czech), and teaching a
/// breed with `learn` and taking it out with `forget`, with their refusals, as a user runs them.
@Suite struct UnknownBreedCommandTests {
    static let beagle = "datasets/samples/beagle.jpg"
    static let fast = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")

    static func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dedog-\(name)-\(UUID().uuidString).safetensors")
    }

    static func json(_ output: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any] ?? [:]
    }

    static func names(_ record: [String: Any]) -> [String] {
        (record["breeds"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    /// The look-alikes are the model's two most likely breeds, named in the output's language.
    @Test func anUnknownBreedIsSaidSoWithItsLookAlikes() throws {
        let model = Self.temporary("unknown")
        try ModelFileEdit.answeringEveryDogAsUnknown(Self.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let known = Self.json(try CLI.run(["classify", Self.beagle, "--model", "fast", "-k", "2", "--json"]).stdout)
        for (language, line) in [("en", "\(Self.beagle): a dog of a breed this model does not know (looks most like %@)"),
                                 ("cs", "\(Self.beagle): pes plemene, které tento model nezná (nejvíc se podobá: %@)")] {
            let json = try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "2", "--json", "--lang", language])
            #expect(json.status == 0, "\(json.stderr)")
            let record = Self.json(json.stdout)
            #expect(record["verdict"] as? String == "otherBreed")
            #expect(Self.names(record).count == 2)
            let text = try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "2", "--lang", language])
            #expect(text.status == 0)
            let expected = line.replacingOccurrences(of: "%@", with: Self.names(record).joined(separator: ", "))
            #expect(text.stdout.split(separator: "\n").first.map(String.init) == expected, "\(text.stdout)")
        }
        let english = Self.json(try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "2", "--json"]).stdout)
        #expect(Self.names(english) == Self.names(known), "the same breeds ranked, now as look-alikes")
        let csv = try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "2", "--format", "csv"])
        #expect(csv.stdout.split(separator: "\n").last?.hasPrefix("\(Self.beagle),otherBreed,\(Self.names(known)[0]),") == true,
                "\(csv.stdout)")
    }

    /// A catalogue breed the model lacks, taught from three photos by its Czech name, named afterwards, then forgotten
    /// with its photos: the model answers as before, to the byte.
    @Test func aBreedIsTaughtByNameAndForgotten() throws {
        let model = Self.temporary("teach")
        try FileManager.default.copyItem(at: Self.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let before = try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "3", "--json"]).stdout
        let photos = ["datasets/samples/beagle.jpg", "datasets/samples/beagle.webp", "datasets/samples/beagle.heic"]
        let learned = try CLI.run(["learn"] + photos + ["--breed", "jezevčík", "--model", model.path])
        #expect(learned.status == 0, "\(learned.stderr)")
        let lines = learned.stdout.split(separator: "\n").map(String.init)
        let first = SharedData.packageRoot.appendingPathComponent(photos[0]).path
        #expect(lines.count == 5 && lines[0].hasPrefix("\(first): learned as Dachshund; before: Beagle "), "\(learned.stdout)")
        #expect(lines.suffix(2) == ["\(model.path) now knows Dachshund, taught from 3 photos.",
                                    "\(model.path) remembers 3 confirmed photos."], "\(learned.stdout)")
        let after = Self.json(try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "3", "--json"]).stdout)
        let ids = (after["breeds"] as? [[String: Any]] ?? []).compactMap { ($0["breed"] as? [String: Any])?["id"] as? String }
        #expect(ids.contains("dachshund"), "the taught breed is among the answers: \(ids)")

        let list = try CLI.run(["forget", "--list", "--model", model.path])
        #expect(list.stdout.split(separator: "\n").map { $0.split(separator: "\t").prefix(2).joined(separator: " ") }
                == ["Dachshund beagle.jpg", "Dachshund beagle.webp", "Dachshund beagle.heic", "3 confirmed photos."],
                "the breed named as learn names it: \(list.stdout)")
        let forgot = try CLI.run(["forget", "--breed", "Dachshund", "--model", model.path])
        #expect(forgot.status == 0, "\(forgot.stderr)")
        #expect(forgot.stdout.contains("forgot the taught breed Dachshund with its last photo"), "\(forgot.stdout)")
        #expect(try CLI.run(["classify", Self.beagle, "--model", model.path, "-k", "3", "--json"]).stdout == before)
    }

    /// Each refusal says what is wrong, exits 1 and leaves the file as it was.
    @Test func badNamesAndPhotosAreRefused() throws {
        let model = Self.temporary("refuse")
        try FileManager.default.copyItem(at: Self.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let original = try Data(contentsOf: model)
        for (arguments, message) in [
            ([Self.beagle, "--breed", " "], "the breed's name is empty"),
            ([Self.beagle, "--breed", "německý špic"], "\"německý špic\" names several breeds: "),
            ([Self.beagle, "--breed", "jezevcikk"], "To teach a new breed of that name, add --new-breed."),
            (["Tests/DedogImageTests/Fixtures/png-rgb8.png", "--breed", "jezevčík"], "the model sees no dog in this photo"),
            (["Tests/DedogImageTests/Fixtures/bad-huffman.jpg", "--breed", "jezevčík"], "bad-huffman.jpg"),
        ] {
            let r = try CLI.run(["learn"] + arguments + ["--model", model.path])
            #expect(r.status == 1, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
            #expect(try Data(contentsOf: model) == original, "\(arguments) changed the model")
        }
        // A name of one's own, with --new-breed.
        let own = try CLI.run(["learn", Self.beagle, "--breed", "jezevcikk", "--new-breed", "--model", model.path])
        #expect(own.status == 0, "\(own.stderr)")
        #expect(own.stdout.contains("now knows jezevcikk, taught from 1 photo."), "\(own.stdout)")
    }
}
