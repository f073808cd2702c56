import Foundation
import Testing
import DedogTestSupport

/// Tests/HostileCorpus: inputs a stranger could hand to dedog and what dedog must do with each
/// (written by scripts/make-hostile-corpus, which documents the manifest).
struct HostileEntry: Codable, Sendable, CustomTestStringConvertible {
    enum Kind: String, Codable, Sendable { case photo, model, catalogue, dataset }

    var kind: Kind
    var file: String
    var why: String
    /// The error cases the library may throw ("ok": none).
    var api: [String]
    var exit: Int32
    var message: String
    /// When the CLI says it differently from the library (e.g. a folder named x.jpg is searched, not read).
    var cliMessage: String?
    /// How the test makes an input that cannot be stored in git.
    var make: String?
    var size: Int?
    var head: String?
    var recipe: [String: JSONValue]?
    var dataset: String?
    /// For make "system": a path that exists on every Linux system, such as /dev/zero.
    var path: String?

    var testDescription: String { file }
    var expectsSuccess: Bool { api == ["ok"] }
    var needsUnreadableFile: Bool { make == "unreadable" || dataset == "no-images" || dataset == "traps" }

    static let root = SharedData.packageRoot.appendingPathComponent("Tests/HostileCorpus")

    /// The corpus's entries (test arguments); `manifest()` says why when it cannot be read, and a test fails then.
    static let all: [HostileEntry] = (try? manifest()) ?? []

    static func manifest() throws -> [HostileEntry] {
        let data = try Data(contentsOf: root.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode([String: [HostileEntry]].self, from: data)["entries"] ?? []
    }
}

/// Just enough JSON for recipes.
enum JSONValue: Codable, Sendable, Equatable {
    case string(String), number(Double), bool(Bool), array([JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else { self = .array(try c.decode([JSONValue].self)) }
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .string(s): try c.encode(s)
        case let .number(n): try c.encode(n)
        case let .bool(b): try c.encode(b)
        case let .array(a): try c.encode(a)
        }
    }

    var string: String? { if case let .string(s) = self { return s }; return nil }
    var ints: [Int]? {
        guard case let .array(a) = self else { return nil }
        return a.compactMap { if case let .number(n) = $0 { return Int(n) }; return nil }
    }
}

/// A temporary folder where an entry's input is made; removed by `remove()`.
struct HostileWorkspace {
    let folder: URL

