/// A JSON document from a stranger, parsed strictly (RFC 8259): one value and nothing after it but white space,
/// strings of valid UTF-8 without raw control characters or lone surrogates, numbers as the grammar writes them and
/// finite, no key twice in an object, and at most `maxDepth` arrays and objects inside one another (so that a
/// document of brackets cannot exhaust the stack).
///
/// For the headers of model files: Foundation's `JSONSerialization` took 5 ms on the default model's 219 kB header,
/// a twentieth of a whole `dedog classify`; this parser reads it in well under a millisecond.
public enum JSONValue: Sendable, Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    /// A number as written (sign, digits, fraction, exponent), read as the type that asks for it (a `Float` from
    /// its digits, not rounded through a `Double`).
    case number(String)
    case bool(Bool)
    case null

    /// How deep arrays and objects may nest by default.
    public static let defaultMaxDepth = 64

    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw JSONError(offset: 0, reason: "no bytes") }
        var parser = Parser(bytes: base, end: bytes.count, maxDepth: maxDepth)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == bytes.count else { throw JSONError(offset: parser.at, reason: "more after the value") }
        return value
    }

    public static func parse(_ bytes: some Sequence<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBytes { raw in Result { () throws(JSONError) in try parse(raw, maxDepth: maxDepth) } }.get()
    }

    /// The value as an integer, if it is a number without a fraction whose magnitude doubles hold exactly (as
    /// `JSONSerialization` read safetensors offsets: 1e3 and 2.0 are integers).
    @inlinable
    public var integer: Int? {
        guard case let .number(text) = self, let d = Double(text), d.rounded() == d, abs(d) < 9.0e15 else { return nil }
        return Int(d)
    }

    /// An integer written as one (digits, perhaps a minus), as `Codable` decoders read `Int`s.
    @inlinable
    public var int: Int? {
        guard case let .number(text) = self else { return nil }
        return Int(text)
    }

    /// A number as the nearest finite `Float` to its digits.
    @inlinable
    public var float: Float? {
        guard case let .number(text) = self, let f = Float(text), f.isFinite else { return nil }
        return f
    }

    /// A number as the nearest `Double` to its digits.
    @inlinable
    public var double: Double? {
        guard case let .number(text) = self else { return nil }
        return Double(text)
    }

    @inlinable
    public var string: String? {
        guard case let .string(s) = self else { return nil }
        return s
    }

    @inlinable
    public var bool: Bool? {
        guard case let .bool(b) = self else { return nil }
        return b
    }

    @inlinable
    public var array: [JSONValue]? {
        guard case let .array(a) = self else { return nil }
        return a
    }

    @inlinable
    public var object: [String: JSONValue]? {
        guard case let .object(o) = self else { return nil }
        return o
    }

    @inlinable
    public var isNull: Bool {
        guard case .null = self else { return false }
        return true
    }

    // Reading typed values by hand, as `Codable` would read them (see DedogNN's ModelDescription+Quick.swift).

    /// An array whose every element `read` reads; nil if it is not an array or one element does not read.
    @inlinable
    public func list<T>(_ read: (JSONValue) -> T?) -> [T]? {
        guard case let .array(elements) = self else { return nil }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let value = read(element) else { return nil }
            result.append(value)
        }
        return result
    }

    /// An object whose every value `read` reads, by key; nil if it is not an object or one value does not read.
    @inlinable
    public func map<T>(_ read: (JSONValue) -> T?) -> [String: T]? {
        guard case let .object(members) = self else { return nil }
        var result: [String: T] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members {
            guard let value = read(member) else { return nil }
            result[key] = value
        }
        return result
    }

    /// An optional field as `Codable` reads one: absent or null is `.some(nil)`; otherwise `read` of it, which is nil
    /// (and so the whole reading fails) when `read` cannot read it.
    @inlinable
    public static func optional<T>(_ value: JSONValue?, _ read: (JSONValue) -> T?) -> T?? {
        guard let value, !value.isNull else { return .some(nil) }
        return read(value).map { .some($0) }
    }
}

/// A JSON document read value by value straight into the caller's types, with `JSONValue.parse`'s strictness (it
/// refuses the same documents) but no tree of values: for large documents read often, such as the breed catalogue,
/// where building and freeing the tree (a dictionary per object) was most of the reading.
///
/// Each reading function takes the next value, which must be of its type; anything else throws, as does a
/// document that is not JSON.
///
/// ```swift
/// let point = try JSONReader.read(bytes) { r throws(JSONError) in
///     var x = 0.0, y = 0.0
///     try r.object { r, key throws(JSONError) in
///         switch key {
///         case "x": x = try r.double()
///         case "y": y = try r.double()
///         default: try r.skip()
///         }
///     }
///     return (x, y)
/// }
/// ```
public struct JSONReader {
    private var parser: Parser
    private var depth = 0

    private init(_ parser: Parser) {
        self.parser = parser
    }

