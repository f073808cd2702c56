import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogServer
import DedogTestSupport

/// The routes behind the web page: its files, confirmed photos with undo, and quizzes.
extension RouterTests {
    // MARK: The page's files

    @Test func pageFilesCarryTheirTypeSecurityHeadersAndValidator() async throws {
        let page = try await request("/")
        #expect(page.status == .ok)
        #expect(page.headers[.contentType] == "text/html; charset=utf-8")
        #expect(page.text.contains("<html lang="))
        let policy = page.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
        #expect(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"), "\(policy)")
        #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
        let etag = try #require(page.headers[.eTag])
        let again = try await request("/", headers: [.ifNoneMatch: etag])
        #expect(again.status == .notModified)
        #expect(again.body.readableBytes == 0)
        #expect(try await request("/web/style.css").headers[.contentType] == "text/css; charset=utf-8")
        #expect(try await request("/web/app.js").headers[.contentType] == "text/javascript; charset=utf-8")
        for missing in ["/web/nope.js", "/web/..%2Fopenapi.json", "/web/%2E%2E"] {
            let response = try await request(missing)
            #expect(response.status == .notFound, "\(missing)")
            #expect(response.error.code == "notFound")
        }
        // What the OpenAPI test takes for "not routed".
        let unrouted = try await request("/nope")
        let message = (unrouted.object["error"] as? [String: Any])?["message"] as? String
        #expect(message?.hasPrefix("no such route") == true)
    }

    /// Every file the page names (scripts, styles, icons, module imports) is one the server has, nothing is
    /// fetched from elsewhere, and the page's own JavaScript and CSS stay under 100 kB.
    @Test func thePageIsWholeLocalAndLight() throws {
        let web = try WebAssets.load(from: [SharedData.packageRoot.appendingPathComponent("Sources/DedogServer/Resources/web")])
        var named: Set<String> = []
        let reference = /(?:src|href)="([^"#][^"]*)"|from "([^"]+)"|import\("([^"]+)"\)|url\(([^)]+)\)/
        for (name, asset) in web.files where name.hasSuffix(".html") || name.hasSuffix(".js") || name.hasSuffix(".css") {
            let text = String(decoding: asset.bytes, as: UTF8.self)
            for match in text.matches(of: reference) {
                let target = String(match.output.1 ?? match.output.2 ?? match.output.3 ?? match.output.4 ?? "")
                #expect(!target.contains("//"), "\(name) loads \(target) from elsewhere")
                named.insert(target.replacingOccurrences(of: "/web/", with: "").replacingOccurrences(of: "./", with: ""))
            }
        }
        #expect(!named.isEmpty)
        for file in named {
            #expect(web.files[file] != nil, "the page names \(file), which the server does not have")
        }
        let size = web.files.filter { $0.key.hasSuffix(".js") || $0.key.hasSuffix(".css") }.map(\.value.bytes.count).reduce(0, +)
        #expect(size < 100_000, "the page's JS and CSS are \(size) bytes")
    }

