import Dedog
import DedogCatalogue
import Foundation
import Hummingbird

// PhotoPrism's external vision service for labels (PhotoPrism 250425 and later; `internal/ai/vision` in its source):
// PhotoPrism POSTs `{"id", "model", "version", "images": ["data:image/jpeg;base64,…", …]}` (up to three thumbnails
// of one photo, and fields this route ignores) and reads `{"id", "code", "model", "result": {"labels": [{"name",
// "source", "priority", "confidence", "topicality", "categories"}]}}`, confidence and topicality in 0…1. Every label
// it returns goes on the one photo, so the images' answers are merged: each label once, at its highest confidence.

/// PhotoPrism's labels route.
struct PhotoPrismController {
    let service: DedogService

    func addRoutes(to router: Router<Context>) {
        router.post("/api/v1/vision/labels") { request, _ in try await service.photoPrismLabels(request) }
    }
}

/// The request, as PhotoPrism's `vision.ApiRequest` encodes it (its other fields are not read).
struct VisionRequest: Decodable {
    let id: String?
    let model: String?
    let images: [String]?
    let url: String?
}

/// One label in PhotoPrism's `vision.LabelResult` shape.
struct VisionLabel: Encodable, Equatable {
    let name: String
    let source = "image"
    let priority: Int
    let confidence: Float
    let topicality: Float
    let categories: [String]

    enum CodingKeys: String, CodingKey { case name, source, priority, confidence, topicality, categories }
}

/// The response, as PhotoPrism's `vision.ApiResponse` decodes it.
struct VisionResponse: Encodable {
    struct Model: Encodable {
        let type = "labels"
        let name: String
        let version: String
    }
    struct Result: Encodable { let labels: [VisionLabel] }
    let id: String
    let code = 200
    let model: Model
    let result: Result
}

extension DedogService {
    /// `POST /api/v1/vision/labels`: each image of the request classified as `/predictions` classifies a photo,
    /// the answers made PhotoPrism labels (`VisionLabels.of`) and merged.
    func photoPrismLabels(_ request: Request) async throws -> Response {
        // Base64 makes 3 bytes of a photo 4: the same photo limit as the other routes, in the body's terms.
        let limit = configuration.maxBodyBytes / 3 * 4 + 4096
        try admit(request, bodyLimit: limit)
        defer { queue.release() }
        let body = try await collect(request, limit: limit)
        let vision: VisionRequest
        do {
            vision = try JSONDecoder().decode(VisionRequest.self, from: Data(body))
        } catch {
            throw APIError(.badRequest, code: "badJSON",
                           message: "the body is not PhotoPrism's vision request: {\"id\": …, \"images\": [\"data:image/jpeg;base64,…\"]}",
                           field: "body")
        }
        let images = vision.images ?? []
        guard !images.isEmpty else {
            throw APIError(.badRequest, code: "noPhoto",
                           message: vision.url != nil
                               ? "images by URL are not fetched; set FileScheme: data (the default) in vision.yml"
                               : "the request has no images; PhotoPrism sends \"images\": [\"data:image/jpeg;base64,…\"]",
                           field: "images")
        }
        guard images.count <= configuration.maxParts else {
            throw APIError(.badRequest, code: "tooManyPhotos",
                           message: "\(images.count) images in one request; at most \(configuration.maxParts)", field: "images")
        }
        var photos: [[UInt8]] = []
        for (i, image) in images.enumerated() {
            guard let bytes = Self.dataURIBytes(image) else {
                throw APIError(.badRequest, code: "badImage",
                               message: "image \(i + 1) is not a base64 data URI (data:image/jpeg;base64,…)", field: "images")
            }
            photos.append(bytes)
        }
        let classifier = self.classifier, decoded = photos
        let results = await queue.run { () -> [Result<Classification, ClassifierError>] in
            decoded.enumerated().map { i, photo in
                Result { () throws(ClassifierError) -> Classification in
                    try classifier.classify(bytes: photo, name: "image \(i + 1)", top: 1)
                }
            }
        }
        var answers: [Classification] = []
        for result in results {
            switch result {
            case let .success(answer):
                metrics.classified(verdict: answer.verdict.rawValue)
                answers.append(answer)
            case let .failure(error):
                // One image PhotoPrism could not have meant to send (it sends its own thumbnails) fails the request.
                throw APIError.photo(error, field: "images")
            }
        }
        let labels = VisionLabels.merged(answers.map { VisionLabels.of($0, catalogue: catalogue) })
        return JSONResponse.make(.ok, VisionResponse(id: vision.id ?? "", model: .init(name: "dedog", version: configuration.modelName),
                                                     result: .init(labels: labels)))
    }

    /// The bytes of `data:<type>;base64,<payload>` (or a bare base64 payload), nil when it is neither.
    static func dataURIBytes(_ uri: String) -> [UInt8]? {
        var payload = Substring(uri)
        if payload.hasPrefix("data:") {
            guard let comma = payload.firstIndex(of: ","), payload[..<comma].hasSuffix(";base64") else { return nil }
            payload = payload[payload.index(after: comma)...]
        }
        return Data(base64Encoded: String(payload), options: .ignoreUnknownCharacters).map { Array($0) }
    }
}

/// What one answer says in PhotoPrism's labels: each dog named, by its breed (categories Dog and Animal, so that a
/// search for `label:dog` finds it); "Dog" for every photo with a dog; "No Dog" for a photo without one, beside what
/// it looks like instead when that is a cat or another animal. Confidence and topicality are dedog's probabilities
/// (PhotoPrism drops a label of confidence 0, so none is below 0.01).
enum VisionLabels {
    static func of(_ answer: Classification, catalogue: Catalogue) -> [VisionLabel] {
        func label(_ name: String, _ p: Float?, priority: Int, categories: [String]) -> VisionLabel {
            let confidence = max(0.01, min(1, p ?? 1))
            return VisionLabel(name: name, priority: priority, confidence: confidence, topicality: confidence, categories: categories)
        }
        let dog = answer.dogProbability
        switch answer.verdict {
        case .noDog:
            var labels = [label("No Dog", dog.map { 1 - $0 }, priority: 0, categories: [])]
            switch answer.looksLike {
            case .cat?: labels.append(label("Cat", nil, priority: 2, categories: ["Animal"]))
            case .animal?: labels.append(label("Animal", nil, priority: 1, categories: []))
            case .other?, nil: break
            }
            return labels
        case .dog, .unsure, .otherBreed:
            var labels = [label("Dog", dog, priority: 3, categories: ["Animal"])]
            for one in answer.dogs.isEmpty ? [answer] : answer.dogs where one.verdict == .dog {
                guard let top = one.breeds.first else { continue }
                let name = catalogue.details(top)?.name(in: .en) ?? top.name
                labels.append(label(name, top.probability, priority: 5, categories: ["Dog", "Animal"]))
            }
            return labels
        }
    }

    /// Each label once, at its highest confidence over the images, in the order first seen.
    static func merged(_ lists: [[VisionLabel]]) -> [VisionLabel] {
        var order: [String] = [], best: [String: VisionLabel] = [:]
        for label in lists.joined() {
            if let seen = best[label.name] {
                if label.confidence > seen.confidence { best[label.name] = label }
            } else {
                order.append(label.name)
                best[label.name] = label
            }
        }
        // A photo with a dog in one tile and none in another is a photo with a dog.
        if best["Dog"] != nil, let i = order.firstIndex(of: "No Dog") { order.remove(at: i) }
        return order.compactMap { best[$0] }
    }
}
