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
        /// The breeds' prototypes, [labels × 1280], if any.
        public var prototypes: [Float]?
        /// The memory's rows for this backbone, [model memory entries × 1280], if the model has memory.
        public var memory: [Float]?

        public init(base: SafeTensors, source: BackboneDescription, breedWeight: [Float], breedBias: [Float],
                    prototypes: [Float]? = nil, memory: [Float]? = nil) {
            self.base = base
            self.source = source
            self.breedWeight = breedWeight
            self.breedBias = breedBias
            self.prototypes = prototypes
            self.memory = memory
        }
    }

    /// One tensor to write.
    public typealias Tensor = (name: String, dtype: String, shape: [Int], bytes: Data)

    /// What a backbone's breed head tensors are called, after its prefix.
    public static let breedWeight = "breed_head.weight"
    public static let breedBias = "breed_head.bias"
    public static let prototypes = "breed_prototypes"
    public static let memory = "memory"

    /// Writes `model` with `parts[i]` as its backbone i to `url`, atomically: an interrupted write leaves the
    /// previous file as it was. Tensor names are set here: each backbone's tensors keep their names after its
    /// `tensorPrefix` in `model`, and its breed head is `<prefix>breed_head.weight` / `.bias`. The result is
    /// checked as a loader would check it, so that nothing is written that dedog would refuse to load.
    public static func write(_ model: ModelDescription, parts: [Part], to url: URL) throws(ModelError) {
        guard parts.count == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "\(parts.count) backbones given for a description of \(model.backbones.count)")
        }
        var model = model
        var tensors: [Tensor] = []
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
            model.backbones[b].prototypes = nil
            if let prototypes = part.prototypes {
                guard prototypes.count == part.breedWeight.count else {
                    throw .labelCountMismatch(file: url.path, head: "prototype", labels: head.labels.count,
                                              outputs: prototypes.count / EfficientNetLite.featureCount)
                }
                model.backbones[b].prototypes = prefix + Self.prototypes
                tensors.append((prefix + Self.prototypes, "F32", [head.labels.count, EfficientNetLite.featureCount], raw(prototypes)))
            }
            model.backbones[b].memory = nil
            if let memory = part.memory {
                model.backbones[b].memory = prefix + Self.memory
                tensors.append((prefix + Self.memory, "F32", [memory.count / EfficientNetLite.featureCount,
                                                              EfficientNetLite.featureCount], raw(memory)))
            }
        }
        try write(model, tensors: tensors, to: url)
    }

    /// Writes `file` again with its memory replaced: `model` (its description with the new `memory` entries) and
    /// `memory[b]`, backbone b's rows [entries × 1280]; every other tensor is copied as stored. Atomic, and
    /// loaded back first, as `write` does.
    public static func replacingMemory(of file: SafeTensors, model: ModelDescription, memory: [[Float]],
                                       to url: URL) throws(ModelError) {
        guard memory.count == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "memory for \(memory.count) backbones given for a model of \(model.backbones.count)")
        }
        var model = model
        let old = Set(model.backbones.compactMap(\.memory))
        var tensors: [Tensor] = file.entries.keys.sorted().filter { !old.contains($0) }.compactMap { name in
            file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) }
        }
        let entries = model.memory ?? []
        for b in model.backbones.indices {
            guard !entries.isEmpty else { model.backbones[b].memory = nil; continue }
            let name = model.backbones[b].tensorPrefix + Self.memory
            model.backbones[b].memory = name
            tensors.append((name, "F32", [entries.count, EfficientNetLite.featureCount], raw(memory[b])))
        }
        if entries.isEmpty { model.memory = nil }
        try write(model, tensors: tensors, to: url)
    }

    /// Writes `tensors` with `model` as their description, checked and loaded back before the atomic rename.
    static func write(_ model: ModelDescription, tensors: [Tensor], to url: URL) throws(ModelError) {
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
