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
        #expect(r.stdout == """
            English Cocker Spaniel   anglický kokršpaněl  english-cocker-spaniel   (kokr)
            American Cocker Spaniel  americký kokršpaněl  american-cocker-spaniel

            """)
    }

    /// Names first, the recognised breeds among them first; then breeds found by an alias, which says so.
    @Test func searchFindsEveryShepherd() throws {
        let r = try CLI.run(["breeds", "search", "ovcak"])
        let lines = r.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(Array(lines.prefix(4)) == [
            "Belgian Malinois belgický ovčák - Malinois belgian-malinois",
            "Belgian Sheepdog belgický ovčák - Groenendael belgian-sheepdog",
            "German Shepherd Dog německý ovčák german-shepherd-dog",
            "Australian Shepherd australský ovčák australian-shepherd",
        ], "\(r.stdout)")
        #expect(lines.contains("Old English Sheepdog bobtail old-english-sheepdog (staroanglický ovčák)"))
        #expect(lines.contains("Shetland Sheepdog sheltie shetland-sheepdog (šetlandský ovčák)"))
        #expect(lines.count == 28, "\(r.stdout)")
    }

    @Test func searchWithNoMatchSuggestsNames() throws {
        let r = try CLI.run(["breeds", "search", "xyzzq"])
        #expect(r.status == 1)
        #expect(r.stdout == "No breed matches \"xyzzq\". Closest names: Chinese Crested Dog, Shih Tzu, Xoloitzcuintli.\n")
    }

    @Test func listSortsByCzechNamesAndFiltersByGroup() throws {
        let r = try CLI.run(["breeds", "list", "--group", "10", "--lang", "cs"])
        #expect(r.status == 0)
        #expect(r.stdout == """
            plemeno                    FCI  velikost   původ           model
            afgánský chrt              10   střední    Afghánistán     ano
            anglický chrt (Greyhound)  10   velké      Velká Británie  ano
            azavak                     10   střední    Mali            –
            barzoj - ruský chrt        10   velké      Rusko           ano
            deerhound                  10   velké      Velká Británie  ano
            irský vlkodav              10   obří       Irsko           ano
            italský chrtík             10   trpasličí  Itálie          ano
            Kazakh Tazy                10   –          Kazachstán      –
            maďarský chrt              10   –          Maďarsko        –
            polský chrt                10   –          Polsko          –
            Saluki - Perský chrt       10   střední    Blízký východ   ano
            sloughi                    10   střední    Maroko          –
            španělský galgo            10   –          Španělsko       –
            whippet                    10   střední    Velká Británie  ano

            """)
    }

    @Test func showPrintsEveryField() throws {
        let r = try CLI.run(["breeds", "show", "čivava"])
        #expect(r.status == 0)
        #expect(r.stdout == """
            Chihuahua (čivava)
              id             chihuahua
              also known as  Chihuahua - Pelo Largo, Chihuahua - Pelo Corto, čivava dlouhosrstá, čivava krátkosrstá
              FCI names      Chihuahueño
              FCI            218 · group 9 Companion and Toy Dogs · section Chihuahueno
              origin         Mexico
              size           toy
              height         12.7–20.3 cm
              weight         2.7 kg
              life span      14–16 years
              coat care      grooming: occasional bath/brush; shedding: occasional
              colours        black, brown, tan, white
              temperament    Charming, Graceful, Sassy
              bundled model  recognises it
              model labels   n02085620-Chihuahua
              sources        FCI breed nomenclature (scraped from fci.be) (paiv/fci-breeds): fci, origin; American Kennel Club breed data (metric) (tmfilho/akcdata): height, weight, lifeSpan, coat, temperament; Dog breeds table (coarse fur colours) (Bambee26/datafun-06-projects): colours; ČMKU's list of breeds with their official Czech names (cmku.cz/cz/seznam-plemen-159) (sandovabarbora/atlas-plemen-fci): name.cs, aliases.cs, aliases.en; FCI breed nomenclature in German, French and Spanish (scraped from fci.be) (paiv/fci-breeds): aliases.fci

            """)
    }

    @Test func czechShowIsCzechThroughout() throws {
        let r = try CLI.run(["breeds", "show", "čivava", "--lang", "cs"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("""
            čivava (Chihuahua)
              id               chihuahua
              také             čivava dlouhosrstá, čivava krátkosrstá, Chihuahua - Pelo Largo, Chihuahua - Pelo Corto
              názvy FCI        Chihuahueño
              FCI              218 · skupina 9 společenská plemena · sekce čivava
              původ            Mexiko
              velikost         trpasličí
              výška            12,7–20,3 cm
              hmotnost         2,7 kg
              délka života     14–16 let
              péče o srst      česání: občas koupel nebo kartáčování; línání: občas
              barvy            černá, hnědá, pálení, bílá
              povaha           okouzlující, půvabný, drzý
              vestavěný model  rozpozná
            """), "\(r.stdout)")
    }

    @Test func theLocaleChoosesCzechAndLangOverridesIt() throws {
        let czech = try CLI.run(["breeds", "search", "civava"], environment: ["LC_ALL": "cs_CZ.UTF-8"])
        #expect(czech.stdout == "čivava  Chihuahua  chihuahua\n")
        let english = try CLI.run(["breeds", "search", "civava", "--lang", "en"], environment: ["LC_ALL": "cs_CZ.UTF-8"])
        #expect(english.stdout == "Chihuahua  čivava  chihuahua\n")
    }

    @Test func listSaysWhichBreedsTheBundledModelsRecognise() throws {
        let all = try CLI.run(["breeds", "list", "--json"])
        let breeds = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as! [[String: Any]]
        #expect(breeds.count >= 330)
        #expect(breeds.filter { $0["bundledModel"] as? Bool == true }.count == 133)
        let recognised = try CLI.run(["breeds", "list", "--recognised"])
        #expect(recognised.stdout.split(separator: "\n").count == 134)  // a header and 133 breeds
        #expect(!recognised.stdout.contains("Czechoslovakian Wolfdog"))
        #expect(all.stdout.contains("Czechoslovakian Wolfdog"))
    }

    @Test(arguments: [("cesky fousek", "český fousek"), ("chodsky pes", "chodský pes"), ("vlcak", "československý vlčák")])
    func czechNationalBreedsAreFound(_ query: String, _ name: String) throws {
        let r = try CLI.run(["breeds", "search", query, "--lang", "cs"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix(name + "  "), "\(r.stdout)")
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
        #expect((object["name"] as? [String: String])?["cs"] == "zlatý retriever")
        #expect((object["aliases"] as? [String: [String]])?["cs"] == ["zlatý retrívr"])
    }

    @Test func malformedCatalogueFileIsReported() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-bad-catalogue-\(getpid()).json")
        try Data(#"{"formatVersion":2,"sources":[],"vocabulary":{},"breeds":[{"id":3}]}"#.utf8).write(to: file)
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
