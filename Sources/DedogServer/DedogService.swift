import Foundation
import Hummingbird
import Logging
import Synchronization
import Dedog
import DedogCatalogue

/// The HTTP API over one loaded classifier: every route, its limits and its answers. Holds no state but the
/// read-only model, the catalogue and counters, so that replicas behind a load balancer are interchangeable.
public final class DedogService: Sendable {
    /// The classifier answering now; replaced (in one step) after the page teaches a `learnModel` a photo.
    public var classifier: Classifier { current.withLock { $0 } }
    let current: Mutex<Classifier>
    /// Held while a confirmed photo is learned or forgotten: one change of the model file at a time.
    let learning = Mutex<Void>(())
    let web: WebAssets
    /// The quiz files of `quizFolder` that loaded, by name (file name without `.json`), and those refused.
    let quizzes: [String: QuizListing]
    public let refusedQuizzes: [(file: String, reason: String)]
    public let catalogue: Catalogue
    public let configuration: ServerConfiguration
    let queue: InferenceQueue
    let metrics = ServerMetrics()
    /// Set once the model has run a first photo: until then `/v2/health/ready` says 503.
    private let warm = Atomic<Bool>(false)
    /// The catalogue ids of the breeds the loaded model can name.
    private let recognised: Set<String>
    let openAPI: [UInt8]

    /// Routes that answer without a token: orchestrators probe the health routes, and the page's files hold
    /// nothing private (the page asks for the token when the API wants it).
    static func isPublic(_ path: String) -> Bool {
        ["/ping", "/v2/health/live", "/v2/health/ready", "/"].contains(path) || path.hasPrefix("/web/")
    }

    public init(classifier: Classifier, catalogue: Catalogue, configuration: ServerConfiguration) throws(ServerError) {
        current = Mutex(classifier)
        self.catalogue = catalogue
        self.configuration = configuration
        queue = InferenceQueue(workers: classifier.configuration.workers, queue: configuration.queue)
        recognised = Set(classifier.info.labels.compactMap { catalogue.breed(id: $0.breed, label: $0.key)?.id })
        openAPI = try OpenAPIDocument.load()
        web = try WebAssets.load()
        (quizzes, refusedQuizzes) = Self.listQuizzes(configuration.quizFolder)
    }

    deinit {
        queue.shutdown()
    }

    public var isReady: Bool { warm.load(ordering: .acquiring) }

    /// Runs the model once on a blank photo so that the first client does not pay for plans and buffers; the
    /// service is ready afterwards.
    public func warmUp() async {
        let classifier = self.classifier
        _ = await queue.run { (try? classifier.warmUp()) != nil }
        warm.store(true, ordering: .releasing)
    }

    func index() -> Response {
        JSONResponse.make(.ok, ["name": "dedog", "api": "/openapi.json", "predict": "/predictions/\(configuration.modelName)",
                                "breeds": "/v1/breeds", "models": "/v1/models", "page": "/"])
    }

