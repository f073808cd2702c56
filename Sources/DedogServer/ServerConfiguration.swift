import Foundation

/// Everything `dedog serve` can be told: where it listens, who may call it, and the limits that keep one client
/// from taking the machine. The defaults suit a photo manager on the same machine or home network.
public struct ServerConfiguration: Sendable {
    /// The address to bind: loopback unless the user opens it up (which then needs a token or an explicit no-auth).
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests); the one bound is reported to `onRunning`.
    public var port = 8080
    /// When set, every route but health needs `Authorization: Bearer <token>`.
    public var token: String?
    /// Origins a browser may call the API from (CORS); none by default.
    public var corsOrigins: [String] = []
    /// Requests admitted beyond those being classified; past this the server answers 503 with `Retry-After`.
    public var queue = 8
    /// The largest request body (a photo, or all parts of a form).
    public var maxBodyBytes = 50 << 20
    /// The most photos one multipart request may carry.
    public var maxParts = 16
    /// The most breeds a client may ask for (`top_k`).
    public var maxTopK = 200
    /// A request whose body has not arrived within this gets 408; the slot it held is freed.
    public var requestTimeout: Duration = .seconds(20)
    /// A connection with no complete request for this long is closed (slow or forgotten clients).
    public var idleTimeout: Duration = .seconds(30)
    /// On SIGTERM or SIGINT: how long in-flight requests may take to finish before they are cancelled.
    public var shutdownTimeout: Duration = .seconds(10)
    /// The model's name in TorchServe's path, `POST /predictions/<name>`.
    public var modelName = "dedog"
    /// A certificate and its private key (PEM files): the server speaks HTTPS only. Browsers give a page the camera
    /// only over HTTPS or on the machine itself.
    public var tls: TLSFiles?

    public struct TLSFiles: Sendable {
        public var certificate: URL
        public var privateKey: URL
        public init(certificate: URL, privateKey: URL) {
            self.certificate = certificate
            self.privateKey = privateKey
        }
    }
    /// When set, the served model is this file of the user's, and `POST /v1/memory` teaches it confirmed photos
    /// (`dedog learn`), `DELETE /v1/memory/{fingerprint}` undoes that. Never a bundled model.
    public var learnModel: URL?
    /// Quiz files (`dedog quiz make`) the page offers, from `GET /v1/quizzes`.
    public var quizFolder: URL?

    public init() {}

    /// Whether `host` is only reachable from this machine.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
