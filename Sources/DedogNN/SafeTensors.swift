import Foundation
import DedogFiles
import DedogKernels

/// A strictly parsed safetensors file: an 8-byte little-endian header length, a JSON header mapping tensor
/// names to dtype, shape and byte range, then the data. Every length, offset and shape is checked against
/// the file before anything is read, and overlapping or out-of-range tensors are refused.
public struct SafeTensors: Sendable {
    public struct Entry: Sendable, Equatable {
        public let dtype: String
        public let shape: [Int]
        public let range: Range<Int>  // within `data`
    }

    public let file: String
    public private(set) var metadata: [String: String]
    public let entries: [String: Entry]
    /// The bytes after the header.
    let data: Data

    /// The same tensors with other metadata (to try model descriptions against real weights without writing a
    /// file; the model-description fuzzer does).
    @_spi(Testing) public func replacingMetadata(_ metadata: [String: String]) -> SafeTensors {
        var copy = self
        copy.metadata = metadata
        return copy
    }

    /// Headers larger than this are refused (a real one is ~100 kB; this stops a length field from
    /// making us allocate gigabytes).
    public static let maxHeaderBytes = 16 << 20

    /// Model files larger than this are refused before reading (EfficientNet-Lite0 with two heads is ~20 MB).
    public static let maxFileBytes = 1 << 30

    public init(contentsOf url: URL) throws(ModelError) {
        let bytes: Data
        do {
            bytes = try FileReader.mappedData(url.path, limit: Self.maxFileBytes)
        } catch {
            throw .unreadable(file: url.path, reason: error.description)
        }
        try self.init(bytes, file: url.path)
    }

    public init(_ bytes: Data, file: String) throws(ModelError) {
        self.file = file
        func bad(_ detail: String) -> ModelError { .malformedHeader(file: file, detail: detail) }
        guard bytes.count >= 8 else { throw bad("file has \(bytes.count) bytes, too short for a header") }
        let headerLength = bytes.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        guard headerLength <= UInt64(Self.maxHeaderBytes) else { throw bad("header length \(headerLength) is absurd") }
        guard headerLength >= 2, 8 + Int(headerLength) <= bytes.count else {
            throw bad("header length \(headerLength) does not fit in the \(bytes.count)-byte file")
        }
        let start = bytes.startIndex
        let headerData = bytes[(start + 8)..<(start + 8 + Int(headerLength))]
        let json: JSONValue
        do {
            json = try headerData.withUnsafeBytes { raw in Result { () throws(JSONError) in try JSONValue.parse(raw) } }.get()
        } catch {
            throw bad("header is not JSON (\(error))")
        }
        guard case let .object(header) = json else { throw bad("header is not a JSON object") }
        data = bytes[(start + 8 + Int(headerLength))...]
        let dataCount = data.count

        var metadata: [String: String] = [:]
        var entries: [String: Entry] = [:]
        for (name, value) in header {
            if name == "__metadata__" {
                guard case let .object(map) = value else { throw bad("__metadata__ must map strings to strings") }
                for (key, entry) in map {
                    guard case let .string(text) = entry else { throw bad("__metadata__ must map strings to strings") }
                    metadata[key] = text
                }
                continue
            }
            guard case let .object(info) = value, case let .string(dtype)? = info["dtype"],
                  case let .array(shapeValues)? = info["shape"], case let .array(offsetValues)? = info["data_offsets"],
                  offsetValues.count == 2 else {
                throw bad("tensor \"\(name)\" needs dtype, shape and two data_offsets")
            }
            let shape = try shapeValues.map { (v: JSONValue) throws(ModelError) -> Int in
                guard let n = v.integer, n >= 0, n <= Int(Int32.max) else { throw bad("tensor \"\(name)\" has an invalid shape") }
                return n
            }
            guard let begin = offsetValues[0].integer, let end = offsetValues[1].integer,
                  begin >= 0, begin <= end, end <= dataCount else {
                throw bad("tensor \"\(name)\" has data_offsets outside the \(dataCount) data bytes")
            }
            var count = 1
            for d in shape {
                let (product, overflow) = count.multipliedReportingOverflow(by: d)
                guard !overflow else { throw bad("tensor \"\(name)\" has a shape whose size overflows") }
                count = product
            }
            let width = Self.byteWidth[dtype] ?? 0
            guard width > 0 else { throw ModelError.wrongDType(file: file, name: name, found: dtype) }
            guard count.multipliedReportingOverflow(by: width).partialValue == end - begin,
                  !count.multipliedReportingOverflow(by: width).overflow else {
                throw bad("tensor \"\(name)\" has \(end - begin) bytes for shape \(shape) of \(dtype)")
            }
            entries[name] = Entry(dtype: dtype, shape: shape, range: begin..<end)
        }
        // Tensors must not overlap (a crafted file could alias one tensor's bytes as another's).
        let ranges = entries.values.map(\.range).filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(ranges, ranges.dropFirst()) where a.upperBound > b.lowerBound {
            throw bad("two tensors share bytes \(b.lowerBound)..<\(a.upperBound)")
        }
        self.metadata = metadata
        self.entries = entries
    }

