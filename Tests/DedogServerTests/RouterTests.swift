import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogServer
import DedogBreedModel
import DedogImage
import DedogTestSupport

/// Services for the tests: one model loaded once, served under different configurations.
enum Fixture {
    static let fast = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")
    static let samples = SharedData.packageRoot.appendingPathComponent("datasets/samples")
    static let sharedModel = Shared { try Model(contentsOf: fast) }
    static var model: Model { get throws { try sharedModel.value } }
    static let sharedCatalogue = Shared { try Catalogue.bundled() }
    static var catalogue: Catalogue { get throws { try sharedCatalogue.value } }
    static var logger: Logger {
        var logger = Logger(label: "dedog-test")
        logger.logLevel = .critical
        return logger
    }

    static func photo(_ name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: samples.appendingPathComponent(name).path)!)
    }

    static func service(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                        classifier: ClassifierConfiguration = .init(workers: 2)) throws -> DedogService {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configure(&configuration)
        return try DedogService(classifier: Classifier(model: model, modelURL: fast, configuration: classifier),
                                catalogue: catalogue, configuration: configuration)
    }

    static func application(_ service: DedogService) throws -> some ApplicationProtocol {
        try DedogServer.application(service, logger: logger)
    }
}

extension TestResponse {
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var text: String { String(buffer: body) }
    /// dedog's JSON error body: `error.code` and `error.field`.
    var error: (code: String?, field: String?) {
        let e = object["error"] as? [String: Any]
        return (e?["code"] as? String, e?["field"] as? String)
    }
}

@Suite struct RouterTests {
    /// One service for the tests of the routes (RouterTests, PhotoPrismTests), which run in parallel: its queue holds
    /// as many requests as they can send at once, so that a loaded machine never answers them "busy" (503). The queue's
    /// limit is tested on a server of its own (LiveServerTests).
    static let sharedService = Shared { try Fixture.service({ $0.queue = 64 }) }
    static var service: DedogService { get throws { try sharedService.value } }