    func metricsText() -> Response {
        metrics.queue(depth: queue.waiting)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: metrics.text())))
    }

    // MARK: Predictions

    /// `POST /predictions/dedog`: the photo as the body, or a multipart form of photos (one answer each, in order).
    func predict(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        guard context.parameters.get("model") == configuration.modelName else {
            throw APIError.notFound("no model is called \"\(context.parameters.get("model") ?? "")\" here; "
                                    + "this server's is \"\(configuration.modelName)\": POST /predictions/\(configuration.modelName)")
        }
        let top = try Self.topK(request, limit: configuration.maxTopK)
        let language = try Self.language(request)
        // Refused before the body is read: careful mode of a model without one.
        let classifier = try Self.careful(request) ? Self.carefulMode(of: self.classifier) : self.classifier
        let boundary = try Self.photoBoundary(request)
        let limit = configuration.maxBodyBytes
        try admit(request, bodyLimit: limit)
        defer { queue.release() }

        let received = try await receive(request, boundary: boundary, limit: limit)
        let photos = received.photos
        guard !photos.isEmpty else {
            throw APIError(.badRequest, code: "noPhoto", message: "the form has no photo part (send each photo as a file part, e.g. -F data=@rex.jpg)",
                           field: "body")
        }

        let results = await queue.run { () -> [Result<Classification, ClassifierError>] in
            photos.map { photo in
                Result { () throws(ClassifierError) -> Classification in try classifier.classify(bytes: photo.bytes, name: photo.name, top: top) }
            }
        }
        var records: [ClassificationRecord] = []
        var failures: [APIError] = []
        for (photo, result) in zip(photos, results) {
            switch result {
            case let .success(answer):
                metrics.classified(verdict: answer.verdict.rawValue)
                records.append(ClassificationRecord(file: photo.name, result: answer, error: nil, catalogue: catalogue, language: language))
            case let .failure(error):
                let apiError = APIError.photo(error, field: boundary == nil ? "body" : photo.name)
                failures.append(apiError)
                records.append(ClassificationRecord(file: photo.name, result: nil, error: apiError.message, catalogue: catalogue, language: language))
            }
        }
        // One photo that failed is the request's failure; in a batch that is not all failures, each answer says its own.
        if failures.count == records.count, let first = failures.first { throw first }
        if boundary == nil { return JSONResponse.make(.ok, records[0]) }
        return JSONResponse.make(.ok, records)
    }

    /// The request's photos and text fields: the parts of a multipart form (`boundary`), or the whole body as one
    /// photo called "body". Bounded by `limit` bytes and the request timeout.
    func receive(_ request: Request, boundary: String?, limit: Int) async throws(APIError) -> (photos: [(name: String, bytes: [UInt8])], fields: [String: String]) {
        let timeout = configuration.requestTimeout
        if let boundary {
            let reader = MultipartReader(maxParts: configuration.maxParts, maxBytes: limit)
            let parts = try await Self.withDeadline(timeout) { () async throws(APIError) -> [FormPart] in
                try await reader.read(request.body, boundary: boundary)
            }
            var fields: [String: String] = [:]
            for part in parts where part.filename == nil {
                if let name = part.name, part.body.count <= 1024, let text = String(validating: part.body, as: UTF8.self) { fields[name] = text }
            }
            let photos = parts.enumerated().filter { !$0.element.isTextField && ($0.element.filename != nil || fields[$0.element.name ?? ""] == nil) }
                .map { i, part in (part.filename ?? part.name ?? "part \(i + 1)", part.body) }
            return (photos, fields)
        }
        let body = try await collect(request, limit: limit)
        guard !body.isEmpty else {
            throw APIError(.badRequest, code: "noPhoto", message: "the request has no body; send the photo as the body (curl --data-binary @rex.jpg) or as a form part",
                           field: "body")
        }
        return ([("body", body)], [:])
    }

    /// The whole body, at most `limit` bytes (413 past it), within the request timeout (408).
    func collect(_ request: Request, limit: Int) async throws(APIError) -> [UInt8] {
        try await Self.withDeadline(configuration.requestTimeout) { () async throws(APIError) -> [UInt8] in
            do {
                return Array(try await request.body.collect(upTo: limit).readableBytesView)
            } catch {
                if let tooMany = error as? any HTTPResponseError, tooMany.status == .contentTooLarge {
                    throw APIError.bodyTooLarge(limit: limit)
                }
                throw APIError.bodyUnreadable(error)
            }
        }
    }

    /// For a request with a body of at most `bodyLimit` bytes: 413 at once when its Content-Length says more (the
    /// one place the declared size is checked; reading stops at the limit too), else a place in the queue.
    func admit(_ request: Request, bodyLimit: Int) throws(APIError) {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > bodyLimit {
            throw APIError.bodyTooLarge(limit: bodyLimit)
        }
        try admit()
    }

    /// A place in the queue, or 503 with Retry-After when every worker and waiting place is taken. The caller
    /// releases it.
    func admit() throws(APIError) {
        guard queue.admit() else {
            metrics.queueFull()
            throw APIError(.serviceUnavailable, code: "busy",
                           message: "all \(queue.capacity) places are taken (--workers \(queue.workers), --queue "
                               + "\(queue.capacity - queue.workers)); try again shortly",
                           headers: [.retryAfter: "1"])
        }
    }

    /// The multipart boundary of a form, or nil for a body that is a photo itself; 415 for other content types.
    static func photoBoundary(_ request: Request) throws(APIError) -> String? {
        let contentType = request.headers[.contentType]
        switch contentType.map({ HeaderValue.parse($0).value.lowercased() }) {
        case nil, "application/octet-stream"?:
            return nil
        case let type? where type.hasPrefix("image/"):
            return nil
        case "multipart/form-data"?:
            guard let b = MultipartReader.boundary(contentType: contentType ?? "") else {
                throw APIError(.badRequest, code: "badMultipart", message: "multipart/form-data needs a boundary parameter",
                               field: "Content-Type")
            }
            return b
        case let type?:
            throw APIError(.unsupportedMediaType, code: "unsupportedContentType",
                           message: "a body of type \(type) is not a photo; send the photo itself (image/jpeg, image/png, "
                               + "image/heic, image/avif, image/webp or application/octet-stream) or multipart/form-data",
                           field: "Content-Type")
        }
    }

    static func topK(_ request: Request, limit: Int) throws(APIError) -> Int {
        guard let raw = request.uri.queryParameters["top_k"] else { return 3 }
        guard let k = Int(raw), (1...limit).contains(k) else {
            throw APIError(.badRequest, code: "badParameter", message: "top_k must be a whole number from 1 to \(limit), not \"\(raw)\"",
                           field: "top_k")
        }
        return k
    }

    /// `careful=true` (or 1): careful mode (`Classifier.carefulMode()`); false by default.
    static func careful(_ request: Request) throws(APIError) -> Bool {
        guard let raw = request.uri.queryParameters["careful"] else { return false }
        switch String(raw).lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no", "": return false
        default:
            throw APIError(.badRequest, code: "badParameter", message: "careful must be true or false, not \"\(raw)\"", field: "careful")
        }
    }

    /// `classifier` in careful mode; a model without one is the request's mistake (400), naming the parameter.
    static func carefulMode(of classifier: Classifier) throws(APIError) -> Classifier {
        do {
            return try classifier.carefulMode()
        } catch {
            throw APIError.photo(error, field: "careful")
        }
    }

    /// `lang`, else the first of Accept-Language's languages dedog speaks, else English.
    static func language(_ request: Request) throws(APIError) -> Language {
        if let raw = request.uri.queryParameters["lang"] {
            guard let language = Language(rawValue: String(raw).lowercased()) else {
                throw APIError(.badRequest, code: "badParameter", message: "lang must be en or cs, not \"\(raw)\"", field: "lang")
            }
            return language
        }
        let accepted = (request.headers[.acceptLanguage] ?? "").split(separator: ",")
            .map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased() }
        for tag in accepted {
            if tag.hasPrefix("cs") { return .cs }
            if tag.hasPrefix("en") { return .en }
        }
        return .en
    }

    /// `body` within `timeout`; past it the client was too slow to send its request: 408.
    static func withDeadline<T: Sendable>(_ timeout: Duration,
                                          _ body: @escaping @Sendable () async throws(APIError) -> T) async throws(APIError) -> T {
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard case let value?? = try await group.next() else {
                    throw APIError(.requestTimeout, code: "requestTimeout",
                                   message: "the request body did not arrive within \(timeout) (the server's --request-timeout)",
                                   field: "body", headers: [.connection: "close"])
                }
                return value
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.bodyUnreadable(error)
        }
    }

    // MARK: Breeds and models

    struct BreedEntry: Encodable {
        let breed: Breed
        let recognised: Bool
        let displayName: String
        /// The breed's words in the language asked for.
        let text: LocalizedBreed
        let sources: [Source]?

        enum Keys: String, CodingKey { case recognised, displayName, text, sourceDetails }

        func encode(to encoder: Encoder) throws {
            try breed.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(recognised, forKey: .recognised)
            try c.encode(displayName, forKey: .displayName)
            try c.encode(text, forKey: .text)
            if let sources { try c.encode(sources, forKey: .sourceDetails) }
        }
    }

    /// `GET /v1/breeds?q=…&lang=…&recognised=…`: the catalogue, or what a search finds (case, diacritics and typos
    /// folded as `dedog breeds search` does), optionally only the breeds the loaded model names.
    func breeds(_ request: Request) throws(APIError) -> Response {
        let language = try Self.language(request)
        var onlyRecognised = false
        if let raw = request.uri.queryParameters["recognised"] {
            switch raw.lowercased() {
            case "true", "1", "yes": onlyRecognised = true
            case "false", "0", "no": onlyRecognised = false
            default:
                throw APIError(.badRequest, code: "badParameter", message: "recognised must be true or false, not \"\(raw)\"", field: "recognised")
            }
        }
        var list: [Breed]
        if let q = request.uri.queryParameters["q"], !q.trimmingCharacters(in: .whitespaces).isEmpty {
            guard q.count <= 200 else {
                throw APIError(.badRequest, code: "badParameter", message: "q is over 200 characters", field: "q")
            }
            list = catalogue.search(String(q)).map(\.breed)
        } else {
            list = catalogue.list(language: language)
        }
        if onlyRecognised { list = list.filter { recognised.contains($0.id) } }
        let entries = list.map {
            BreedEntry(breed: $0, recognised: recognised.contains($0.id), displayName: $0.name(in: language),
                       text: catalogue.localized($0, in: language), sources: nil)
        }
        return JSONResponse.make(.ok, ["breeds": entries])
    }

    /// `GET /v1/breeds/{id}`: one breed, every field, with the sources it was taken from.
    func breed(_ request: Request, _ context: BasicRequestContext) throws(APIError) -> Response {
        let language = try Self.language(request)
        let id = context.parameters.get("id") ?? ""
        guard let breed = catalogue.breed(id: id) else {
            let close = catalogue.suggestions(for: id).map(\.id)
            throw APIError.notFound("no breed has the id \"\(id)\"" + (close.isEmpty ? "" : "; did you mean \(close.joined(separator: ", "))?"))
        }
        let used = Set(breed.sources.map(\.source))
        return JSONResponse.make(.ok, BreedEntry(breed: breed, recognised: recognised.contains(breed.id),
                                                 displayName: breed.name(in: language),
                                                 text: catalogue.localized(breed, in: language), sources: catalogue.sources.filter { used.contains($0.id) }))
    }

    /// One model as `/v1/models` lists it.
    struct ModelEntry: Encodable {
        struct LabelInfo: Encodable {
            let key: String
            let name: String
            let breed: String?
            /// Taught from confirmed photos (`dedog learn`, the page's confirm), not trained.
            let taught: Bool
            /// How many confirmed photos of this label the model holds (a taught breed's are all it was taught from).
            let photos: Int
        }
        struct BackboneInfo: Encodable {
            let architecture: String
            let inputSize: Int
            /// How a photo that is not square becomes the square: crop, pad or squeeze.
            let fit: String
            let averagesMirror: Bool
            /// The arithmetic it runs in: int8 where asked for (`dedog serve --precision`, by default where the CPU
            /// has AVX2) and the file has its activation ranges, fp32 otherwise.
            let precision: String
        }
        let name: String
        let file: String
        let labels: [LabelInfo]
        let backbones: [BackboneInfo]
        let thresholds: DecisionThresholds
        /// What training measured (validation accuracy among it); empty for the ImageNet bases.
        let training: [String: String]
        let workers: Int
        let threadsPerWorker: Int
        let kernels: String
        /// Whether the page may teach this model confirmed photos (`dedog serve --learn-model`).
        let learning: Bool
        /// Confirmed photos it remembers.
        let memorySize: Int
    }

    /// `GET /v1/models`: the loaded model: its labels, backbones, thresholds and measured accuracy.
    func models() -> Response {
        let classifier = self.classifier
        let model = classifier.info
        let photos = Dictionary(model.confirmedPhotos.map { ($0.label, 1) }, uniquingKeysWith: +)
        let info = ModelEntry(
            name: configuration.modelName, file: model.file.lastPathComponent,
            labels: model.labels.map {
                .init(key: $0.key, name: $0.name, breed: catalogue.breed(id: $0.breed, label: $0.key)?.id, taught: $0.taught,
                      photos: photos[$0.key] ?? 0)
            },
            backbones: model.backbones.map {
                .init(architecture: $0.architecture, inputSize: $0.inputSize, fit: $0.fit.rawValue,
                      averagesMirror: $0.averagesMirror, precision: $0.precision.rawValue)
            },
            thresholds: model.thresholds, training: model.training,
            workers: classifier.configuration.workers, threadsPerWorker: classifier.configuration.threadsPerWorker,
            kernels: classifier.configuration.kernels.name, learning: configuration.learnModel != nil,
            memorySize: model.confirmedPhotos.count)
        return JSONResponse.make(.ok, ["models": [info]])
    }
}
