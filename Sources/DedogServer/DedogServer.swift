import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import ServiceLifecycle

/// `dedog serve`: the HTTP server around a `DedogService`.
public enum DedogServer {
    /// The application: routes, middleware (log and metrics, CORS, JSON errors, auth), the server's timeouts, and
    /// TLS when the configuration gives a certificate and key. `onRunning` gets the port bound (useful with port 0).
    public static func application(_ service: DedogService, logger: Logger,
                                   onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws(ServerError) -> some ApplicationProtocol {
        let configuration = service.configuration
        let router = router(service, logger: logger)
        let idle = configuration.idleTimeout.components
        var server = HTTPServerBuilder.http1(configuration: .init(idleTimeout: .nanoseconds(idle.seconds * 1_000_000_000 + idle.attoseconds / 1_000_000_000)))
        if let tls = configuration.tls {
            let settings = try tlsConfiguration(tls)
            do {
                server = try .tls(server, tlsConfiguration: settings)
            } catch {
                throw .tls(file: tls.certificate.path, reason: "\(error)")
            }
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "dedog"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// The server side of TLS from PEM files: the certificate (its chain, the server's own first) and its private key.
    static func tlsConfiguration(_ files: ServerConfiguration.TLSFiles) throws(ServerError) -> TLSConfiguration {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(files.certificate.path)
        } catch {
            throw .tls(file: files.certificate.path, reason: "no PEM certificate could be read from it (\(error))")
        }
        guard !certificates.isEmpty else { throw .tls(file: files.certificate.path, reason: "it holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKey.path, format: .pem)
        } catch {
            throw .tls(file: files.privateKey.path, reason: "no PEM private key could be read from it (\(error))")
        }
        return .makeServerConfiguration(certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// The router: middleware (log and metrics, CORS, JSON errors, auth), then every route (`Routes.swift`).
    public static func router(_ service: DedogService, logger: Logger) -> Router<BasicRequestContext> {
        let configuration = service.configuration
        let router = Router()
        router.add(middleware: RequestLogMiddleware(logger: logger, metrics: service.metrics))
        if !configuration.corsOrigins.isEmpty {
            router.add(middleware: CORSMiddleware(allowOrigin: .custom(configuration.corsOrigins.joined(separator: " ")),
                                                  allowHeaders: [.accept, .authorization, .contentType, .origin, .acceptLanguage],
                                                  allowMethods: [.get, .post, .delete, .options]))
        }
        router.add(middleware: ErrorMiddleware(logger: logger))
        if let token = configuration.token { router.add(middleware: AuthMiddleware(token: token)) }
        service.addRoutes(to: router)
        return router
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish within the
    /// configuration's `shutdownTimeout`, and returns. The model is warmed up once the port is open;
    /// `/v2/health/ready` answers 200 from then on.
    public static func run(_ service: DedogService, logger: Logger,
                           onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let app = try application(service, logger: logger) { port in
            await onRunning(port)
            Task { await service.warmUp() }
        }
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = service.configuration.shutdownTimeout
        try await ServiceGroup(configuration: group).run()
    }
}