    /// The document `bytes` read by `read`, which must take its one value; only white space may follow it.
    public static func read<T>(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = JSONValue.defaultMaxDepth,
                               _ read: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> T {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw JSONError(offset: 0, reason: "no bytes") }
        var reader = JSONReader(Parser(bytes: base, end: bytes.count, maxDepth: maxDepth))
        let value = try read(&reader)
        reader.parser.skipSpace()
        guard reader.parser.at == bytes.count else { throw JSONError(offset: reader.parser.at, reason: "more after the value") }
        return value
    }

    private func mismatch(_ expected: String) -> JSONError { parser.fail("expected \(expected)") }

    public mutating func string() throws(JSONError) -> String {
        guard try parser.next() == UInt8(ascii: "\"") else { throw mismatch("a string") }
        return try parser.string()
    }

    /// A number as it is written (checked against the grammar, finite as a double).
    private mutating func number() throws(JSONError) -> String {
        let c = try parser.next()
        guard c == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else { throw mismatch("a number") }
        return try parser.number()
    }

    /// An integer written as one (digits, perhaps a minus), as `Codable` decoders read `Int`s.
    public mutating func int() throws(JSONError) -> Int {
        let at = parser.at, text = try number()
        guard let value = Int(text) else { throw JSONError(offset: at, reason: "expected an integer, found \(text)") }
        return value
    }

    /// A number as the nearest `Double` to its digits.
    public mutating func double() throws(JSONError) -> Double {
        let at = parser.at, text = try number()
        guard let value = Double(text) else { throw JSONError(offset: at, reason: "the number \(text) is out of range") }
        return value
    }

    public mutating func bool() throws(JSONError) -> Bool {
        switch try parser.next() {
        case UInt8(ascii: "t"): try parser.literal("true"); return true
        case UInt8(ascii: "f"): try parser.literal("false"); return false
        default: throw mismatch("true or false")
        }
    }