    init(_ label: String) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("dedog-hostile-\(getpid())-\(label.replacingOccurrences(of: "/", with: "_"))")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() {
        // Locked files inside must be unlocked before the folder can go (for a non-root user).
        if let walker = FileManager.default.enumerator(atPath: folder.path) {
            for case let path as String in walker {
                chmod(folder.appendingPathComponent(path).path, 0o755)
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The path of the entry's input, made here if it is not a stored file.
    func input(for entry: HostileEntry) throws -> String {
        let name = URL(fileURLWithPath: entry.file).lastPathComponent
        let target = folder.appendingPathComponent(name)
        if let make = entry.make {
            try Self.make(make, at: target, entry: entry)
            return make == "system" ? entry.path! : target.path
        }
        if let recipe = entry.recipe {
            try HostileModel.make(recipe).write(to: target)
            return target.path
        }
        if let dataset = entry.dataset {
            try Self.makeDataset(dataset, at: target)
            return target.path
        }
        return HostileEntry.root.appendingPathComponent(entry.file).path
    }

    static func make(_ make: String, at target: URL, entry: HostileEntry) throws {
        let fm = FileManager.default
        switch make {
        case "fifo":
            guard mkfifo(target.path, 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
        case "folder":
            try fm.createDirectory(at: target, withIntermediateDirectories: true)
        case "self-link":
            try fm.createSymbolicLink(atPath: target.path, withDestinationPath: target.lastPathComponent)
        case "dangling":
            try fm.createSymbolicLink(atPath: target.path, withDestinationPath: "gone-\(target.lastPathComponent)")
        case "unreadable":
            try fm.copyItem(at: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"), to: target)
            chmod(target.path, 0o000)
        case "sparse":
            // Only the head is written; the rest is a hole that takes no disk space.
            let head = hexBytes(entry.head ?? "")
            fm.createFile(atPath: target.path, contents: Data(head))
            guard truncate(target.path, off_t(entry.size!)) == 0 else { throw CocoaError(.fileWriteUnknown) }
        case "system":
            break  // a path that exists on every Linux system, e.g. /dev/zero
        default:
            fatalError("unknown make \(make) in the hostile corpus manifest")
        }
    }

    /// Small ImageFolder trees; "traps" puts the file system's traps beside real photos.
    static func makeDataset(_ kind: String, at root: URL) throws {
        let fm = FileManager.default
        let fixtures = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures")
        func folder(_ name: String) throws -> URL {
            let url = root.appendingPathComponent(name)
            try fm.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }
        func photos(_ names: [String], into url: URL) throws {
            for name in names { try fm.copyItem(at: fixtures.appendingPathComponent(name), to: url.appendingPathComponent(name)) }
        }
        func traps(in a: URL, _ b: URL) throws {
            guard mkfifo(a.appendingPathComponent("pipe.jpg").path, 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
            try fm.createSymbolicLink(atPath: a.appendingPathComponent("loop").path, withDestinationPath: "..")
            try fm.createSymbolicLink(atPath: b.appendingPathComponent("self.jpg").path, withDestinationPath: "self.jpg")
            try Data().write(to: b.appendingPathComponent("empty.jpg"))
            try Data("notes".utf8).write(to: b.appendingPathComponent("locked.txt"))
            chmod(b.appendingPathComponent("locked.txt").path, 0o000)
            try fm.createDirectory(at: a.appendingPathComponent("folder.jpg"), withIntermediateDirectories: true)
        }
        switch kind {
        case "empty":
            try fm.createDirectory(at: root, withIntermediateDirectories: true)
        case "one-class":
            try photos(["jpeg-baseline.jpg", "png-rgb8.png"], into: folder("beagle"))
        case "no-images":
            try traps(in: folder("beagle"), folder("pug"))
        case "file":
            try Data("not a folder".utf8).write(to: root)
        case "traps":
            let a = try folder("beagle"), b = try folder("pug")
            try photos(["jpeg-baseline.jpg", "jpeg-grey.jpg", "jpeg-progressive.jpg"], into: a)
            try photos(["png-rgb8.png", "png-grey8.png", "png-palette8.png"], into: b)
            try traps(in: a, b)
        default:
            fatalError("unknown dataset \(kind) in the hostile corpus manifest")
        }
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
    }
}

/// Edits of the bundled model file, done on its safetensors header and bytes (not through dedog's own writer,
/// which would refuse to write most of them).
enum HostileModel {
    static func make(_ recipe: [String: JSONValue]) throws -> Data {
        let bytes = try Data(contentsOf: SharedData.packageRoot.appendingPathComponent(recipe["base"]!.string!))
        let length = Int(bytes.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) })
        var header = try JSONSerialization.jsonObject(with: bytes[8..<(8 + length)]) as! [String: Any]
        let data = bytes[(8 + length)...]

        if let name = recipe["tensor"]?.string {
            guard var tensor = header[name] as? [String: Any] else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "recipe names no tensor \(name)"])
            }
            if let dtype = recipe["dtype"]?.string { tensor["dtype"] = dtype }
            if let shape = recipe["shape"]?.ints { tensor["shape"] = shape }
            header[name] = recipe["drop"] == .bool(true) ? nil : tensor
        }
        if let edit = recipe["metadata"]?.string {
            var metadata = header["__metadata__"] as! [String: String]
            var model = try JSONSerialization.jsonObject(with: Data(metadata["dedog.model"]!.utf8)) as! [String: Any]
            switch edit {
            case "drop-last-imagenet-label":
                // Format 1 has the backbone's fields at the top level, later formats under backbones.0.
                let at = model["backbones"] == nil ? [String]() : ["backbones", "0"]
                let labels = at.reduce(model as Any) { ($1 == "0" ? ($0 as? [Any])?.first : ($0 as? [String: Any])?[$1]) as Any }
                let head = (labels as? [String: Any])?["imagenetHead"] as? [String: Any]
                model = JSONEdit.set(Array((head?["labels"] as? [Any] ?? []).dropLast()), at: at + ["imagenetHead", "labels"],
                                     in: model) as! [String: Any]
            case "format-version-99": model["formatVersion"] = 99
            case "architecture-resnet50":
                model = JSONEdit.set("resnet50", at: (model["backbones"] == nil ? [] : ["backbones", "0"]) + ["architecture"],
                                     in: model) as! [String: Any]
            case "set":
                let value = try JSONSerialization.jsonObject(with: Data(recipe["json"]!.string!.utf8), options: .fragmentsAllowed)
                model = JSONEdit.set(value, at: recipe["path"]!.string!.split(separator: ".").map(String.init), in: model) as! [String: Any]
            default: fatalError("unknown metadata edit \(edit)")
            }
            metadata["dedog.model"] = String(decoding: try JSONSerialization.data(withJSONObject: model), as: UTF8.self)
            header["__metadata__"] = metadata
        }

        // Repack the tensors that remain, so that a dropped one leaves no hole.
        var packed = Data()
        for name in header.keys.sorted() where name != "__metadata__" {
            var tensor = header[name] as! [String: Any]
            let offsets = tensor["data_offsets"] as! [Int]
            var chunk = data[(data.startIndex + offsets[0])..<(data.startIndex + offsets[1])]
            if name == recipe["tensor"]?.string, let value = recipe["value"]?.string {
                let bad: Float = value == "nan" ? .nan : .infinity
                var edited = Data(chunk)
                withUnsafeBytes(of: bad.bitPattern.littleEndian) { edited.replaceSubrange(0..<4, with: $0) }
                chunk = edited[...]
            }
            tensor["data_offsets"] = [packed.count, packed.count + chunk.count]
            packed.append(chunk)
            header[name] = tensor
        }
        let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        var out = Data()
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { out.append(contentsOf: $0) }
        return out + json + packed
    }
}