    /// The values of tensor `name`, which must have `shape`, as float32: stored as F32, or as F16 (half the
    /// size in the file; widened exactly).
    public func floats(_ name: String, shape: [Int]) throws(ModelError) -> [Float] {
        let entry = try floatEntry(name, shape: shape)
        let half = entry.dtype == "F16"
        let count = entry.range.count / (half ? 2 : 4)
        let base = data.startIndex + entry.range.lowerBound
        var finite = true
        let values = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            data[base..<(base + entry.range.count)].withUnsafeBytes { raw in
                // safetensors is little-endian, as is every platform dedog builds for; one copy, then one pass
                // that checks the exponent bits (all ones is NaN or infinity) without branching per value.
                if half {
                    let halves = [UInt16](unsafeUninitializedCapacity: count) { h, n in
                        UnsafeMutableRawBufferPointer(h).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<(count * 2)]))
                        n = count
                    }
                    dedog_f16_to_f32(halves, buffer.baseAddress!, count)
                } else {
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<(count * 4)]))
                }
            }
            finite = UnsafeBufferPointer(buffer).withMemoryRebound(to: UInt32.self) { Self.allFinite($0) }
            initialized = count
        }
        guard finite else { throw .nonFiniteValues(file: file, name: name) }
        return values
    }

    /// Tensor `name`'s values where they lie in the file's bytes (floats, or halves: no widened copy), after the
    /// same checks as `floats(_:shape:)`; widened into a copy only when they are not aligned.
    func storedFloats(_ name: String, shape: [Int]) throws(ModelError) -> StoredFloats {
        let entry = try floatEntry(name, shape: shape)
        let half = entry.dtype == "F16", width = half ? 2 : 4
        let base = data.startIndex + entry.range.lowerBound
        let bytes = data[base..<(base + entry.range.count)]
        let usable = bytes.withUnsafeBytes { raw -> Bool in
            guard let start = raw.baseAddress, Int(bitPattern: start) % width == 0 else { return false }
            if half { return dedog_f16_finite(start.assumingMemoryBound(to: UInt16.self), raw.count / 2) == 1 }
            return Self.allFinite(UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt32.self), count: raw.count / 4))
        }
        if usable { return StoredFloats(bytes: bytes, half: half) }
        // Unaligned, or not finite: the copying path widens, or says which value is wrong.
        let values = try floats(name, shape: shape)
        return StoredFloats(bytes: values.withUnsafeBytes { Data($0) }, half: false)
    }

    /// Tensor `name`'s entry, which must be F32 or F16 of `shape`.
    private func floatEntry(_ name: String, shape: [Int]) throws(ModelError) -> Entry {
        guard let entry = entries[name] else { throw .missingTensor(file: file, name: name) }
        guard entry.dtype == "F32" || entry.dtype == "F16" else { throw .wrongDType(file: file, name: name, found: entry.dtype) }
        guard entry.shape == shape else { throw .wrongShape(file: file, name: name, expected: shape, found: entry.shape) }
        return entry
    }

    /// Whether none of these float32 bit patterns is NaN or infinity (all exponent bits set), in one pass without
    /// a branch per value.
    private static func allFinite(_ bits: UnsafeBufferPointer<UInt32>) -> Bool {
        var special: UInt32 = 0
        for b in bits { special |= UInt32((b & 0x7F80_0000) == 0x7F80_0000 ? 1 : 0) }
        return special == 0
    }

    /// The raw bytes of tensor `name` (empty when there is no such tensor).
    public func bytes(of name: String) -> Data {
        guard let entry = entries[name] else { return Data() }
        let base = data.startIndex + entry.range.lowerBound
        return data[base..<(base + entry.range.count)]
    }

    private static let byteWidth: [String: Int] = [
        "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
    ]

    /// Writes `tensors` (float32, in the given order) and `metadata` as a safetensors file.
    public static func encode(_ tensors: [(name: String, shape: [Int], values: [Float])],
                              metadata: [String: String]) throws -> Data {
        try encode(tensors.map { t in
            var bytes = Data(capacity: t.values.count * 4)
            for v in t.values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
            return (t.name, "F32", t.shape, bytes)
        }, metadata: metadata)
    }

    /// Writes tensors given as little-endian bytes of `dtype` (F32 or F16), in the given order.
    public static func encode(_ tensors: [(name: String, dtype: String, shape: [Int], bytes: Data)],
                              metadata: [String: String]) throws -> Data {
        var header: [String: Any] = ["__metadata__": metadata]
        var offset = 0
        for t in tensors {
            let width = byteWidth[t.dtype] ?? 0
            guard width > 0, t.shape.allSatisfy({ $0 >= 0 }), t.shape.reduce(1, *) * width == t.bytes.count else {
                throw ModelError.wrongShape(file: "(new file)", name: t.name, expected: t.shape, found: [t.bytes.count / max(1, width)])
            }
            header[t.name] = ["dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, offset + t.bytes.count]]
            offset += t.bytes.count
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(0x20) }  // align the data, as the reference writer does
        var out = Data(capacity: 8 + json.count + offset)
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(json)
        for t in tensors { out.append(t.bytes) }
        return out
    }
}

/// A tensor's values as a model file stores them: 32-bit floats, or IEEE halves (`half`), checked finite, in
/// native (little-endian) order.
struct StoredFloats: Sendable {
    let bytes: Data
    let half: Bool

    /// Calls `body` with the values' address (aligned for their type; nil when there are none).
    func withPointer<R>(_ body: (UnsafeRawPointer?) -> R) -> R {
        bytes.withUnsafeBytes { body($0.baseAddress) }
    }
}
