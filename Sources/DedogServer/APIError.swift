import Foundation
import Hummingbird
import Dedog

/// An error the API answers with: the status, a stable code for programs, a message for people, and the request
/// field to change when there is one. Rendered as `{"error": {"status", "code", "message", "field"}}`.
public struct APIError: Error, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// The query parameter, header or form part the client should change (`top_k`, `Authorization`, `body`).
    public var field: String?
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            let status: Int
            let code: String
            let message: String
            let field: String?

            func encode(to encoder: Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(status, forKey: .status)
                try c.encode(code, forKey: .code)
                try c.encode(message, forKey: .message)
                try c.encode(field, forKey: .field)  // always present, null when no field is to blame
            }

            enum CodingKeys: String, CodingKey { case status, code, message, field }
        }
        let error: Detail
    }

    var response: Response {
        let body = Body(error: .init(status: status.code, code: code, message: message, field: field))
        return JSONResponse.make(status, body, headers: headers)
    }

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "bodyTooLarge",
                 message: "the request body is over the limit of \(limit) bytes (the server's --max-body)", field: "body")
    }

    /// The connection failed while the body was being read (the client went away, say).
    static func bodyUnreadable(_ error: any Error) -> APIError {
        APIError(.badRequest, code: "bodyUnreadable", message: "the request body could not be read: \(error)", field: "body")
    }

    static func notFound(_ what: String) -> APIError {
        APIError(.notFound, code: "notFound", message: what)
    }

    /// What a classifier's error means for the client: a photo that could not be classified, or what the model cannot do.
    static func photo(_ error: ClassifierError, field: String) -> APIError {
        if let problem = error.photoProblem {
            switch problem {
            case .unsupportedFormat:
                return APIError(.unsupportedMediaType, code: "unsupportedFormat",
                                message: error.description + " Send a JPEG, PNG, HEIC, AVIF or WebP photo.", field: field)
            case .tooManyPixels:
                return APIError(.contentTooLarge, code: "tooManyPixels", message: error.description + " Send a smaller photo.",
                                field: field)
            case .tooManyBytes:
                return APIError(.contentTooLarge, code: "bodyTooLarge", message: error.description, field: field)
            case .empty:
                return APIError(.badRequest, code: "emptyPhoto", message: error.description, field: field)
            case .truncated:
                return APIError(.unprocessableContent, code: "truncatedPhoto", message: error.description, field: field)
            case .damaged:
                return APIError(.unprocessableContent, code: "damagedPhoto", message: error.description, field: field)
            }
        }
        switch error {
        case .image:
            return APIError(.unprocessableContent, code: "damagedPhoto", message: error.description, field: field)
        case .emptyBreedName, .ambiguousBreed:
            return APIError(.unprocessableContent, code: "badBreed", message: error.description, field: "breed")
        case .notACatalogueBreed:
            return APIError(.unprocessableContent, code: "badBreed",
                            message: error.description + " To teach a new breed of that name, send newBreed=true too.", field: "breed")
        case .unknownBreed:
            return APIError(.unprocessableContent, code: "unknownBreed",
                            message: error.description + " Send one of them in the \"breed\" field.", field: "breed")
        case .quiz:
            return APIError(.unprocessableContent, code: "badQuiz", message: error.description, field: field)
        case .model, .noModel, .unknownModel, .notTrainable:
            return APIError(.internalServerError, code: "modelFailed", message: error.description)
        case .noCarefulMode:
            return APIError(.badRequest, code: "noCarefulMode", message: error.description + " Leave out careful=true.", field: "careful")
        case .sidecar, .outsideTree, .record, .watch, .notTaught, .otherBackbones, .alreadyTrained, .notASharedBreed:  // the command line's own, never from a route
            return APIError(.internalServerError, code: "internal", message: error.description)
        }
    }
}

/// JSON bodies written as the command line writes them (sorted keys, no escaped slashes).
enum JSONResponse {
    static func make(_ status: HTTPResponse.Status = .ok, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        let data = (try? ClassificationRecord.encoder.encode(value)) ?? Data(#"{"error":{"status":500,"code":"encoding","message":"the answer could not be written as JSON","field":null}}"#.utf8)
        return make(status, data: data, headers: headers)
    }

    static func make(_ status: HTTPResponse.Status = .ok, data: some Sequence<UInt8>, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
