import Dedog
import DedogTestSupport
import DedogServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /api/v1/vision/labels`, as PhotoPrism's external vision service calls it: the request in the shape of
/// PhotoPrism's `vision.ApiRequest` (photoprism/photoprism `internal/ai/vision/api_request.go`, the fields its labels
/// worker fills: id, model, version, system, prompt, suffix, options, stream, images as base64 data URIs), the
/// response in that of its `vision.ApiResponse` and `LabelResult`.
@Suite struct PhotoPrismTests {
    let router = RouterTests()

    /// PhotoPrism's request for one photo, each image a data URI as `media.DataUrl` writes it.
    static func photoPrismRequest(_ images: [[UInt8]], id: String = "3f1a8c5e-1b2d-4c7e-9a0b-6d5e4f3a2b1c") -> [UInt8] {
        let uris = images.map { "\"data:image/jpeg;base64,\(Data($0).base64EncodedString())\"" }.joined(separator: ",")
        return Array(("{\"id\":\"\(id)\",\"model\":\"dedog\",\"version\":\"latest\",\"system\":\"You are a PhotoPrism vision model.\","
            + "\"prompt\":\"Analyze the image and return label objects.\",\"suffix\":\"\",\"options\":{},\"stream\":false,"
            + "\"images\":[\(uris)]}").utf8)
    }

    func labels(_ response: TestResponse) -> [[String: Any]] {
        (response.object["result"] as? [String: Any])?["labels"] as? [[String: Any]] ?? []
    }

    /// A beagle: the breed with its probability as the confidence and topicality, in the categories Dog and Animal
    /// (so that PhotoPrism's `label:dog` finds it), and Dog itself; the id comes back, with code 200 and the model.
    @Test func aDogIsItsBreedAndADog() async throws {
        let beagle = Fixture.photo("beagle.jpg")
        let response = try await router.request("/api/v1/vision/labels", method: .post, headers: [.contentType: "application/json"],
                                                body: Self.photoPrismRequest([beagle]))
        #expect(response.status == .ok, "\(response.text)")
        #expect(response.object["id"] as? String == "3f1a8c5e-1b2d-4c7e-9a0b-6d5e4f3a2b1c")
        #expect(response.object["code"] as? Int == 200)
        #expect((response.object["model"] as? [String: Any])?["type"] as? String == "labels")
        let answer = try RouterTests.service.classifier.classify(bytes: beagle, name: "image 1", top: 1)
        let found = labels(response)
        #expect(found.map { $0["name"] as? String } == ["Dog", "Beagle"])
        let breed = found.last ?? [:]
        #expect(abs((breed["confidence"] as? Double ?? 0) - Double(answer.breeds[0].probability)) < 1e-6)
        #expect(breed["topicality"] as? Double == breed["confidence"] as? Double)
        #expect(breed["categories"] as? [String] == ["Dog", "Animal"])
        #expect(breed["source"] as? String == "image")
        #expect(abs((found[0]["confidence"] as? Double ?? 0) - Double(answer.dogProbability ?? 0)) < 1e-6)
    }

    /// A cat: "No Dog", and what it looks like; with a beagle tile beside it the photo has a dog, and no "No Dog".
    @Test(.needsPetsReal) func aCatIsNoDogAndACat() async throws {
        let cat = try [UInt8](Data(contentsOf: SharedData.cat))
        let alone = try await router.request("/api/v1/vision/labels", method: .post, body: Self.photoPrismRequest([cat]))
        #expect(alone.status == .ok)
        #expect(labels(alone).map { $0["name"] as? String } == ["No Dog", "Cat"])
        #expect(labels(alone).allSatisfy { ($0["confidence"] as? Double ?? 0) > 0 })
        let both = try await router.request("/api/v1/vision/labels", method: .post,
                                            body: Self.photoPrismRequest([cat, Fixture.photo("beagle.jpg")]))
        #expect(labels(both).map { $0["name"] as? String } == ["Cat", "Dog", "Beagle"])
    }

    /// What is not PhotoPrism's request is refused, saying which field to change; the token guards the route.
    @Test func badRequestsAndTheToken() async throws {
        for (body, code, field) in [(Array("not json".utf8), "badJSON", "body"),
                                    (Array("{\"id\":\"x\",\"images\":[]}".utf8), "noPhoto", "images"),
                                    (Array("{\"id\":\"x\",\"url\":\"https://photoprism.example/t.jpg\"}".utf8), "noPhoto", "images"),
                                    (Array("{\"id\":\"x\",\"images\":[\"data:image/jpeg,notbase64\"]}".utf8), "badImage", "images"),
                                    (Self.photoPrismRequest([Array("not a photo at all".utf8)]), "", "images")] {
            let response = try await router.request("/api/v1/vision/labels", method: .post, body: body)
            #expect(response.status.code >= 400 && response.status.code < 500, "\(code): \(response.status)")
            if !code.isEmpty { #expect(response.error.code == code, "\(response.text)") }
            #expect(response.error.field == field, "\(response.text)")
        }
        let guarded = try Fixture.service({ $0.token = "s3cret" })
        let body = Self.photoPrismRequest([Fixture.photo("beagle.jpg")])
        let none = try await router.request("/api/v1/vision/labels", method: .post, body: body, service: guarded)
        #expect(none.status == .unauthorized)
        let right = try await router.request("/api/v1/vision/labels", method: .post, headers: [.authorization: "Bearer s3cret"],
                                             body: body, service: guarded)
        #expect(right.status == .ok)
    }
}
