import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogCatalogue

/// The catalogue is read without `Codable` when it can be (Catalogue+Quick.swift) and with it otherwise: the two
/// readings must agree wherever the quick one answers, and it must answer for the bundled catalogue.
@Suite struct CatalogueQuickTests {
    static func bundledData() throws -> Data {
        let url = SharedData.packageRoot.appendingPathComponent("Sources/DedogCatalogue/Resources/breeds.json")
        return try Data(contentsOf: url)
    }

    /// Whether two catalogues hold the same facts.
    static func same(_ a: Catalogue, _ b: Catalogue) -> Bool {
        a.formatVersion == b.formatVersion && a.sources == b.sources && a.vocabulary == b.vocabulary && a.breeds == b.breeds
    }

    @Test func readsTheBundledCatalogueAsCodableDoes() throws {
        let data = try Self.bundledData()
        #expect(Catalogue.readsQuickly(data))
        let quick = try Catalogue(data, file: "breeds.json"), codable = try Catalogue.decodedWithCodable(data, file: "breeds.json")
        #expect(Self.same(quick, codable), "the quick and Codable readings differ")
        #expect(quick.breeds.count > 300)
    }

    /// The bundled catalogue altered one way at a time, in its first breed (JSON edited with `JSONSerialization`).
    static let alterations: [(String, Bool, @Sendable (inout [String: Any]) -> Void)] = [
        ("an unknown key", true, { $0["future"] = 1 }),
        ("a null optional", true, { $0["origin"] = NSNull() }),
        ("no Czech name", true, { b in var n = b["name"] as! [String: Any]; n["cs"] = nil; b["name"] = n }),
        ("a height written as an integer", true, { $0["height"] = ["min": 30, "max": 40, "unit": "cm"] }),
        ("no labels", false, { $0["labels"] = nil }),
        ("a null id", false, { $0["id"] = NSNull() }),
        ("a number as a string", false, { $0["height"] = ["min": "30", "max": 40, "unit": "cm"] }),
        ("an FCI group with a fraction", false, { b in
            b["fci"] = ["number": 1, "group": 1.5, "groupName": "x", "provisional": false] }),
        ("a colour that is not a string", false, { $0["colours"] = ["black", 3] }),
    ]

    @Test func agreesWithCodableWhereverItAnswers() throws {
        let original = try JSONSerialization.jsonObject(with: Self.bundledData()) as! [String: Any]
        for (name, answers, change) in Self.alterations {
            var file = original, breeds = original["breeds"] as! [[String: Any]]
            change(&breeds[0])
            file["breeds"] = breeds
            let data = try JSONSerialization.data(withJSONObject: file)
            #expect(Catalogue.readsQuickly(data) == answers, "\(name)")
            guard answers else { continue }
            let quick = try Catalogue(data, file: "c.json"), codable = try Catalogue.decodedWithCodable(data, file: "c.json")
            #expect(Self.same(quick, codable), "\(name): the quick and Codable readings differ")
        }
    }

    /// A catalogue whose one breed gives every field a value (every optional present, every list non-empty).
    static let everyField = #"""
        {"formatVersion": 2, "future": [1],
         "sources": [{"id": "s", "title": "T", "repository": "r/r", "commit": "c", "path": "p", "licence": "l"}],
         "vocabulary": {"cs": {"Terriers": "teriéři"}},
         "breeds": [{"id": "x", "labels": ["n0-x"], "name": {"en": "X", "cs": "x"}, "aliases": {"en": ["Ex"], "cs": ["ex"], "fci": ["Iks"]},
                     "fci": {"number": 1, "group": 3, "groupName": "Terriers", "section": "S", "provisional": true, "variety": "V"},
                     "fciNote": "n", "origin": "o", "size": "small",
                     "height": {"min": 30, "max": 40.5, "unit": "cm", "male": {"min": 35, "max": 40.5, "unit": "cm"},
                                "female": {"min": 30, "max": 35, "unit": "cm"}},
                     "weight": {"min": 5, "max": 9, "unit": "kg", "male": {"min": 6, "max": 9, "unit": "kg"},
                                "female": {"min": 5, "max": 8, "unit": "kg"}},
                     "lifeSpan": {"min": 12, "max": 15, "unit": "years"}, "coat": {"grooming": "g", "shedding": "h"},
                     "colours": ["black"], "temperament": ["Alert"], "sources": [{"source": "s", "fields": ["fci"]}],
                     "bundledModel": true,
                     "cross": {"parents": [{"name": {"en": "P", "cs": "p"}, "breeds": ["p"]}]}}]}
        """#

    /// A field added to the catalogue's types fails here until the fixture gives it a value, and then until the
    /// quick reader reads it: the fixture read both ways must come out the same.
    @Test func theQuickReaderReadsEveryField() throws {
        let data = Data(Self.everyField.utf8)
        let codable = try Catalogue.decodedWithCodable(data, file: "c.json")
        let empty = EmptyFields.paths(in: codable.breeds, path: "breeds") + EmptyFields.paths(in: codable.sources, path: "sources")
            + EmptyFields.paths(in: codable.vocabulary, path: "vocabulary")
        #expect(empty.isEmpty, "give these a value in `everyField`: \(empty)")
        #expect(Catalogue.readsQuickly(data), "the quick reader gave up on `everyField`")
        let quick = try Catalogue(data, file: "c.json")
        #expect(Self.same(quick, codable), "the quick reader drops or changes a field: \(quick.breeds) against \(codable.breeds)")
    }
}