    /// nil for null (consumed), otherwise `read` of the value: as `Codable` reads an optional that is present.
    public mutating func optional<T>(_ read: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> T? {
        guard try parser.next() == UInt8(ascii: "n") else { return try read(&self) }
        try parser.literal("null")
        return nil
    }

    /// An array, each element read by `element`.
    public mutating func array<T>(_ element: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> [T] {
        guard try parser.next() == UInt8(ascii: "[") else { throw mismatch("an array") }
        guard depth < parser.maxDepth else { throw parser.fail("nested deeper than \(parser.maxDepth)") }
        parser.at += 1
        var elements: [T] = []
        if try parser.next() == UInt8(ascii: "]") {
            parser.at += 1
            return elements
        }
        depth += 1
        defer { depth -= 1 }
        while true {
            elements.append(try element(&self))
            if try parser.comma(closing: UInt8(ascii: "]")) { return elements }
        }
    }

    /// An object: `member` is called with each key in turn and must read (or `skip`) its value. A key that appears
    /// twice is an error, as in `JSONValue.parse`.
    public mutating func object(_ member: (inout JSONReader, String) throws(JSONError) -> Void) throws(JSONError) {
        guard try parser.next() == UInt8(ascii: "{") else { throw mismatch("an object") }
        guard depth < parser.maxDepth else { throw parser.fail("nested deeper than \(parser.maxDepth)") }
        parser.at += 1
        if try parser.next() == UInt8(ascii: "}") {
            parser.at += 1
            return
        }
        depth += 1
        defer { depth -= 1 }
        // Most objects have a few keys, which a list searched finds sooner than hashing each key; past 16, a set
        // (a stranger's object of many keys must not take quadratic time).
        var keys: [String] = [], many: Set<String>? = nil
        while true {
            guard try parser.next() == UInt8(ascii: "\"") else { throw parser.fail("expected a key") }
            let keyAt = parser.at
            let key = try parser.string()
            let twice: Bool
            if many != nil {
                twice = !many!.insert(key).inserted
            } else {
                twice = keys.contains(key)
                keys.append(key)
                if keys.count > 16 { many = Set(keys) }
            }
            if twice { throw JSONError(offset: keyAt, reason: "the key \"\(key)\" appears twice") }
            guard try parser.next() == UInt8(ascii: ":") else { throw parser.fail("expected ':'") }
            parser.at += 1
            try member(&self, key)
            if try parser.comma(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// An object whose every value `read` reads, by key.
    public mutating func dictionary<T>(_ read: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> [String: T] {
        var result: [String: T] = [:]
        try object { r, key throws(JSONError) in result[key] = try read(&r) }
        return result
    }

    /// Passes over the next value, checking it as `JSONValue.parse` would.
    public mutating func skip() throws(JSONError) {
        _ = try parser.value(depth: depth)
    }
}

/// Why a document is not JSON, and the byte where that was found.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

private struct Parser {
    let bytes: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var at = 0

    init(bytes: UnsafePointer<UInt8>, end: Int, maxDepth: Int) {
        self.bytes = bytes
        self.end = end
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> JSONError { JSONError(offset: at, reason: reason) }

    mutating func skipSpace() {
        while at < end, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    /// The next byte after white space, not consumed.
    mutating func next() throws(JSONError) -> UInt8 {
        skipSpace()
        guard at < end else { throw fail("the document ends early") }
        return bytes[at]
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        switch try next() {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
            at += 1
            if try next() == UInt8(ascii: "}") {
                at += 1
                return .object([:])
            }
            // The members first, then the dictionary at its final size (no growing on the way).
            var pairs: [(key: String, value: JSONValue, at: Int)] = []
            while true {
                guard try next() == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let keyAt = at
                let key = try string()
                guard try next() == UInt8(ascii: ":") else { throw fail("expected ':'") }
                at += 1
                pairs.append((key, try value(depth: depth + 1), keyAt))
                if try comma(closing: UInt8(ascii: "}")) { break }
            }
            var members = [String: JSONValue](minimumCapacity: pairs.count)
            for pair in pairs where members.updateValue(pair.value, forKey: pair.key) != nil {
                throw JSONError(offset: pair.at, reason: "the key \"\(pair.key)\" appears twice")
            }
            return .object(members)
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth)") }
            at += 1
            var elements: [JSONValue] = []
            if try next() == UInt8(ascii: "]") {
                at += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth + 1))
                if try comma(closing: UInt8(ascii: "]")) { return .array(elements) }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            throw fail("expected a value")
        }
    }

    /// After a member or element: true at the closing bracket (consumed), false after a comma (consumed).
    mutating func comma(closing: UInt8) throws(JSONError) -> Bool {
        let c = try next()
        at += 1
        if c == closing { return true }
        guard c == UInt8(ascii: ",") else {
            at -= 1
            throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
        }
        return false
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let count = word.utf8CodeUnitCount
        guard end - at >= count, (0..<count).allSatisfy({ bytes[at + $0] == word.utf8Start[$0] }) else {
            throw fail("expected a value")
        }
        at += count
    }

    mutating func digits() -> Int {
        let start = at
        while at < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
        return at - start
    }

    /// A number's text, checked against the grammar and finite as a double.
    mutating func number() throws(JSONError) -> String {
        let start = at
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard at < end else { throw fail("a number ends early") }
        if bytes[at] == UInt8(ascii: "0") {
            at += 1
        } else if digits() == 0 {
            throw fail("expected a digit")
        }
        if at < end, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { throw fail("expected a digit after '.'") }
        }
        if at < end, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < end, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { throw fail("expected a digit in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(start: bytes + start, count: at - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONError(offset: start, reason: "the number \(text) is out of range") }
        return text
    }

    /// A string, `at` on its opening quote.
    mutating func string() throws(JSONError) -> String {
        at += 1
        var start = at
        var unescaped: [UInt8]? = nil  // made at the first escape
        var bits: UInt8 = 0  // every byte or-ed: below 0x80, the string is ASCII and so valid UTF-8
        while true {
            guard at < end else { throw fail("a string ends early") }
            let c = bytes[at]
            bits |= c
            if c == UInt8(ascii: "\"") { break }
            if c < 0x20 { throw fail("a control character in a string") }
            guard c == UInt8(ascii: "\\") else {
                at += 1
                continue
            }
            if unescaped == nil { unescaped = [] }
            unescaped!.append(contentsOf: UnsafeBufferPointer(start: bytes + start, count: at - start))
            at += 1
            guard at < end else { throw fail("a string ends early") }
            let e = bytes[at]
            at += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped!.append(e)
            case UInt8(ascii: "b"): unescaped!.append(0x08)
            case UInt8(ascii: "f"): unescaped!.append(0x0C)
            case UInt8(ascii: "n"): unescaped!.append(0x0A)
            case UInt8(ascii: "r"): unescaped!.append(0x0D)
            case UInt8(ascii: "t"): unescaped!.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard end - at >= 2, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                        throw fail("a lone surrogate")
                    }
                    at += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("a lone surrogate")
                }
                guard let s = Unicode.Scalar(scalar) else { throw fail("an invalid \\u escape") }
                unescaped!.append(contentsOf: UTF8.encode(s)!)
            default:
                at -= 1
                throw fail("an invalid escape")
            }
            start = at
        }
        let raw = UnsafeBufferPointer(start: bytes + start, count: at - start)
        at += 1
        let text: String?
        if var unescaped {
            unescaped.append(contentsOf: raw)
            text = String(validating: unescaped, as: UTF8.self)
        } else if bits < 0x80 {
            text = String(decoding: raw, as: UTF8.self)  // ASCII: nothing to check (a tenth of a catalogue's reading)
        } else {
            text = String(validating: raw, as: UTF8.self)
        }
        guard let text else { throw fail("a string that is not UTF-8") }
        return text
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard end - at >= 4 else { throw fail("a \\u escape ends early") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[at]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail("an invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            at += 1
        }
        return value
    }
}
