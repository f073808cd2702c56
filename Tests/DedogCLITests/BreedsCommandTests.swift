import Foundation
import Testing
import DedogTestSupport

/// Exact stdout of `dedog breeds` for typical, no-match and ambiguous cases (bundled catalogue).
@Suite struct BreedsCommandTests {
    @Test func searchIgnoresCaseDiacriticsAndTypos() throws {
        for query in ["civava", "ČIVAVA", "chihuahau"] {
            let r = try CLI.run(["breeds", "search", query])
            #expect(r.status == 0)
            #expect(r.stdout == "Chihuahua  čivava  chihuahua\n", "\(query)")
        }
    }

    @Test func searchShowsWhichAliasMatched() throws {
        let r = try CLI.run(["breeds", "search", "kokr"])
        #expect(r.stdout == "English Cocker Spaniel  anglický kokršpaněl  english-cocker-spaniel  (kokr)\n")
    }

    @Test func searchFindsEveryShepherd() throws {
        let r = try CLI.run(["breeds", "search", "ovcak"])
        #expect(r.stdout == """
            German Shepherd Dog   německý ovčák        german-shepherd-dog
            Old English Sheepdog  staroanglický ovčák  old-english-sheepdog
            Shetland Sheepdog     šetlandský ovčák     shetland-sheepdog

            """)
    }

    @Test func searchWithNoMatchSuggestsNames() throws {
        let r = try CLI.run(["breeds", "search", "xyzzq"])
        #expect(r.status == 1)
        #expect(r.stdout == "No breed matches \"xyzzq\". Closest names: Shih Tzu, Xoloitzcuintli, Affenpinscher.\n")
    }

    @Test func listSortsByCzechNamesAndFiltersByGroup() throws {
        let r = try CLI.run(["breeds", "list", "--group", "10", "--lang", "cs"])
        #expect(r.status == 0)
        #expect(r.stdout == """
            plemeno             FCI  velikost   původ
            afghánský chrt      10   střední    Afghánistán
            barzoj              10   velké      Rusko
            irský vlkodav       10   obří       Irsko
            italský chrtík      10   trpasličí  Itálie
            saluki              10   střední    Blízký východ
            skotský jelení pes  10   velké      Velká Británie
            whippet             10   střední    Velká Británie

            """)
    }

    @Test func showPrintsEveryField() throws {
        let r = try CLI.run(["breeds", "show", "čivava"])
        #expect(r.status == 0)
        #expect(r.stdout == """
            Chihuahua (čivava)
              id            chihuahua
              FCI           218 · group 9 Companion and Toy Dogs · section Chihuahueno
              origin        Mexico
              size          toy
              height        12.7–20.3 cm
              weight        2.7 kg
              life span     14–16 years
              coat care     grooming: occasional bath/brush; shedding: occasional
              colours       black, brown, tan, white
              temperament   Charming, Graceful, Sassy
              model labels  n02085620-Chihuahua
              sources       FCI breed nomenclature (scraped from fci.be) (paiv/fci-breeds): fci, origin; American Kennel Club breed data (metric) (tmfilho/akcdata): height, weight, lifeSpan, coat, temperament; Dog breeds table (coarse fur colours) (Bambee26/datafun-06-projects): colours; Czech names (corrected to ČMKU/FCI usage by hand) (cervinkamichal0/GuessThePes): name.cs

            """)
    }

    @Test func ambiguousShowListsTheCandidates() throws {
        let r = try CLI.run(["breeds", "show", "poodle"])
        #expect(r.status == 1)
        #expect(r.stdout == """
            "poodle" matches 3 breeds; say which:
              Miniature Poodle  miniature-poodle
              Standard Poodle   standard-poodle
              Toy Poodle        toy-poodle

            """)
    }

    @Test func showJSONIsTheCatalogueEntry() throws {
        let r = try CLI.run(["breeds", "show", "--json", "golden-retriever"])
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(object["id"] as? String == "golden-retriever")
        #expect((object["name"] as? [String: String])?["cs"] == "zlatý retrívr")
    }

    @Test func malformedCatalogueFileIsReported() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-bad-catalogue-\(getpid()).json")
        try Data(#"{"formatVersion":1,"sources":[],"breeds":[{"id":3}]}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try CLI.run(["breeds", "list", "--catalogue", file.path])
        #expect(r.status == 1)
        #expect(r.stderr == "dedog: error: \(file.path): invalid catalogue at breeds[0].id: expected a string.\n")
    }

    @Test func overlongSearchTextIsAUsageError() throws {
        let r = try CLI.run(["breeds", "search", String(repeating: "a", count: 5000)])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: the search text is 5000 characters long; breed names are under 100."))
    }
}
