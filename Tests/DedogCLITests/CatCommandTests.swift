import DedogTestSupport
import Foundation
import Testing

/// A real cat photo is "no dog", and the answer says it looks like a cat: text, JSON and CSV, English and Czech,
/// both bundled models (issue 50: the ImageNet heads alone called 4 % of real cats a dog).
@Suite(.needsPetsReal) struct CatCommandTests {
    static let cat = SharedData.cat.path

    @Test(arguments: ["default", "fast"]) func aCatIsNoDogAndSaidToBeACat(model: String) throws {
        let en = try CLI.run(["classify", "--model", model, Self.cat])
        #expect(en.status == 0)
        #expect(en.stdout.hasPrefix("\(Self.cat): no dog — it looks like a cat (dog probability "), "\(en.stdout)")
        let cs = try CLI.run(["classify", "--model", model, "--lang", "cs", Self.cat])
        #expect(cs.stdout.hasPrefix("\(Self.cat): žádný pes — vypadá to jako kočka (pravděpodobnost psa "), "\(cs.stdout)")

        for (language, name) in [("en", "a cat"), ("cs", "kočka")] {
            let json = try CLI.run(["classify", "--model", model, "--json", "--lang", language, Self.cat])
            let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(record["verdict"] as? String == "noDog")
            let looks = try #require(record["looksLike"] as? [String: Any], "\(json.stdout)")
            #expect(looks["kind"] as? String == "cat")
            #expect(looks["name"] as? String == name)

            let csv = try CLI.run(["classify", "--model", model, "--format", "csv", "--lang", language, Self.cat])
            let rows = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            #expect(rows.count == 2)
            let column = try #require(rows.first?.firstIndex(of: "looks_like"))
            #expect(rows.last?[1] == "noDog")
            #expect(rows.last?[column] == name, "\(csv.stdout)")
        }
    }

    /// A dog's answer has no `looksLike`: it is for photos without a dog.
    @Test func aDogLooksLikeNothingElse() throws {
        let json = try CLI.run(["classify", "--json", "datasets/samples/beagle.jpg"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(record["verdict"] as? String == "dog")
        #expect(record["looksLike"] is NSNull)
    }
}
