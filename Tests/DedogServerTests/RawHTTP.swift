import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare HTTP/1.1 connection over a POSIX socket, for what a polite client library will not send: bodies cut
/// short, trickled, or larger than they say; headers that never end.
final class RawConnection {
    let fd: Int32

    init(port: Int, host: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.socket("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw RawHTTPError.socket("connect: \(errno)")
        }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `bytes`; false when the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Everything the server sends until it closes the connection (or `timeout` seconds pass); with
    /// `untilComplete`, only until a response with a Content-Length has all its body (servers that say
    /// "Connection: close" and keep the connection open, as chromedriver does).
    func readAll(timeout: Int = 60, untilComplete: Bool = false) -> [UInt8] {
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
            if untilComplete, let head = out.firstRange(of: [13, 10, 13, 10]) {
                let header = String(decoding: out[..<head.lowerBound], as: UTF8.self).lowercased()
                if let line = header.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                   let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
                   out.count - head.upperBound >= length { break }
            }
        }
        return out
    }

    /// Whether the server closed the connection within `timeout` seconds (reads return 0 or a reset).
    func isClosedByServer(within timeout: Int) -> Bool {
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { continue }
            if n == 0 { return true }
            return errno == ECONNRESET
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }
}

enum RawHTTPError: Error { case socket(String) }

/// A parsed HTTP response.
struct RawResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard let end = bytes.indices.first(where: { i in i + 3 < bytes.count && bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 }) else {
            return nil
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = head.first, first.hasPrefix("HTTP/1."), let status = Int(first.split(separator: " ")[1]) else { return nil }
        self.status = status
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        self.headers = headers
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = Self.dechunk(body) }
        else if let length = headers["content-length"].flatMap(Int.init), body.count > length { body = Array(body[..<length]) }
        self.body = body
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }

    /// The `error.code` of dedog's JSON error body.
    var errorCode: String? { ((json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], i = 0
        while i < bytes.count {
            guard let lineEnd = bytes[i...].indices.first(where: { $0 + 1 < bytes.count && bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) else { break }
            if size == 0 { break }
            let start = lineEnd + 2
            out += bytes[start..<min(bytes.count, start + size)]
            i = start + size + 2
        }
        return out
    }
}

/// Builds request bytes.
enum RawRequest {
    static func make(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [],
                     contentLength: Int? = nil) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if method == "POST" || !body.isEmpty { text += "Content-Length: \(contentLength ?? body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }

    /// A multipart/form-data body of `parts` (field name, file name, bytes).
    static func multipart(_ parts: [(name: String, filename: String?, contentType: String, bytes: [UInt8])],
                          boundary: String = "dedog-test-boundary", closed: Bool = true) -> [UInt8] {
        var body: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            if let filename = part.filename { head += "; filename=\"\(filename)\"" }
            head += "\r\nContent-Type: \(part.contentType)\r\n\r\n"
            body += Array(head.utf8) + part.bytes + Array("\r\n".utf8)
        }
        if closed { body += Array("--\(boundary)--\r\n".utf8) }
        return body
    }
}
