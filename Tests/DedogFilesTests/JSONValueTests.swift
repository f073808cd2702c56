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
