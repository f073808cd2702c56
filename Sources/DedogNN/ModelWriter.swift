import Foundation
import DedogFiles

/// Writes model files: each backbone's tensors (and ImageNet head) as its base file stores them, plus a trained
/// breed head per backbone.
public enum ModelWriter {
    /// One backbone of the file to write: where its tensors come from, and its new breed head.
    public struct Part {
        /// The file holding the pretrained backbone (a base model, or any model file).
        public var base: SafeTensors
        /// The backbone's description in `base` (its tensor prefix and heads there).
        public var source: BackboneDescription
        /// The breed head, [labels × 1280] and [labels].
        public var breedWeight: [Float]
        public var breedBias: [Float]

        public init(base: SafeTensors, source: BackboneDescription, breedWeight: [Float], breedBias: [Float]) {
            self.base = base
            self.source = source
            self.breedWeight = breedWeight
            self.breedBias = breedBias
        }
    }

    /// What a backbone's breed head tensors are called, after its prefix.
    public static let breedWeight = "breed_head.weight"
    public static let breedBias = "breed_head.bias"

    /// Writes `model` with `parts[i]` as its backbone i to `url`, atomically: an interrupted write leaves the
    /// previous file as it was. Tensor names are set here: each backbone's tensors keep their names after its
    /// `tensorPrefix` in `model`, and its breed head is `<prefix>breed_head.weight` / `.bias`. The result is
    /// checked as a loader would check it, so that nothing is written that dedog would refuse to load.
    public static func write(_ model: ModelDescription, parts: [Part], to url: URL) throws(ModelError) {
        guard parts.count == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "\(parts.count) backbones given for a description of \(model.backbones.count)")
        }
        var model = model
        var tensors: [(name: String, dtype: String, shape: [Int], bytes: Data)] = []
        for (b, part) in parts.enumerated() {
            let prefix = model.backbones[b].tensorPrefix
            guard var head = model.backbones[b].breedHead else {
                throw .invalidMetadata(file: url.path, detail: "backbone \(b) of the model to write has no breed head")
            }
            guard part.breedWeight.count == head.labels.count * EfficientNetLite.featureCount,
                  part.breedBias.count == head.labels.count else {
                throw .labelCountMismatch(file: url.path, head: "breed", labels: head.labels.count, outputs: part.breedBias.count)
            }
            // The base's tensors as stored (F16 stays F16, so a model trained on a small base stays small); the
            // base's own breed head is replaced. Names move from the base's prefix to the new one. Each tensor is
            // checked once, when the result is loaded back below.
            let baseModel = part.base.model ?? ModelDescription(backbones: [part.source])
            guard let index = baseModel.backbones.firstIndex(of: part.source) else {
                throw .invalidMetadata(file: part.base.file, detail: "it holds no such backbone as the one to write")
            }
            let imagenet = [part.source.imagenetHead?.weight, part.source.imagenetHead?.bias].compactMap { $0 }
            func renamed(_ name: String) -> String {
                prefix + (name.hasPrefix(part.source.tensorPrefix) ? name.dropFirst(part.source.tensorPrefix.count) : name[...])
            }
            for name in baseModel.backboneTensorNames(index, among: part.base.entries.keys) + imagenet {
                guard let entry = part.base.entries[name] else { throw .missingTensor(file: part.base.file, name: name) }
                tensors.append((renamed(name), entry.dtype, entry.shape, part.base.bytes(of: name)))
            }
            if var imagenet = part.source.imagenetHead {
                imagenet.weight = renamed(imagenet.weight)
                imagenet.bias = renamed(imagenet.bias)
                model.backbones[b].imagenetHead = imagenet
            }
            head.weight = prefix + breedWeight
            head.bias = prefix + breedBias
            model.backbones[b].breedHead = head
            tensors.append((head.weight, "F32", [head.labels.count, EfficientNetLite.featureCount], raw(part.breedWeight)))
            tensors.append((head.bias, "F32", [head.labels.count], raw(part.breedBias)))
        }
        try model.validate(file: url.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes: Data
        do {
            let json = String(decoding: try encoder.encode(model), as: UTF8.self)
            bytes = try SafeTensors.encode(tensors, metadata: [ModelDescription.metadataKey: json])
        } catch {
            throw .invalidMetadata(file: url.path, detail: "cannot encode the model: \(error)")
        }
        // Loaded back before it replaces anything: the names, shapes, values and description must make a model.
        do {
            _ = try Model(tensors: SafeTensors(bytes, file: url.path))
        } catch {
            throw .invalidMetadata(file: url.path, detail: "the model to write would not load: \(error.description)")
        }
        do {
            try AtomicFile.write(bytes, to: url.path)
        } catch {
            throw .cannotWrite(file: url.path, reason: error.description)
        }
    }

    private static func raw(_ values: [Float]) -> Data {
        var bytes = Data(capacity: values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }
}

extension SafeTensors {
    /// The model description in this file's metadata, if it has a valid one.
    var model: ModelDescription? { try? ModelDescription(from: self) }
}
