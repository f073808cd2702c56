/// What stops the server from starting.
public enum ServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The OpenAPI document the server publishes is missing from the installation.
    case missingResource(name: String, searched: [String])
    /// The address cannot be opened up without deciding about authentication.
    case openWithoutAuth(host: String)
    /// The TLS certificate or key (`--tls-cert`, `--tls-key`) cannot be used.
    case tls(file: String, reason: String)
    /// Binding or running failed.
    case failed(String)

    public var description: String {
        switch self {
        case let .missingResource(name, searched):
            return "\(name) is in none of \(searched.joined(separator: ", ")); reinstall dedog"
        case let .openWithoutAuth(host):
            return "listening on \(host) lets other machines call the API, and no token was given"
        case let .tls(file, reason):
            return "\(file): \(reason)"
        case let .failed(detail):
            return detail
        }
    }
}
