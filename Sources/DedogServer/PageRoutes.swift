import Foundation
import HTTPTypes
import Hummingbird
import Synchronization
import Dedog
import DedogCatalogue

/// What the web page needs beyond predictions: its own files, confirmed photos (learn and undo) and quizzes.
extension DedogService {
    // MARK: The page's files

    /// Headers every page file carries: nothing may be loaded from elsewhere (the page works offline and runs
    /// no one else's code), and browsers revalidate instead of keeping a stale copy after an upgrade.
    static let pageHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!: "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; "
            + "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-cache",
    ]

    func asset(_ name: String, _ request: Request) throws(APIError) -> Response {
        guard let file = web.files[name] else { throw APIError.notFound("the page has no file \"\(name.prefix(100))\"") }
        var headers = Self.pageHeaders
        headers[.eTag] = file.etag
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    // MARK: Confirmed photos

    static let learningOff = APIError(.forbidden, code: "learningOff",
                                      message: "this server does not learn photos: start dedog serve with --learn-model FILE "
                                          + "(a model file of your own, e.g. a copy of a bundled one or one from dedog train)")

    struct LearnedAnswer: Encodable {
        let photo: String
        let fingerprint: String
        /// False when the model already knew this photo as this breed.
        let added: Bool
        let breed: String
        /// True when the breed was new to the model, taught from this photo.
        let taughtNewBreed: Bool
        let before: ClassificationRecord
        let after: ClassificationRecord?
        let memorySize: Int
    }

    /// `POST /v1/memory`: a form with the photo and `breed` (any name of one of the model's breeds, or of a catalogue
    /// breed it does not know yet, or with `newBreed=true` a name of the user's): the served model learns it (`dedog
    /// learn`, which teaches a breed new to it) and answers with the new file from then on.
    func learn(_ request: Request) async throws -> Response {
        guard let model = configuration.learnModel else { throw Self.learningOff }
        let language = try Self.language(request)
        let boundary = try Self.photoBoundary(request)
        try admit(request, bodyLimit: configuration.maxBodyBytes)
        defer { queue.release() }
        let received = try await receive(request, boundary: boundary, limit: configuration.maxBodyBytes)
        guard let breed = received.fields["breed"] ?? request.uri.queryParameters["breed"].map(String.init),
              !breed.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw APIError(.badRequest, code: "noBreed", message: "say which breed the photo shows: a form field breed (or ?breed=)",
                           field: "breed")
        }
        guard received.photos.count == 1, let photo = received.photos.first else {
            throw APIError(.badRequest, code: "noPhoto", message: "send exactly one photo to learn (it has \(received.photos.count))",
                           field: "photo")
        }
        let newBreed: Bool
        switch received.fields["newBreed"] ?? request.uri.queryParameters["newBreed"].map(String.init) {
        case nil, "false"?: newBreed = false
        case "true"?: newBreed = true
        case let other?:
            throw APIError(.badRequest, code: "badParameter", message: "newBreed is true or false, not \"\(other.prefix(40))\"",
                           field: "newBreed")
        }
        let catalogue = self.catalogue
        let report = try await changeModel(model, field: photo.name) { model throws(ClassifierError) in
            let report = try Confirmations.learn([.bytes(photo.bytes, name: photo.name)], breed: breed, model: model, catalogue: catalogue,
                                                 allowingNewName: newBreed)
            return (report, report.photos.contains(where: \.added))
        }
        if let failure = report.failed.first {
            if failure.noDog { throw APIError(.unprocessableContent, code: "noDog", message: failure.message, field: "photo") }
            throw APIError.photo(.image(.unreadable(file: failure.photo, reason: failure.message)), field: "photo")
        }
        guard let learned = report.photos.first else { throw APIError.notFound("nothing was learned") }
        let name = catalogue.breed(id: report.label.breed, label: report.label.key)?.name(in: language) ?? report.label.name
        return JSONResponse.make(.ok, LearnedAnswer(
            photo: learned.photo, fingerprint: learned.fingerprint, added: learned.added, breed: name,
            taughtNewBreed: report.taughtNewBreed,
            before: ClassificationRecord(file: photo.name, result: learned.before, error: nil, catalogue: catalogue, language: language),
            after: learned.after.map { ClassificationRecord(file: photo.name, result: $0, error: nil, catalogue: catalogue, language: language) },
            memorySize: report.confirmedCount))
    }

    /// `DELETE /v1/memory/{fingerprint}`: undoes a confirmed photo.
    func forget(_ fingerprint: String, _ request: Request) async throws -> Response {
        guard let model = configuration.learnModel else { throw Self.learningOff }
        let language = try Self.language(request)
        guard fingerprint.count <= 128, fingerprint.allSatisfy(\.isHexDigit), !fingerprint.isEmpty else {
            throw APIError(.badRequest, code: "badParameter", message: "a fingerprint is the hex string POST /v1/memory answered",
                           field: "fingerprint")
        }
        try admit()
        defer { queue.release() }
        let report = try await changeModel(model, field: "fingerprint") { model throws(ClassifierError) in
            let report = try Confirmations.forget(fingerprints: [fingerprint.lowercased()], breed: nil, model: model, catalogue: nil)
            return (report, !report.removed.isEmpty)
        }
        guard !report.removed.isEmpty else { throw APIError.notFound("the model remembers no photo with the fingerprint \(fingerprint)") }
        return JSONResponse.make(.ok, MemoryList(report.removed, memorySize: report.confirmedCount, catalogue, language))
    }

    struct MemoryList: Encodable {
        let entries: [MemoryEntry]
        let memorySize: Int

        init(_ photos: [ConfirmedPhoto], memorySize: Int, _ catalogue: Catalogue, _ language: Language) {
            entries = photos.map { MemoryEntry($0, catalogue, language) }
            self.memorySize = memorySize
        }
    }

    /// A confirmed photo, with its breed named as `POST /v1/memory` answers it (the catalogue breed behind the
    /// label, in the request's language; else the label, a name of the user's own).
    struct MemoryEntry: Encodable {
        let label: String
        let breed: String
        let photo: String
        let fingerprint: String
        let added: String

        init(_ photo: ConfirmedPhoto, _ catalogue: Catalogue, _ language: Language) {
            label = photo.label
            breed = catalogue.breed(id: photo.label, label: photo.label)?.name(in: language) ?? photo.label
            self.photo = photo.photo
            fingerprint = photo.fingerprint
            added = photo.added
        }
    }

    /// `GET /v1/memory`: the confirmed photos the served model remembers, oldest first.
    func memory(_ request: Request) throws(APIError) -> Response {
        guard configuration.learnModel != nil else { throw Self.learningOff }
        let entries = classifier.info.confirmedPhotos
        return JSONResponse.make(.ok, MemoryList(entries, memorySize: entries.count, catalogue, try Self.language(request)))
    }

    /// Runs `change` on the model file `model` (`--learn-model`) on an inference thread, one change at a time;
    /// when it says it changed the file, the served classifier becomes the file as now written before the next
    /// change starts, so the one served is always the last written. `field`: what a failure is blamed on.
    private func changeModel<Report: Sendable>(
        _ model: URL, field: String,
        _ change: @escaping @Sendable (URL) throws(ClassifierError) -> (report: Report, changed: Bool)
    ) async throws(APIError) -> Report {
        try await queue.run { () -> Result<Report, ClassifierError> in
            self.learning.withLock { _ in
                Result { () throws(ClassifierError) -> Report in
                    let (report, changed) = try change(model)
                    if changed {
                        let reloaded = try Classifier(modelURL: model, configuration: self.classifier.configuration)
                        self.current.withLock { $0 = reloaded }
                    }
                    return report
                }
            }
        }.get(mapping: field)
    }

    // MARK: Quizzes

    struct QuizListing: Encodable, Sendable {
        let name: String
        let title: String
        let questions: Int
        let model: String
        let created: String
        /// Where it is read from (not sent).
        let url: URL

        enum CodingKeys: String, CodingKey { case name, title, questions, model, created }
    }

    /// The quiz files of `folder` (`*.json`, not recursive) that load, and why the others do not.
    static func listQuizzes(_ folder: URL?) -> ([String: QuizListing], [(file: String, reason: String)]) {
        guard let folder else { return ([:], []) }
        var found: [String: QuizListing] = [:], refused: [(String, String)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for file in names.sorted() where file.lowercased().hasSuffix(".json") {
            let url = folder.appendingPathComponent(file)
            do throws(ClassifierError) {
                let quiz = try Quiz.load(url)
                let name = String(file.dropLast(5))
                found[name] = QuizListing(name: name, title: quiz.title, questions: quiz.questions.count, model: quiz.model,
                                          created: quiz.created, url: url)
            } catch {
                refused.append((file, error.description))
            }
        }
        return (found, refused)
    }

    /// `GET /v1/quizzes`: the quizzes of `dedog serve --quizzes DIR`.
    func quizList() -> Response {
        JSONResponse.make(.ok, ["quizzes": quizzes.values.sorted { $0.name < $1.name }])
    }

    /// `GET /v1/quizzes/{name}`: one of them, read and validated again (the file may have changed).
    func quiz(named name: String) async throws -> Response {
        guard let url = quizzes[name]?.url else {
            throw APIError.notFound("no quiz is called \"\(name.prefix(100))\" here" + (quizzes.isEmpty ? " (dedog serve --quizzes DIR offers them)" : ""))
        }
        try admit()
        defer { queue.release() }
        let data = try await queue.run { () -> Result<Data, ClassifierError> in
            Result { () throws(ClassifierError) -> Data in try Quiz.load(url).encoded() }
        }.get(mapping: name)
        return JSONResponse.make(.ok, data: data)
    }

    /// `POST /v1/quizzes/check`: a quiz file the user chose, validated as a file on disk is; answers it back.
    func checkQuiz(_ request: Request) async throws -> Response {
        let limit = min(configuration.maxBodyBytes, Quiz.Limits.fileBytes)
        try admit(request, bodyLimit: limit)
        defer { queue.release() }
        let body = try await collect(request, limit: limit)
        let data = try await queue.run { () -> Result<Data, ClassifierError> in
            Result { () throws(ClassifierError) -> Data in try Quiz.decode(Data(body), name: "the quiz").encoded() }
        }.get(mapping: "body")
        return JSONResponse.make(.ok, data: data)
    }
}

extension Result where Failure == ClassifierError {
    /// The value, or the API's error for the failure (`field`: what the client should change).
    func get(mapping field: String) throws(APIError) -> Success {
        switch self {
        case let .success(value): return value
        case let .failure(error): throw APIError.photo(error, field: field)
        }
    }
}
