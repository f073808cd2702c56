import Foundation
import DedogFiles

/// Writes model files: the base model's backbone (and ImageNet head) unchanged, plus a trained breed head.
public enum ModelWriter {
    public static let breedWeight = "breed_head.weight"
    public static let breedBias = "breed_head.bias"

    /// Writes `base`'s tensors (without any previous breed head), the new head and `model` to `url`, atomically:
    /// an interrupted write leaves the previous file as it was.
    public static func write(base: SafeTensors, model: ModelDescription, breedWeight weight: [Float], breedBias bias: [Float],
                             to url: URL) throws(FileError) {
        guard let head = model.breedHead else { preconditionFailure("ModelWriter needs a breed head description") }
        precondition(weight.count == head.labels.count * EfficientNetLite.featureCount && bias.count == head.labels.count)
        let old = Set([base.model?.breedHead?.weight, base.model?.breedHead?.bias].compactMap { $0 })
        var tensors: [(name: String, shape: [Int], values: [Float])] = []
        for name in base.entries.keys.sorted() where !old.contains(name) {
            let shape = base.entries[name]!.shape
            tensors.append((name, shape, try! base.floats(name, shape: shape)))  // `base` loaded, so all are F32
        }
        tensors.append((head.weight, [head.labels.count, EfficientNetLite.featureCount], weight))
        tensors.append((head.bias, [head.labels.count], bias))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try! encoder.encode(model), as: UTF8.self)  // plain Codable values cannot fail
        let bytes = try! SafeTensors.encode(tensors, metadata: [ModelDescription.metadataKey: json])
        try AtomicFile.write(bytes, to: url.path)
    }
}

extension SafeTensors {
    /// The model description in this file's metadata, if it has a valid one.
    var model: ModelDescription? { try? ModelDescription(from: self) }
}
