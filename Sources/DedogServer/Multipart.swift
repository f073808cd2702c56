import Foundation
import Hummingbird
import MultipartKit

/// One part of a multipart/form-data body.
struct FormPart: Sendable {
    var name: String?
    var filename: String?
    var contentType: String?
    var body: [UInt8] = []

    /// A form field rather than a photo: text a client sends beside its photos (Immich's `entries`, say).
    var isTextField: Bool {
        guard filename == nil, let type = contentType?.lowercased() else { return false }
        return type.hasPrefix("text/") || type.hasPrefix("application/json")
    }
}

/// Reads a multipart/form-data body as it streams in, bounded: at most `maxParts` parts, `maxBytes` in all,
/// `maxHeaderBytes` of headers per part. A body cut short or with no closing boundary is an error (multipart-kit's
/// parser itself would just wait for more).
struct MultipartReader {
    var maxParts: Int
    var maxBytes: Int
    var maxHeaderBytes = 16 << 10

    /// The boundary of a `multipart/form-data` content type (RFC 2046: 1–70 of its characters).
    static func boundary(contentType: String) -> String? {
        let (type, parameters) = HeaderValue.parse(contentType)
        guard type.lowercased() == "multipart/form-data", let b = parameters["boundary"],
              (1...70).contains(b.utf8.count), b.last != " " else { return nil }
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".utf8)
        return b.utf8.allSatisfy(allowed.contains) ? b : nil
    }

    func read(_ body: RequestBody, boundary: String) async throws(APIError) -> [FormPart] {
        let parser = MultipartParser(boundary: boundary)
        let collector = Collector(maxParts: maxParts, maxHeaderBytes: maxHeaderBytes)
        parser.onHeader = { collector.header($0, $1) }
        parser.onBody = { collector.body(&$0) }
        parser.onPartComplete = { collector.complete() }
        let closing = Array("--\(boundary)--".utf8), keep = closing.count + 8
        var tail: [UInt8] = [], total = 0
        do {
            for try await chunk in body {
                total += chunk.readableBytes
                guard total <= maxBytes else { throw APIError.bodyTooLarge(limit: maxBytes) }
                do {
                    try parser.execute(chunk)
                } catch {
                    throw APIError(.badRequest, code: "badMultipart", message: "the multipart body is malformed (\(error))", field: "body")
                }
                if let failure = collector.failure { throw failure }
                tail.append(contentsOf: chunk.readableBytesView.suffix(keep))
                if tail.count > keep { tail.removeFirst(tail.count - keep) }
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.bodyUnreadable(error)
        }
        while let last = tail.last, [13, 10, 32, 9].contains(last) { tail.removeLast() }
        guard collector.current == nil, tail.suffix(closing.count).elementsEqual(closing) else {
            throw APIError(.badRequest, code: "truncatedMultipart",
                           message: "the multipart body ends before its closing boundary (--\(boundary)--)", field: "body")
        }
        return collector.parts
    }

    /// Gathers parts from the parser's callbacks; lives in one task only.
    private final class Collector {
        let maxParts: Int, maxHeaderBytes: Int
        var parts: [FormPart] = []
        var current: FormPart?
        var headerBytes = 0
        var failure: APIError?

        init(maxParts: Int, maxHeaderBytes: Int) {
            self.maxParts = maxParts
            self.maxHeaderBytes = maxHeaderBytes
        }

        func begin() {
            guard current == nil else { return }
            if parts.count >= maxParts && failure == nil {
                failure = APIError(.contentTooLarge, code: "tooManyParts",
                                   message: "the form has more than \(maxParts) parts (the server's --max-parts)", field: "body")
            }
            current = FormPart()
            headerBytes = 0
        }

        func header(_ name: String, _ value: String) {
            begin()
            headerBytes += name.utf8.count + value.utf8.count
            if headerBytes > maxHeaderBytes && failure == nil {
                failure = APIError(.badRequest, code: "badMultipart", message: "a part's headers are over \(maxHeaderBytes) bytes", field: "body")
            }
            switch name.lowercased() {
            case "content-disposition":
                let (_, parameters) = HeaderValue.parse(value)
                current?.name = parameters["name"]
                current?.filename = parameters["filename"]
            case "content-type":
                current?.contentType = value
            default:
                break
            }
        }

        func body(_ chunk: inout ByteBuffer) {
            begin()
            if failure == nil { current?.body += chunk.readableBytesView }
        }

        func complete() {
            begin()
            if let part = current, failure == nil { parts.append(part) }
            current = nil
        }
    }
}

/// `type/subtype; a=b; c="d;e"` → ("type/subtype", ["a": "b", "c": "d;e"]), parameter names lowercased.
enum HeaderValue {
    static func parse(_ raw: String) -> (value: String, parameters: [String: String]) {
        func trim(_ s: Substring) -> String { s.trimmingCharacters(in: .whitespaces) }
        var segments: [Substring] = [], start = raw.startIndex, quoted = false, escaped = false
        for i in raw.indices {
            let c = raw[i]
            if escaped {
                escaped = false
            } else if quoted && c == "\\" {
                escaped = true
            } else if c == "\"" {
                quoted.toggle()
            } else if c == ";" && !quoted {
                segments.append(raw[start..<i])
                start = raw.index(after: i)
            }
        }
        segments.append(raw[start...])
        var parameters: [String: String] = [:]
        for segment in segments.dropFirst() {
            guard let eq = segment.firstIndex(of: "=") else { continue }
            let key = trim(segment[..<eq]).lowercased()
            var value = trim(segment[segment.index(after: eq)...])
            if value.count >= 2, value.first == "\"", value.last == "\"" {
                var out = "", escape = false
                for c in value.dropFirst().dropLast() {
                    if escape { out.append(c); escape = false } else if c == "\\" { escape = true } else { out.append(c) }
                }
                value = out
            }
            if parameters[key] == nil { parameters[key] = value }
        }
        return (trim(segments[0]), parameters)
    }
}