    /// The page's modules import one another without a cycle (a cycle works only while nothing imported is used
    /// as the modules load, and breaks silently when something is). app.js, the shell, is imported by none.
    @Test func thePagesModulesHaveNoImportCycle() throws {
        let web = try WebAssets.load(from: [SharedData.packageRoot.appendingPathComponent("Sources/DedogServer/Resources/web")])
        var imports: [String: [String]] = [:]
        for (name, asset) in web.files where name.hasSuffix(".js") {
            imports[name] = String(decoding: asset.bytes, as: UTF8.self).matches(of: /^import [^;]*? from "\.\/([^"]+)";/.anchorsMatchLineEndings())
                .map { String($0.output.1) }
        }
        #expect(imports.count >= 10 && imports["app.js"]?.contains("identify.js") == true, "\(imports)")
        #expect(!imports.values.contains { $0.contains("app.js") }, "app.js is imported by \(imports.filter { $0.value.contains("app.js") }.keys.sorted())")
        // Depth-first search; a module met again while still on the path closes a cycle.
        var done: Set<String> = []
        func visit(_ module: String, _ path: [String]) {
            if let start = path.firstIndex(of: module) {
                Issue.record("import cycle: \((path[start...] + [module]).joined(separator: " → "))")
                return
            }
            guard !done.contains(module) else { return }
            for next in imports[module] ?? [] { visit(next, path + [module]) }
            done.insert(module)
        }
        for module in imports.keys.sorted() { visit(module, []) }
    }

    // MARK: Confirmed photos

    @Test func learningIsOffUnlessTheServerHasAModelOfTheUsers() async throws {
        for (method, uri) in [(HTTPRequest.Method.get, "/v1/memory"), (.post, "/v1/memory"), (.delete, "/v1/memory/00ff")] {
            let response = try await request(uri, method: method)
            #expect(response.status == .forbidden, "\(method) \(uri)")
            #expect(response.error.code == "learningOff")
        }
        #expect((try await request("/v1/models").object["models"] as? [[String: Any]])?.first?["learning"] as? Bool == false)
    }

    /// A confirmed photo goes into the user's model (which the server then answers with), and undo takes it out.
    @Test func confirmAPhotoThenUndo() async throws {
        let model = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-learn-\(UUID().uuidString).safetensors")
        try FileManager.default.copyItem(at: Fixture.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let service = try Fixture.service({ $0.learnModel = model })
        let form = [("photo", "rex.jpg", "image/jpeg", Fixture.photo("beagle.jpg")),
                    ("breed", nil, "text/plain", Array("bígl".utf8))]
        let formType: HTTPFields = [.contentType: "multipart/form-data; boundary=dedog-test-boundary"]

        #expect((try await request("/v1/memory", service: service).object["entries"] as? [Any])?.isEmpty == true)
        let learned = try await request("/v1/memory?lang=cs", method: .post, headers: formType,
                                        body: RawRequest.multipart(form.map { ($0.0, $0.1, $0.2, $0.3) }), service: service)
        #expect(learned.status == .ok, "\(learned.text)")
        #expect(learned.object["breed"] as? String == "beagle", "the breed named by its alias bígl, answered by its name")
        #expect(learned.object["added"] as? Bool == true)
        #expect(learned.object["memorySize"] as? Int == 1)
        let fingerprint = try #require(learned.object["fingerprint"] as? String)
        let models = try await request("/v1/models", service: service).object["models"] as? [[String: Any]]
        #expect(models?.first?["memorySize"] as? Int == 1)
        #expect(models?.first?["learning"] as? Bool == true)
        let listed = try await request("/v1/memory", service: service).object["entries"] as? [[String: Any]] ?? []
        #expect(listed.count == 1)
        #expect(listed.first?["breed"] as? String == "Beagle", "\(listed)")
        #expect(listed.first?["label"] as? String == "n02088364-beagle", "\(listed)")
        let czech = try await request("/v1/memory?lang=cs", service: service).object["entries"] as? [[String: Any]] ?? []
        #expect(czech.first?["breed"] as? String == "beagle", "its Czech name: \(czech)")

        // The same photo again adds nothing.
        let twice = try await request("/v1/memory", method: .post, headers: formType,
                                      body: RawRequest.multipart(form.map { ($0.0, $0.1, $0.2, $0.3) }), service: service)
        #expect(twice.object["added"] as? Bool == false)
        #expect(twice.object["memorySize"] as? Int == 1)

        let undone = try await request("/v1/memory/\(fingerprint)?lang=cs", method: .delete, service: service)
        #expect(undone.status == .ok, "\(undone.text)")
        #expect((undone.object["entries"] as? [[String: Any]])?.first?["breed"] as? String == "beagle", "\(undone.text)")
        #expect(undone.object["memorySize"] as? Int == 0)
        #expect((try await request("/v1/memory", service: service).object["entries"] as? [Any])?.isEmpty == true)
        let gone = try await request("/v1/memory/\(fingerprint)", method: .delete, service: service)
        #expect(gone.status == .notFound)
        let bad = try await request("/v1/memory/not-hex", method: .delete, service: service)
        #expect(bad.status == .badRequest)
        #expect(bad.error.field == "fingerprint")

        let noBreed = try await request("/v1/memory", method: .post, body: Fixture.photo("beagle.jpg"), service: service)
        #expect(noBreed.status == .badRequest)
        #expect(noBreed.error.field == "breed")
        let unknown = try await request("/v1/memory?breed=unicorn", method: .post, body: Fixture.photo("beagle.jpg"), service: service)
        #expect(unknown.status == .unprocessableContent)
        #expect(unknown.error.field == "breed")
    }

    /// A breed the model does not know, taught through the API: by a catalogue name (Czech), or by a name of one's own
    /// with `newBreed=true`; the served model names it from then on, and undo takes it out with its photo. Refusals
    /// name the field: a photo without a dog, a name several breeds answer to, a free name without `newBreed`.
    @Test func teachANewBreedThenUndo() async throws {
        let model = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-teach-\(UUID().uuidString).safetensors")
        try FileManager.default.copyItem(at: Fixture.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let service = try Fixture.service({ $0.learnModel = model })
        let formType: HTTPFields = [.contentType: "multipart/form-data; boundary=dedog-test-boundary"]
        func teach(_ breed: String, photo: [UInt8] = Fixture.photo("beagle.jpg"), extra: [(String, String)] = [],
                   query: String = "") async throws -> TestResponse {
            let form = [("photo", "rex.jpg" as String?, "image/jpeg", photo), ("breed", nil, "text/plain", Array(breed.utf8))]
                + extra.map { ($0.0, nil as String?, "text/plain", Array($0.1.utf8)) }
            return try await request("/v1/memory" + query, method: .post, headers: formType,
                                     body: RawRequest.multipart(form.map { ($0.0, $0.1, $0.2, $0.3) }), service: service)
        }
        func labels() async throws -> Int {
            let models = try await request("/v1/models", service: service).object["models"] as? [[String: Any]]
            return (models?.first?["labels"] as? [Any])?.count ?? 0
        }
        let original = try Data(contentsOf: model)
        for (breed, extra, code, status) in [("německý špic", [] as [(String, String)], "badBreed", HTTPResponse.Status.unprocessableContent),
                                             ("Rexík", [], "badBreed", .unprocessableContent),
                                             ("Rexík", [("newBreed", "maybe")], "badParameter", .badRequest)] {
            let refused = try await teach(breed, extra: extra)
            #expect(refused.status == status && refused.error.code == code, "\(breed): \(refused.text)")
        }
        let noDog = try await teach("jezevčík", photo: [UInt8](try Data(contentsOf: SharedData.packageRoot
            .appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png"))))
        #expect(noDog.status == .unprocessableContent && noDog.error.code == "noDog" && noDog.error.field == "photo", "\(noDog.text)")
        #expect(try Data(contentsOf: model) == original, "refusals change nothing")

        let taught = try await teach("jezevčík", query: "?lang=cs")
        #expect(taught.status == .ok, "\(taught.text)")
        #expect(taught.object["taughtNewBreed"] as? Bool == true && taught.object["breed"] as? String == "jezevčík")
        #expect(try await labels() == 134)
        // The model's info says the breed is taught and from how many photos; a second photo confirmed grows it.
        func dachshund() async throws -> [String: Any]? {
            let models = try await request("/v1/models", service: service).object["models"] as? [[String: Any]]
            return (models?.first?["labels"] as? [[String: Any]])?.first { $0["breed"] as? String == "dachshund" }
        }
        var entry = try await dachshund()
        #expect(entry?["taught"] as? Bool == true && entry?["photos"] as? Int == 1, "\(entry ?? [:])")
        let grown = try await teach("jezevčík", photo: Fixture.photo("beagle.webp"))
        #expect(grown.status == .ok && grown.object["taughtNewBreed"] as? Bool == false, "\(grown.text)")
        entry = try await dachshund()
        #expect(entry?["taught"] as? Bool == true && entry?["photos"] as? Int == 2, "\(entry ?? [:])")
        #expect(try await request("/v1/memory/\(try #require(grown.object["fingerprint"] as? String))", method: .delete,
                                  service: service).status == .ok)
        let after = taught.object["after"] as? [String: Any] ?? [:]
        let ids = (after["breeds"] as? [[String: Any]] ?? []).compactMap { ($0["breed"] as? [String: Any])?["id"] as? String }
        #expect(ids.contains("dachshund"), "\(ids)")
        let fingerprint = try #require(taught.object["fingerprint"] as? String)
        #expect(try await request("/v1/memory/\(fingerprint)", method: .delete, service: service).status == .ok)
        #expect(try await labels() == 133, "the taught breed went with its photo")

        let own = try await teach("Rexík", extra: [("newBreed", "true")])
        #expect(own.status == .ok && own.object["taughtNewBreed"] as? Bool == true && own.object["breed"] as? String == "Rexík",
                "\(own.text)")
        #expect(try await labels() == 134)
    }

    /// Confirms sent at once are each learnt, and the model served afterwards is the last one written: it
    /// remembers them all.
    @Test func concurrentConfirmsAreAllServed() async throws {
        let model = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-learn-\(UUID().uuidString).safetensors")
        try FileManager.default.copyItem(at: Fixture.fast, to: model)
        defer { try? FileManager.default.removeItem(at: model) }
        let service = try Fixture.service({ $0.learnModel = model })
        let photos = ["beagle.jpg", "beagle.webp", "beagle.heic", "beagle.avif"]
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for photo in photos {
                group.addTask {
                    try await self.request("/v1/memory?breed=beagle", method: .post, body: Fixture.photo(photo), service: service)
                        .status.code
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == [200, 200, 200, 200])
        let models = try await request("/v1/models", service: service).object["models"] as? [[String: Any]]
        #expect(models?.first?["memorySize"] as? Int == photos.count)
        #expect((try await request("/v1/memory", service: service).object["entries"] as? [Any])?.count == photos.count)
    }

    // MARK: Quizzes

    @Test func quizzesFromTheFolderAndFromTheUser() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-quizzes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = try QuizFixture.make()
        defer { try? FileManager.default.removeItem(at: photos) }
        let made = try QuizMaker.make(folder: photos.path, classifier: Classifier(modelURL: Fixture.fast),
                                      catalogue: Fixture.catalogue, title: "Psi")
        let file = try made.quiz.encoded()
        try file.write(to: folder.appendingPathComponent("dogs.json"))
        try Data("{\"format\":\"dedog-quiz\",\"version\":1}".utf8).write(to: folder.appendingPathComponent("broken.json"))
        let service = try Fixture.service({ $0.quizFolder = folder })
        #expect(service.refusedQuizzes.map(\.file) == ["broken.json"])

        let list = try await request("/v1/quizzes", service: service).object["quizzes"] as? [[String: Any]] ?? []
        #expect(list.map { $0["name"] as? String } == ["dogs"])
        #expect(list.first?["title"] as? String == "Psi")
        #expect(list.first?["questions"] as? Int == made.quiz.questions.count)
        let one = try await request("/v1/quizzes/dogs", service: service)
        #expect(try Quiz.decode(Data(one.body.readableBytesView), name: "answer") == made.quiz)
        #expect(try await request("/v1/quizzes/broken", service: service).status == .notFound)

        let checked = try await request("/v1/quizzes/check", method: .post, body: [UInt8](file))
        #expect(checked.status == .ok)
        #expect(try Quiz.decode(Data(checked.body.readableBytesView), name: "answer") == made.quiz)
        var hostile = made.quiz
        hostile.questions[0].photo = Data(Fixture.photo("beagle.jpg").prefix(500)).base64EncodedString()
        let refused = try await request("/v1/quizzes/check", method: .post, body: [UInt8](try JSONEncoder().encode(hostile)))
        #expect(refused.status == .unprocessableContent)
        #expect(refused.error.code == "badQuiz")
    }
}
