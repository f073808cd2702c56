import Foundation
import Hummingbird
import Logging

/// One log line per request (method, path, status, time) and the request metrics. Outermost, so that it sees
/// the status the client gets, errors included.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware answers everything; this is a fallback that keeps the log and metrics whole.
            response = ErrorMiddleware.render(error, logger: logger)
        }
        let elapsed = ContinuousClock.now - started
        // Unknown paths share one label (Hummingbird calls them "NotFound"), so that scanners cannot grow the series.
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: elapsed)
        let ms = Double(elapsed.nanoseconds) / 1e6
        logger.info("\(request.method) \(request.uri.path) \(response.status.code) \(String(format: "%.1f", ms)) ms")
        return response
    }
}

/// Every error as dedog's JSON error body with the right status: the API's own, Hummingbird's (unknown routes,
/// oversized bodies), and anything unexpected (500, logged).
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.render(error, logger: logger)
        }
    }

    static func render(_ error: any Error, logger: Logger) -> Response {
        switch error {
        case let error as APIError:
            return error.response
        case let error as HTTPError where error.status == .notFound:
            return APIError.notFound("no such route; the API's routes are listed at /openapi.json").response
        case let error as HTTPError:
            return APIError(error.status, code: "http\(error.status.code)", message: error.body ?? error.status.reasonPhrase,
                            headers: error.headers).response
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return APIError(.contentTooLarge, code: "bodyTooLarge", message: "the request body is over the server's limit (--max-body)",
                            field: "body").response
        case let error as any HTTPResponseError:
            return APIError(error.status, code: "http\(error.status.code)", message: error.status.reasonPhrase).response
        default:
            logger.error("unexpected error: \(String(reflecting: error))")
            return APIError(.internalServerError, code: "internal", message: "the server failed to answer; the error is in its log").response
        }
    }
}

/// `Authorization: Bearer <token>` on every route but health.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let token: [UInt8]

    init(token: String) {
        self.token = Array(token.utf8)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard DedogService.isPublic(request.uri.path) || authorised(request.headers[.authorization]) else {
            throw APIError(.unauthorized, code: "unauthorized",
                           message: "this server needs its token: send Authorization: Bearer <token> (the token given to dedog serve --token)",
                           field: "Authorization", headers: [.wwwAuthenticate: #"Bearer realm="dedog""#])
        }
        return try await next(request, context)
    }

    /// Compares in time that does not depend on where the first difference is.
    func authorised(_ header: String?) -> Bool {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
        let given = Array(header.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for i in 0..<token.count { difference |= token[i] ^ (i < given.count ? given[i] : 0) }
        return difference == 0
    }
}
