import Foundation
import DedogFiles

/// Writes model files: the base model's backbone (and ImageNet head) unchanged, plus a trained breed head.
public enum ModelWriter {
    public static let breedWeight = "breed_head.weight"
    public static let breedBias = "breed_head.bias"

    /// Writes `base`'s tensors (without any previous breed head), the new head and `model` to `url`, atomically:
    /// an interrupted write leaves the previous file as it was. The description is checked as a loader would
    /// check it, so that nothing is written that dedog would refuse to load.
    public static func write(base: SafeTensors, model: ModelDescription, breedWeight weight: [Float], breedBias bias: [Float],
                             to url: URL) throws(ModelError) {
        guard let head = model.breedHead else {
            throw .invalidMetadata(file: url.path, detail: "the model to write has no breed head")
        }
        try model.validate(file: url.path)
        guard weight.count == head.labels.count * EfficientNetLite.featureCount, bias.count == head.labels.count else {
            throw .labelCountMismatch(file: url.path, head: "breed", labels: head.labels.count,
                                      outputs: bias.count)
        }
        let old = Set([base.model?.breedHead?.weight, base.model?.breedHead?.bias].compactMap { $0 })
        // The base's tensors as stored (F16 stays F16, so a model trained on a small base stays small), each
        // checked as a loader would check it.
        var tensors: [(name: String, dtype: String, shape: [Int], bytes: Data)] = []
        for (name, entry) in base.entries.sorted(by: { $0.key < $1.key }) where !old.contains(name) {
            _ = try base.floats(name, shape: entry.shape)
            tensors.append((name, entry.dtype, entry.shape, base.bytes(of: name)))
        }
        func raw(_ values: [Float]) -> Data {
            var bytes = Data(capacity: values.count * 4)
            for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
            return bytes
        }
        tensors.append((head.weight, "F32", [head.labels.count, EfficientNetLite.featureCount], raw(weight)))
        tensors.append((head.bias, "F32", [head.labels.count], raw(bias)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes: Data
        do {
            let json = String(decoding: try encoder.encode(model), as: UTF8.self)
            bytes = try SafeTensors.encode(tensors, metadata: [ModelDescription.metadataKey: json])
        } catch {
            throw .invalidMetadata(file: url.path, detail: "cannot encode the model: \(error)")
        }
        do {
            try AtomicFile.write(bytes, to: url.path)
        } catch {
            throw .cannotWrite(file: url.path, reason: error.description)
        }
    }
}

extension SafeTensors {
    /// The model description in this file's metadata, if it has a valid one.
    var model: ModelDescription? { try? ModelDescription(from: self) }
}
