import Foundation
import Testing
import DedogFiles

/// The strict JSON parser of model-file headers, against Foundation's `JSONSerialization` as the reference on valid
/// documents, and on what RFC 8259 forbids.
@Suite struct JSONValueTests {
    /// Foundation's reading of a document, in this parser's terms.
    static func reference(_ text: String) throws -> JSONValue {
        func convert(_ any: Any) -> JSONValue {
            switch any {
            case let d as [String: Any]: return .object(d.mapValues(convert))
            case let a as [Any]: return .array(a.map(convert))
            case let s as String: return .string(s)
            case is NSNull: return .null
            case let n as NSNumber: return .number("\(n.doubleValue)")  // true and false too: see `numbered`
            default: return .string("unexpected \(type(of: any))")
            }
        }
        return convert(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
    }

    /// `value` with its numbers as doubles print them, and true and false as the numbers 1 and 0, as Foundation
    /// reads them on Linux.
    static func numbered(_ value: JSONValue) -> JSONValue {
        switch value {
        case let .object(o): .object(o.mapValues(numbered))
        case let .array(a): .array(a.map(numbered))
        case let .bool(b): .number(b ? "1.0" : "0.0")
        case let .number(text): .number("\((Double(text) ?? .nan) + 0)")  // -0 is 0, as Foundation reads it
        default: value
        }
    }

    static let valid = [
        #"{"a": [1, -2, 3.5, 1e3, -0.25E-2, 0], "b": {"c": null, "d": true, "e": false}, "": ""}"#,
        #"  [ "tab\tnew\nline", "quote \" slash \/ back \\", "\u00e9\u010D\uD83D\uDC36", "čivava 🐶" ]  "#,
        #"{"_blocks.0._bn1.weight": {"dtype": "F16", "shape": [32], "data_offsets": [0, 64]}, "__metadata__": {"dedog.model": "{\"formatVersion\": 5}"}}"#,
        "[[[[[[[[[[]]]]]]]]]]", "\"\"", "0", "-0", "123456789012345", "{}", "[]", " true ",
    ]

    @Test(arguments: valid)
    func readsWhatFoundationReads(_ text: String) throws {
        let mine = try JSONValue.parse(Array(text.utf8))
        #expect(Self.numbered(mine) == (try Self.reference(text)))
    }

    @Test func readsValuesAsWritten() throws {
        let value = try JSONValue.parse(Array(#"{"shape": [3, 224.0, 1.5], "name": "k\u00e9y", "yes": true, "no": false}"#.utf8))
        guard case let .object(o) = value, case let .array(shape)? = o["shape"] else {
            Issue.record("not an object with an array: \(value)")
            return
        }
        #expect(shape.map(\.integer) == [3, 224, nil])
        #expect(shape.map(\.int) == [3, nil, nil])
        #expect(shape.map(\.float) == [3, 224, 1.5])
        #expect(o["name"]?.string == "kéy")
        #expect(o["yes"] == .bool(true) && o["no"] == .bool(false))
    }

    static let invalid: [(String, [UInt8])] = [
        ("empty", []), ("space only", Array("  ".utf8)), ("open object", Array("{".utf8)), ("trailing comma", Array("[1,]".utf8)),
        ("trailing member comma", Array(#"{"a":1,}"#.utf8)), ("leading zero", Array("01".utf8)), ("bare point", Array("1.".utf8)),
        ("point first", Array(".5".utf8)), ("minus alone", Array("-".utf8)), ("empty exponent", Array("1e".utf8)),
        ("plus sign", Array("+1".utf8)), ("infinite", Array("1e999".utf8)), ("raw control character", [0x22, 0x01, 0x22]),
        ("unknown escape", Array(#""\x""#.utf8)), ("lone high surrogate", Array(#""\ud800""#.utf8)),
        ("lone low surrogate", Array(#""\udc00x""#.utf8)), ("short \\u", Array(#""\u12""#.utf8)),
        ("second value", Array("[1] 2".utf8)), ("duplicate key", Array(#"{"a":1,"a":2}"#.utf8)),
        ("invalid UTF-8", [0x22, 0xFF, 0x22]), ("overlong UTF-8", [0x22, 0xC0, 0xAF, 0x22]), ("truncated true", Array("tru".utf8)),
        ("capital literal", Array("True".utf8)), ("number key", Array("{1:2}".utf8)), ("missing comma", Array("[1 2]".utf8)),
        ("missing colon", Array(#"{"a" 1}"#.utf8)), ("unterminated string", Array(#""abc"#.utf8)), ("NUL after", Array("1".utf8) + [0]),
        ("too deep", Array(String(repeating: "[", count: 65).utf8) + Array(String(repeating: "]", count: 65).utf8)),
        ("brackets only", Array(repeating: UInt8(ascii: "["), count: 1_000_000)),
    ]

    @Test(arguments: invalid)
    func refusesWhatIsNotJSON(_ name: String, _ bytes: [UInt8]) {
        #expect(throws: JSONError.self, "\(name)") { try JSONValue.parse(bytes) }
    }

    @Test func nestsAsDeepAsAllowed() throws {
        let deep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONValue.parse(Array(deep.utf8)) }
        #expect(throws: JSONError.self) { try JSONValue.parse(Array(deep.utf8), maxDepth: 63) }
    }
}

/// The reader that reads JSON straight into typed values: what it reads, and that it refuses what `JSONValue.parse`
/// refuses on each of its paths (objects, arrays, skipped values), and a value of another type.
@Suite struct JSONReaderTests {
    struct Record: Equatable {
        var id = "", count = 0, ratio = 0.0, flag = false, note: String? = "unset", tags: [String] = []
        var names: [String: String] = [:]
    }

    static func record(_ text: String) throws(JSONError) -> Record {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) in
                try JSONReader.read(raw) { r throws(JSONError) in
                    var record = Record()
                    try r.object { r, key throws(JSONError) in
                        switch key {
                        case "id": record.id = try r.string()
                        case "count": record.count = try r.int()
                        case "ratio": record.ratio = try r.double()
                        case "flag": record.flag = try r.bool()
                        case "note": record.note = try r.optional { r throws(JSONError) in try r.string() }
                        case "tags": record.tags = try r.array { r throws(JSONError) in try r.string() }
                        case "names": record.names = try r.dictionary { r throws(JSONError) in try r.string() }
                        default: try r.skip()
                        }
                    }
                    return record
                }
            }
        }.get()
    }

    @Test func readsTypedValues() throws {
        let text = #" {"id": "k\u00e9y \"1\"", "count": -12, "ratio": 25e-1, "flag": true, "note": null, "#
            + #""tags": ["a", "čivava 🐶", ""], "names": {"en": "Beagle", "cs": "bígl"}, "later": [{"x": [1, {}]}, null]} "#
        #expect(try Self.record(text) == Record(id: "kéy \"1\"", count: -12, ratio: 2.5, flag: true, note: nil,
                                                 tags: ["a", "čivava 🐶", ""], names: ["en": "Beagle", "cs": "bígl"]))
        #expect(try Self.record(#"{"note": "here", "tags": []}"#).note == "here")
        #expect(try Self.record("{}") == Record())
    }

    static let refused: [(String, String)] = [
        ("a key twice", #"{"id": "a", "id": "b"}"#),
        ("an unknown key twice", #"{"x": 1, "x": 2}"#),
        ("a key twice among many", "{" + (0..<40).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ") + #", "k3": 0}"#),
        ("a trailing comma in an object", #"{"id": "a",}"#),
        ("a trailing comma in an array", #"{"tags": ["a",]}"#),
        ("a missing colon", #"{"id" "a"}"#),
        ("a fraction for an integer", #"{"count": 1.0}"#),
        ("a string for a number", #"{"ratio": "1"}"#),
        ("null for a string", #"{"id": null}"#),
        ("a number for a bool", #"{"flag": 1}"#),
        ("an object for an array", #"{"tags": {}}"#),
        ("a bad value passed over", #"{"later": [1 2]}"#),
        ("a bad escape passed over", #"{"later": "\x"}"#),
        ("an array, not an object", "[]"),
        ("more after the value", #"{} {}"#),
        ("an infinite number", #"{"ratio": 1e999}"#),
    ]

    @Test(arguments: refused)
    func refuses(_ name: String, _ text: String) {
        #expect(throws: JSONError.self, "\(name)") { try Self.record(text) }
    }

    @Test func refusesInvalidUTF8AndDeepNesting() {
        let invalid: [UInt8] = Array(#"{"id": ""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(throws: JSONError.self) {
            try invalid.withUnsafeBytes { raw in
                try Result { () throws(JSONError) in try JSONReader.read(raw) { r throws(JSONError) in try r.object { r, _ throws(JSONError) in _ = try r.string() } } }.get()
            }
        }
        // Arrays read with `array` count towards the limit, and so do values passed over inside them.
        func nested(_ depth: Int, maxDepth: Int) throws(JSONError) {
            let bytes = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            func read(_ r: inout JSONReader, _ level: Int) throws(JSONError) {
                _ = try r.array { r throws(JSONError) in level < 3 ? try read(&r, level + 1) : try r.skip() }
            }
            try bytes.withUnsafeBytes { raw in
                Result { () throws(JSONError) in try JSONReader.read(raw, maxDepth: maxDepth) { r throws(JSONError) in try read(&r, 1) } }
            }.get()
        }
        #expect(throws: Never.self) { try nested(10, maxDepth: 10) }
        #expect(throws: JSONError.self) { try nested(11, maxDepth: 10) }
    }
}