    func request(_ uri: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:], body: [UInt8]? = nil,
                 service: DedogService? = nil) async throws -> TestResponse {
        try await Fixture.application(service ?? Self.service).test(.router) { client in
            try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
        }
    }

    // MARK: Classification

    /// A photo as the body gets the same JSON object, to the byte, as the facade's record of the same answer
    /// (which `dedog classify --json` writes too), with Hugging Face's label and score beside name and probability.
    @Test func rawBodyAnswersWithTheFacadeRecord() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let response = try await request("/predictions/dedog?top_k=4", method: .post,
                                         headers: [.contentType: "image/jpeg"], body: beagle)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
        let answer = try Self.service.classifier.classify(bytes: beagle, name: "body", top: 4)
        let expected = ClassificationRecord(file: "body", result: answer, error: nil, catalogue: try Fixture.catalogue, language: .en)
        #expect(response.text == String(decoding: expected.json(), as: UTF8.self))
        let breeds = response.object["breeds"] as? [[String: Any]] ?? []
        #expect(breeds.count == 4)
        #expect(breeds.first?["key"] as? String == "n02088364-beagle")
        #expect(breeds.first?["label"] as? String == "Beagle")
        #expect(breeds.first?["score"] as? Double == breeds.first?["probability"] as? Double)
        #expect(response.object["verdict"] as? String == "dog")
    }

    /// A photo of two dogs made from two Stanford test photos (`DogPhotos.testPair` side by side): the answer has
    /// one entry per dog in `dogs`, each named, its box on its dog; in Czech too.
    @Test(.needsStanfordDogs) func aTwoDogPhotoGetsAnAnswerPerDog() async throws {
        let made = try DogPhotos.sideBySide(DogPhotos.testPair)
        let jpeg = try JPEGEncoder.encode(made.image, quality: 92)
        for (language, names) in [("en", DogPhotos.testPairNames.en), ("cs", DogPhotos.testPairNames.cs)] {
            let response = try await request("/predictions/dedog?lang=\(language)", method: .post, headers: [.contentType: "image/jpeg"], body: jpeg)
            #expect(response.status == .ok)
            let dogs = try #require(response.object["dogs"] as? [[String: Any]])
            try #require(dogs.count == 2, "\(response.text)")
            for dog in dogs {
                let location = try #require(dog["location"] as? [String: Any])
                let box = (location["x"] as? Int ?? -1, location["y"] as? Int ?? -1, location["width"] as? Int ?? 0, location["height"] as? Int ?? 0)
                let truth = box.0 + box.2 / 2 < made.boxes[1].x ? 0 : 1
                #expect(DogPhotos.overlap(box, made.boxes[truth]) >= 0.5, "\(box)")
                #expect((dog["breeds"] as? [[String: Any]])?.first?["name"] as? String == names[truth], "\(language): \(response.text)")
            }
        }
    }

    /// The same two dogs close together, their boxes overlapping (`DogPhotos.closeTogether`): two entries in `dogs`,
    /// each box on its own dog.
    @Test(.needsStanfordDogs) func dogsCloseTogetherGetAnAnswerEach() async throws {
        let made = try DogPhotos.closeTogether(DogPhotos.testPair)
        let response = try await request("/predictions/dedog", method: .post, headers: [.contentType: "image/jpeg"],
                                         body: try JPEGEncoder.encode(made.image, quality: 92))
        let dogs = try #require(response.object["dogs"] as? [[String: Any]], "\(response.text)")
        try #require(dogs.count == 2, "\(response.text)")
        let boxes = DogPhotos.boxes(ofDogs: dogs)
        for (box, truth) in zip(boxes, made.boxes) { #expect(DogPhotos.overlap(box, truth) >= 0.5, "\(box) against \(truth)") }
    }

    /// Owners' photos (`OwnersPhotos`: a puppy small on a beach, a pug with a ball, a Samoyed puppy in the snow, and a
    /// head close-up cut from a test photo) are each answered as a dog of its breed, with its box.
    @Test(.needsAmateurPets, .needsStanfordDogs) func ownersPhotosAreDogsOfTheirBreeds() async throws {
        let head = try OwnersPhotos.headCloseUp()
        var photos = try [OwnersPhotos.puppy, OwnersPhotos.ball, OwnersPhotos.snow].map { photo in
            (name: photo.url.lastPathComponent, bytes: [UInt8](try Data(contentsOf: photo.url)), key: photo.key)
        }
        photos.append((name: "head", bytes: try JPEGEncoder.encode(head.image, quality: 92), key: head.key))
        for photo in photos {
            let response = try await request("/predictions/dedog", method: .post, headers: [.contentType: "image/jpeg"], body: photo.bytes)
            #expect(response.status == .ok)
            #expect(response.object["verdict"] as? String == "dog", "\(photo.name): \(response.text)")
            #expect((response.object["breeds"] as? [[String: Any]])?.first?["key"] as? String == photo.key, "\(photo.name): \(response.text)")
            #expect(response.object["location"] is [String: Any], "\(photo.name)")
        }
    }

    @Test func czechFromTheQueryOrTheBrowsersLanguage() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        for (uri, headers) in [("/predictions/dedog?lang=cs", HTTPFields()),
                               ("/predictions/dedog", [.acceptLanguage: "cs-CZ,cs;q=0.9,en;q=0.8"])] {
            let response = try await request(uri, method: .post, headers: headers, body: beagle)
            let breeds = response.object["breeds"] as? [[String: Any]] ?? []
            #expect(breeds.first?["name"] as? String == "beagle", "\(uri) \(headers)")
        }
        let english = try await request("/predictions/dedog", method: .post, headers: [.acceptLanguage: "de-DE,en;q=0.5"], body: beagle)
        #expect((english.object["breeds"] as? [[String: Any]])?.first?["name"] as? String == "Beagle")
    }

    /// Several photos in one form: one answer each, in order, named by their file names; text fields are not photos.
    @Test func multipartGivesOneAnswerPerPhotoInOrder() async throws {
        let body = RawRequest.multipart([
            ("data", "beagle.webp", "image/webp", Fixture.photo("beagle.webp")),
            ("entries", nil, "text/plain", Array("{\"x\":1}".utf8)),
            ("photo", "beagle.heic", "image/heic", Fixture.photo("beagle.heic")),
        ])
        let response = try await request("/predictions/dedog", method: .post,
                                         headers: [.contentType: "multipart/form-data; boundary=dedog-test-boundary"], body: body)
        #expect(response.status == .ok)
        let records = response.json as? [[String: Any]] ?? []
        #expect(records.map { $0["file"] as? String } == ["beagle.webp", "beagle.heic"])
        #expect(records.allSatisfy { ($0["breeds"] as? [[String: Any]])?.first?["key"] as? String == "n02088364-beagle" })
    }

    /// In a batch, a damaged photo gets its own error beside the others' answers; alone, it fails the request.
    @Test func oneDamagedPhotoInABatch() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let body = RawRequest.multipart([("data", "good.jpg", "image/jpeg", beagle),
                                         ("data", "cut.jpg", "image/jpeg", Array(beagle.prefix(beagle.count / 3)))])
        let response = try await request("/predictions/dedog", method: .post,
                                         headers: [.contentType: "multipart/form-data; boundary=dedog-test-boundary"], body: body)
        #expect(response.status == .ok)
        let records = response.json as? [[String: Any]] ?? []
        #expect(records.count == 2)
        #expect(records.first?["error"] is NSNull)
        #expect((records.last?["error"] as? String)?.contains("cut.jpg") == true)
        #expect(records.last?["verdict"] is NSNull)
    }

    // MARK: Errors

    @Test func badInputGetsTheRightStatusAndField() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let png = [UInt8](PNGWriter.encode(width: 8, height: 8, rgb: [UInt8](repeating: 200, count: 8 * 8 * 3)))
        var corrupt = png
        corrupt.replaceSubrange(40..<60, with: [UInt8](repeating: 0xFF, count: 20))
        let cases: [(String, HTTPFields, [UInt8], HTTPResponse.Status, String, String?)] = [
            ("/predictions/dedog?top_k=0", [:], beagle, .badRequest, "badParameter", "top_k"),
            ("/predictions/dedog?top_k=many", [:], beagle, .badRequest, "badParameter", "top_k"),
            ("/predictions/dedog?lang=de", [:], beagle, .badRequest, "badParameter", "lang"),
            ("/predictions/dedog", [.contentType: "application/json"], Array("{}".utf8), .unsupportedMediaType, "unsupportedContentType", "Content-Type"),
            ("/predictions/dedog", [.contentType: "application/octet-stream"], Array("hello, not a photo".utf8), .unsupportedMediaType, "unsupportedFormat", "body"),
            ("/predictions/dedog", [.contentType: "image/jpeg"], Array(beagle.prefix(beagle.count / 2)), .unprocessableContent, "truncatedPhoto", "body"),
            ("/predictions/dedog", [.contentType: "image/png"], corrupt, .unprocessableContent, "damagedPhoto", "body"),
            ("/predictions/dedog", [:], [], .badRequest, "noPhoto", "body"),
            ("/predictions/dedog", [.contentType: "multipart/form-data"], beagle, .badRequest, "badMultipart", "Content-Type"),
            ("/predictions/dedog", [.contentType: "multipart/form-data; boundary=b"],
             RawRequest.multipart([("data", "a.jpg", "image/jpeg", beagle)], boundary: "b", closed: false), .badRequest, "truncatedMultipart", "body"),
            ("/predictions/dedog", [.contentType: "multipart/form-data; boundary=b"],
             RawRequest.multipart([("note", nil, "text/plain", Array("hi".utf8))], boundary: "b"), .badRequest, "noPhoto", "body"),
            ("/predictions/other", [:], beagle, .notFound, "notFound", nil),
        ]
        for (uri, headers, body, status, code, field) in cases {
            let response = try await request(uri, method: .post, headers: headers, body: body)
            #expect(response.status == status, "\(uri) \(headers): \(response.text)")
            #expect(response.error.code == code, "\(uri) \(headers): \(response.text)")
            #expect(response.error.field == field, "\(uri) \(headers): \(response.text)")
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
        }
    }

    @Test func unknownRoutesAndMethodsAreJSON404s() async throws {
        for (uri, method) in [("/nope", HTTPRequest.Method.get), ("/v1/breeds", .post), ("/predictions/dedog", .get),
                              ("/../../etc/passwd", .get), ("/v1/breeds/..%2F..%2Fetc%2Fpasswd", .get)] {
            let response = try await request(uri, method: method)
            #expect(response.status == .notFound, "\(method) \(uri)")
            #expect(response.error.code == "notFound", "\(method) \(uri)")
        }
    }

    @Test func limitsOnBodyPartsAndPixels() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let small = try Fixture.service({ $0.maxBodyBytes = 1000; $0.maxParts = 2 })
        let big = try await request("/predictions/dedog", method: .post, body: beagle, service: small)
        #expect(big.status == .contentTooLarge)
        #expect(big.error.code == "bodyTooLarge")
        let tiny = [UInt8](repeating: 1, count: 10)
        let many = RawRequest.multipart((0..<3).map { ("data", "p\($0).jpg", "image/jpeg", tiny) })
        let parts = try await request("/predictions/dedog", method: .post,
                                      headers: [.contentType: "multipart/form-data; boundary=dedog-test-boundary"], body: many,
                                      service: try Fixture.service({ $0.maxParts = 2 }))
        #expect(parts.status == .contentTooLarge)
        #expect(parts.error.code == "tooManyParts")
        // The classifier's own byte limit, below the server's body limit, answers the same way.
        let fewBytes = try await request("/predictions/dedog", method: .post, body: beagle,
                                         service: try Fixture.service(classifier: .init(maxFileBytes: 1000)))
        #expect(fewBytes.status == .contentTooLarge)
        #expect(fewBytes.error.code == "bodyTooLarge")
        let fewPixels = try Fixture.service(classifier: .init(maxPixels: 10_000))
        let pixels = try await request("/predictions/dedog", method: .post, body: beagle, service: fewPixels)
        #expect(pixels.status == .contentTooLarge)
        #expect(pixels.error.code == "tooManyPixels")
    }

    // MARK: Auth and CORS

    @Test func tokenGuardsEveryRouteButHealth() async throws {
        let guarded = try Fixture.service({ $0.token = "s3cret" })
        for uri in ["/v1/models", "/v1/breeds", "/metrics", "/openapi.json", "/v1", "/v1/quizzes"] {
            let none = try await request(uri, service: guarded)
            #expect(none.status == .unauthorized, "\(uri)")
            #expect(none.headers[.wwwAuthenticate] == #"Bearer realm="dedog""#)
            #expect(none.error.field == "Authorization")
            let wrong = try await request(uri, headers: [.authorization: "Bearer s3creT"], service: guarded)
            #expect(wrong.status == .unauthorized, "\(uri)")
            let right = try await request(uri, headers: [.authorization: "Bearer s3cret"], service: guarded)
            #expect(right.status == .ok, "\(uri)")
        }
        let post = try await request("/predictions/dedog", method: .post, body: Fixture.photo("beagle.jpg"), service: guarded)
        #expect(post.status == .unauthorized)
        // Health for orchestrators; the page's own files hold nothing private (the page asks for the token).
        for uri in ["/ping", "/v2/health/live", "/", "/web/app.js"] {
            #expect(try await request(uri, service: guarded).status == .ok, "\(uri)")
        }
    }

    @Test func corsOnlyForTheGivenOrigins() async throws {
        let origin: HTTPFields = [.origin: "http://photos.home", .accessControlRequestMethod: "POST"]
        let closed = try await request("/predictions/dedog", method: .options, headers: origin)
        #expect(closed.headers[.accessControlAllowOrigin] == nil)
        let open = try Fixture.service({ $0.corsOrigins = ["http://photos.home"] })
        let preflight = try await request("/predictions/dedog", method: .options, headers: origin, service: open)
        #expect(preflight.headers[.accessControlAllowOrigin] == "http://photos.home")
        let get = try await request("/v1/models", headers: [.origin: "http://photos.home"], service: open)
        #expect(get.headers[.accessControlAllowOrigin] == "http://photos.home")
    }

    // MARK: Health, metrics, catalogue, models, OpenAPI

    @Test func readyOnlyAfterTheFirstPass() async throws {
        let service = try Fixture.service()
        #expect(try await request("/ping", service: service).object["status"] as? String == "Healthy")
        #expect(try await request("/v2/health/live", service: service).status == .ok)
        let before = try await request("/v2/health/ready", service: service)
        #expect(before.status == .serviceUnavailable)
        #expect(before.object["ready"] as? Bool == false)
        await service.warmUp()
        let after = try await request("/v2/health/ready", service: service)
        #expect(after.status == .ok)
        #expect(after.object["ready"] as? Bool == true)
    }

    @Test func metricsCountRequestsPhotosAndVerdicts() async throws {
        let service = try Fixture.service()
        let app = try Fixture.application(service)
        let text = try await app.test(.router) { client in
            _ = try await client.execute(uri: "/predictions/dedog", method: .post, body: ByteBuffer(bytes: Fixture.photo("beagle.jpg")))
            _ = try await client.execute(uri: "/nope", method: .get)
            return try await client.execute(uri: "/metrics", method: .get).text
        }
        #expect(text.contains(#"dedog_http_requests_total{route="/predictions/{model}",method="POST",status="200"} 1"#), "\(text)")
        #expect(text.contains(#"dedog_http_requests_total{route="unmatched",method="GET",status="404"} 1"#), "\(text)")
        #expect(text.contains("dedog_photos_classified_total 1"), "\(text)")
        #expect(text.contains(#"dedog_verdicts_total{verdict="dog"} 1"#), "\(text)")
        #expect(text.contains("dedog_queue_depth 0"), "\(text)")
        #expect(text.contains(#"dedog_http_request_duration_seconds_bucket{route="/predictions/{model}",le="0.5"}"#), "\(text)")
    }

    @Test func breedsSearchFoldsCaseDiacriticsAndTypos() async throws {
        let search = try await request("/v1/breeds?q=civava")
        let found = search.object["breeds"] as? [[String: Any]] ?? []
        #expect(found.first?["id"] as? String == "chihuahua")
        // Other names, a word's beginning and a typo, as the page's search sends them.
        for (query, id) in [("lowchen", "little-lion-dog"), ("central%20asian", "central-asia-shepherd-dog"), ("berner", "bernese-mountain-dog"),
                            ("czech%20terrier", "cesky-terrier"), ("labradr", "labrador-retriever")] {
            let hits = try await request("/v1/breeds?q=\(query)").object["breeds"] as? [[String: Any]] ?? []
            #expect(hits.first?["id"] as? String == id, "\(query): \(hits.prefix(3).compactMap { $0["id"] as? String })")
        }
        #expect(found.first?["recognised"] as? Bool == true)
        let all = try await request("/v1/breeds?lang=cs").object["breeds"] as? [[String: Any]] ?? []
        let catalogue = try Fixture.catalogue
        #expect(all.count == catalogue.breeds.count)
        #expect(all.first?["displayName"] as? String == catalogue.list(language: .cs).first?.name(in: .cs))
        let recognised = try await request("/v1/breeds?recognised=true").object["breeds"] as? [[String: Any]] ?? []
        #expect(recognised.count == 133)
        #expect(recognised.allSatisfy { $0["recognised"] as? Bool == true })
        let bad = try await request("/v1/breeds?recognised=maybe")
        #expect(bad.status == .badRequest)
        #expect(bad.error.field == "recognised")
    }

    @Test func oneBreedWithItsSources() async throws {
        let chihuahua = try await request("/v1/breeds/chihuahua")
        #expect(chihuahua.status == .ok)
        #expect((chihuahua.object["name"] as? [String: Any])?["cs"] as? String == "čivava")
        let sources = chihuahua.object["sourceDetails"] as? [[String: Any]] ?? []
        #expect(!sources.isEmpty)
        #expect(sources.allSatisfy { $0["licence"] is String })
        let missing = try await request("/v1/breeds/chihuahuah")
        #expect(missing.status == .notFound)
        #expect(missing.error.code == "notFound")
        let message = (missing.object["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.hasPrefix(#"no breed has the id "chihuahuah"; did you mean chihuahua"#), "\(message)")
    }

    /// A dog of a breed the model does not know: the verdict and the breeds it looks most like, in JSON as the
    /// facade's record says it (a model whose rule calls every dog unknown).
    @Test func anUnknownBreedIsTheVerdictWithItsLookAlikes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-unknown-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("unknown.safetensors")
        try ModelFileEdit.answeringEveryDogAsUnknown(Fixture.fast, to: url)
        let service = try DedogService(classifier: Classifier(modelURL: url, configuration: .init(workers: 1)),
                                       catalogue: try Fixture.catalogue, configuration: ServerConfiguration())
        let beagle = Fixture.photo("beagle.jpg")
        let response = try await request("/predictions/dedog?top_k=2&lang=cs", method: .post, headers: [.contentType: "image/jpeg"],
                                         body: beagle, service: service)
        #expect(response.status == .ok)
        #expect(response.object["verdict"] as? String == "otherBreed")
        let known = try Self.service.classifier.classify(bytes: beagle, name: "body", top: 2)
        let names = (response.object["breeds"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        #expect(names == known.breeds.map(\.key), "the look-alikes are the breeds the model ranks first")
    }

    /// Careful mode (`careful=true`) and the kind of dog through the API: the sample beagle is still a beagle with
    /// care; to a model without the beagle and the coonhounds (its rule edited to call every dog unknown, and so
    /// without a careful threshold) it is a scent hound, the kind said in the request's language, and careful mode
    /// is refused naming the parameter, as a value that is not true or false is.
    @Test func carefulModeAndTheKindOfDog() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let careful = try await request("/predictions/dedog?careful=true", method: .post, headers: [.contentType: "image/jpeg"],
                                        body: beagle)
        #expect(careful.status == .ok && careful.object["verdict"] as? String == "dog" && careful.object["kind"] is NSNull, "\(careful.text)")
        let bad = try await request("/predictions/dedog?careful=maybe", method: .post, headers: [.contentType: "image/jpeg"],
                                    body: beagle)
        #expect(bad.status == .badRequest && bad.error.code == "badParameter" && bad.error.field == "careful", "\(bad.text)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-kind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let without = folder.appendingPathComponent("without.safetensors"), url = folder.appendingPathComponent("kind.safetensors")
        try ModelFileEdit.withoutBreeds(["n02088364-beagle", "n02089867-Walker_hound", "n02088632-bluetick", "n02090379-redbone"],
                                        SharedData.packageRoot.appendingPathComponent("models/dedog-breeds.safetensors"), to: without)
        try ModelFileEdit.answeringEveryDogAsUnknown(without, to: url)
        let service = try DedogService(classifier: Classifier(modelURL: url, configuration: .init(workers: 1)),
                                       catalogue: try Fixture.catalogue, configuration: ServerConfiguration())
        for (language, name) in [("en", "Scent hounds and related breeds (FCI group 6)"), ("cs", "honiči, barváři a příbuzná plemena (skupina FCI 6)")] {
            let response = try await request("/predictions/dedog?lang=\(language)", method: .post, headers: [.contentType: "image/jpeg"],
                                             body: beagle, service: service)
            let kind = response.object["kind"] as? [String: Any] ?? [:]
            #expect(response.object["verdict"] as? String == "otherBreed")
            #expect(kind["group"] as? Int == 6 && kind["section"] is NSNull && kind["name"] as? String == name, "\(response.text)")
        }
        let refused = try await request("/predictions/dedog?careful=1", method: .post, headers: [.contentType: "image/jpeg"],
                                        body: beagle, service: service)
        #expect(refused.status == .badRequest && refused.error.code == "noCarefulMode" && refused.error.field == "careful", "\(refused.text)")
    }

    /// A real cat photo is "no dog", and the answer says what it looks like, in the request's language (issue 50).
    @Test(.needsPetsReal) func aCatIsNoDogAndSaidToBeACat() async throws {
        let cat = try [UInt8](Data(contentsOf: SharedData.cat))
        for (language, name) in [("en", "a cat"), ("cs", "kočka")] {
            let response = try await request("/predictions/dedog?lang=\(language)", method: .post,
                                             headers: [.contentType: "image/jpeg"], body: cat)
            #expect(response.status == .ok)
            #expect(response.object["verdict"] as? String == "noDog")
            let looks = response.object["looksLike"] as? [String: Any]
            #expect(looks?["kind"] as? String == "cat", "\(response.object)")
            #expect(looks?["name"] as? String == name)
        }
    }

    @Test func modelsDescribeTheLoadedModel() async throws {
        let models = try await request("/v1/models").object["models"] as? [[String: Any]] ?? []
        #expect(models.count == 1)
        let model = models.first ?? [:]
        #expect(model["name"] as? String == "dedog")
        #expect(model["file"] as? String == "dedog-breeds-fast.safetensors")
        #expect((model["labels"] as? [Any])?.count == 133)
        let backbones = model["backbones"] as? [[String: Any]] ?? []
        #expect(backbones.map { $0["architecture"] as? String } == ["efficientnet-lite0"])
        // The bundled fast model has activation ranges: it runs in 8 bits where this CPU's kernels multiply bytes.
        #expect(backbones.map { $0["precision"] as? String } == [Precision.preferred(for: .best).rawValue])
        #expect((model["thresholds"] as? [String: Any])?["noDogBelow"] is Double)
        #expect((model["training"] as? [String: Any])?["validationTop1"] is String)
    }

    /// The OpenAPI document lists exactly the routes the server answers, each with its methods, and every route
    /// in it is routed (not the unmatched-route 404) and answers with a status documented for it.
    @Test func openAPIDocumentMatchesTheRoutes() async throws {
        let document = try await request("/openapi.json").object
        #expect((document["openapi"] as? String)?.hasPrefix("3.") == true)
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        let documented = Set(paths.flatMap { path, operations in
            operations.keys.filter { ["get", "post", "put", "delete", "patch"].contains($0) }.map { "\($0.uppercased()) \(path)" }
        })
        let routes = try DedogServer.router(Fixture.service(), logger: Fixture.logger).routes
            .map { (method: $0.method, path: "\($0.path)") }
        let served = Set(routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(documented == served, "documented only: \(documented.subtracting(served)); served only: \(served.subtracting(documented))")
        for (method, path) in routes {
            let uri = path.replacingOccurrences(of: "{model}", with: "dedog").replacingOccurrences(of: "{id}", with: "beagle")
                .replacingOccurrences(of: "{file}", with: "app.js").replacingOccurrences(of: "{fingerprint}", with: "00ff")
                .replacingOccurrences(of: "{name}", with: "none")
            let response = try await request(uri, method: method, body: method == .post ? Fixture.photo("beagle.jpg") : nil)
            let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(!message.hasPrefix("no such route"), "\(method) \(uri)")
            let operation = paths[path]?[method.rawValue.lowercased()] as? [String: Any]
            let statuses = (operation?["responses"] as? [String: Any])?.keys.map { $0 } ?? []
            #expect(statuses.contains(String(response.status.code)), "\(method) \(path) answered \(response.status.code), undocumented")
        }
    }
}
