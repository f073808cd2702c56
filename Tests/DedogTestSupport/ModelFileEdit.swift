import Foundation

/// Copies of model files with their description edited, for tests of front ends that load models by path. Works on
/// the safetensors bytes themselves (an 8-byte length, the JSON header whose `__metadata__["dedog.model"]` is the
/// description, the tensors), so it needs nothing of dedog's.
public enum ModelFileEdit {
    public enum Failure: Error { case notAModelFile(String) }

    /// Writes `target`: `source` with its description's JSON (parsed) replaced by what `edit` makes of it.
    public static func copy(_ source: URL, to target: URL, editing edit: (Any) -> Any) throws {
        let bytes = try Data(contentsOf: source)
        guard bytes.count >= 8 else { throw Failure.notAModelFile(source.path) }
        let length = bytes.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard length <= bytes.count - 8,
              var header = try JSONSerialization.jsonObject(with: bytes.subdata(in: 8..<(8 + length))) as? [String: Any],
              var metadata = header["__metadata__"] as? [String: String],
              let text = metadata["dedog.model"] else { throw Failure.notAModelFile(source.path) }
        let description = edit(try JSONSerialization.jsonObject(with: Data(text.utf8)))
        metadata["dedog.model"] = String(decoding: try JSONSerialization.data(withJSONObject: description, options: .sortedKeys), as: UTF8.self)
        header["__metadata__"] = metadata
        var json = try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)
        // The tensors stay aligned to 8 bytes.
        while json.count % 8 != 0 { json.append(0x20) }
        var out = Data((0..<8).map { UInt8(truncatingIfNeeded: json.count >> (8 * $0)) })
        out.append(json)
        out.append(bytes.subdata(in: (8 + length)..<bytes.count))
        try out.write(to: target)
    }

    /// A copy of `source` that no longer names the breeds of labels `keys`: in every backbone's breed head their
    /// biases are set to −10,000 (edited in place in the tensor bytes, F32 or F16), so that their probability is
    /// none and their photos are those of breeds outside the model, as the held-out breeds of the unknown-breed
    /// folds are (`scripts/experiments/unknown-breed-folds`).
    public static func withoutBreeds(_ keys: [String], _ source: URL, to target: URL) throws {
        var bytes = try Data(contentsOf: source)
        let length = bytes.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard length <= bytes.count - 8,
              let header = try JSONSerialization.jsonObject(with: bytes.subdata(in: 8..<(8 + length))) as? [String: Any],
              let text = (header["__metadata__"] as? [String: String])?["dedog.model"],
              let description = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let backbones = description["backbones"] as? [[String: Any]] else { throw Failure.notAModelFile(source.path) }
        for backbone in backbones {
            for key in keys {
                guard let head = backbone["breedHead"] as? [String: Any], let name = head["bias"] as? String,
                      let labels = head["labels"] as? [[String: Any]],
                      let row = labels.firstIndex(where: { $0["key"] as? String == key }),
                      let tensor = header[name] as? [String: Any], let offsets = tensor["data_offsets"] as? [Int],
                      let dtype = tensor["dtype"] as? String else { throw Failure.notAModelFile(source.path) }
                let value: [UInt8] = dtype == "F16" ? [0xE2, 0xF0] : withUnsafeBytes(of: Float(-10_000).bitPattern.littleEndian, Array.init)
                let start = 8 + length + offsets[0] + row * value.count
                bytes.replaceSubrange(start..<(start + value.count), with: value)
            }
        }
        try bytes.write(to: target)
    }

    /// A copy of `source` whose every dog is "a breed this model does not know": its rule of the unknown breed
    /// scores every photo below its threshold (format 6).
    public static func answeringEveryDogAsUnknown(_ source: URL, to target: URL) throws {
        try copy(source, to: target) { description in
            let rule: [String: Any] = ["signals": ["p1"], "mean": [0], "scale": [1], "weights": [0], "bias": 0, "below": 1]
            let withRule = JSONEdit.set(rule, at: ["decision", "unknownBreed"], in: description)
            return JSONEdit.set(6, at: ["formatVersion"], in: withRule)
        }
    }
}
