import DedogConcurrency
import Foundation
import DedogFiles
import DedogNN

/// The model file format, read and written here and nowhere else: a safetensors file whose metadata holds the
/// JSON `ModelDescription` (under `dedog.model`) and whose tensors are named by this codec: each backbone's
/// checkpoint tensors (`_conv_stem.weight`, `_blocks.3._bn1.bias`, …) after its `tensorPrefix`, then its
/// heads, breed prototypes and confirmed photos' features. Reading is strict (every tensor the description
/// needs, with its exact shape, and nothing else); writing loads the result back before it replaces anything.
public enum ModelFile {
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

        public init(base: SafeTensors, source: BackboneDescription, breedWeight: [Float], breedBias: [Float],
                    prototypes: [Float]? = nil) {
            self.base = base
            self.source = source
            self.breedWeight = breedWeight
            self.breedBias = breedBias
            self.prototypes = prototypes
        }
    }

    /// One tensor to write.
    typealias Tensor = (name: String, dtype: String, shape: [Int], bytes: Data)

    // MARK: Tensor names

    /// What the tensors training adds are called, after the backbone's prefix.
    static let breedWeight = "breed_head.weight"
    static let breedBias = "breed_head.bias"
    static let prototypes = "breed_prototypes"
    static let confirmedPhotos = "memory"

    /// The names of backbone `b`'s own tensors among `names` (its convolutions and BatchNorms, not its heads,
    /// prototypes or confirmed photos): those after its prefix that no backbone with a longer prefix claims.
    public static func backboneTensorNames(of model: ModelDescription, _ b: Int, among names: some Sequence<String>) -> [String] {
        guard model.backbones.indices.contains(b) else { return [] }
        let prefix = model.backbones[b].tensorPrefix
        let longer = model.backbones.map(\.tensorPrefix).filter { $0.count > prefix.count }
        let heads = Set(model.backbones.flatMap { [$0.imagenetHead, $0.breedHead] }.compactMap { $0 }.flatMap { [$0.weight, $0.bias] }
                        + model.backbones.flatMap { [$0.prototypes, $0.confirmedPhotos].compactMap { $0 } }
                        + (model.detector?.tensorNames ?? []) + (model.legacyDetector?.tensorNames ?? []))
        return names.filter { $0.hasPrefix(prefix) && !heads.contains($0) && !longer.contains(where: $0.hasPrefix) }.sorted()
    }

    // MARK: Reading

    /// Everything a model file holds, built from its tensors.
    struct Contents {
        var description: ModelDescription
        var networks: [EfficientNetLite]
        var heads: [BackboneHeads]
        var confirmedPhotos: ConfirmedPhotos
        var detector: DogDetector?
    }

    /// Reads every backbone with its heads, strictly: each needs all its tensors under its prefix, and the file
    /// may hold nothing else.
    /// `precision`: int8 builds only the 8-bit layers of the backbones that have activation ranges (no float
    /// layers are packed); nil or fp32, every layer. `kernels`: the kernels the 8-bit layers are made for.
    static func read(_ tensors: SafeTensors, precision: Precision? = nil, kernels: KernelSet = .best) throws(ModelError) -> Contents {
        let description = try ModelDescription(from: tensors)
        // The backbones' networks and heads are built side by side (most of a load is folding, widening and
        // packing their weights), each by a strict loader of its own; the first failure in file order is reported.
        enum Part { case network(EfficientNetLite), heads(BackboneHeads, rows: [Float]?) }
        let backbones = description.backbones
        // Each backbone's 8-bit layers are quantized side by side too, the cores shared among the backbones: inside
        // this map, parallelMap's workers are Dispatch's global queue's and take layers as cores come free (the heads
        // are done long before a network). More workers than cores only made two backbones' load slower.
        let cores = ProcessInfo.processInfo.activeProcessorCount, layerThreads = max(1, cores / backbones.count)
        // Jobs: every backbone's network first (the long ones, started at once), then every backbone's heads.
        let n = backbones.count
        let results = parallelMap(2 * n, threads: min(cores, 2 * n)) { i -> Result<(Part, Set<String>), ModelError> in
            let backbone = backbones[i % n]
            var loader = TensorLoader(tensors: tensors)
            return Result { () throws(ModelError) -> (Part, Set<String>) in
                guard i >= n else {
                    return (.network(try EfficientNetLite.load(backbone.network, from: &loader, precision: precision, kernels: kernels,
                                                                        threads: layerThreads)),
                            loader.used)
                }
                let heads = BackboneHeads(
                    imagenet: try backbone.imagenetHead.map { d throws(ModelError) in try loader.linear(d, role: "ImageNet") },
                    breed: try backbone.breedHead.map { d throws(ModelError) in try loader.linear(d, role: "breed") },
                    prototypes: try backbone.prototypes.map { name throws(ModelError) in
                        try loader.read(name, [backbone.breedHead?.labels.count ?? 0, EfficientNetLite.featureCount], prefixed: false)
                    })
                let rows = try backbone.confirmedPhotos.map { name throws(ModelError) in
                    try loader.read(name, [tensors.entries[name]?.shape.first ?? 0, EfficientNetLite.featureCount], prefixed: false)
                }
                return (.heads(heads, rows: rows), loader.used)
            }
        }
        var loader = TensorLoader(tensors: tensors)
        var networks: [EfficientNetLite] = [], heads: [BackboneHeads] = [], rows: [[Float]] = []
        for part in (0..<n).flatMap({ [results[$0], results[n + $0]] }) {  // in file order: a backbone, then its heads
            let (built, used) = try part.get()
            switch built {
            case let .network(network): networks.append(network)
            case let .heads(backboneHeads, stored):
                heads.append(backboneHeads)
                if let stored { rows.append(stored) }
            }
            loader.used.formUnion(used)
        }
        let detector = try description.detector.map { d throws(ModelError) in
            try readDetector(d, backbone: networks[d.backbone].backbone, from: &loader)
        }
        loader.used.formUnion(description.legacyDetector?.tensorNames ?? [])  // accepted, not run
        try loader.finish()
        let photos = description.confirmedPhotos ?? []
        for (b, stored) in rows.enumerated() where stored.count != photos.count * EfficientNetLite.featureCount {
            throw .invalidValue(file: tensors.file, field: "memory", value: "\(photos.count) entries",
                                requirement: "one per row of backbones[\(b)].memory (\(stored.count / EfficientNetLite.featureCount) rows)")
        }
        return Contents(description: description, networks: networks, heads: heads,
                        confirmedPhotos: ConfirmedPhotos(aligned: photos, features: rows.isEmpty
                                                            ? Array(repeating: [], count: networks.count) : rows),
                        detector: detector)
    }

    /// The detector `d` describes, its tensors' shapes checked against `backbone`'s maps.
    static func readDetector(_ d: DetectorDescription, backbone: Backbone, from loader: inout TensorLoader) throws(ModelError) -> DogDetector {
        var tensors: [[Float]] = []
        for (name, shape) in zip(d.tensorNames, d.tensorShapes(on: backbone)) {
            tensors.append(try loader.read(name, shape, prefixed: false))
        }
        return try DogDetector(d, backbone: backbone, tensors: tensors)
    }

    /// Writes the model file `file` again with the detector of the detector file `detectorFile` (its description
    /// in the metadata under `detectorMetadataKey`, its tensors as `DetectorDescription.tensorNames` names them),
    /// or with none, in place of any it had; every other tensor is copied as stored. The detector must have been
    /// trained on the architecture of the model's first backbone. Atomic, and loaded back first.
    public static func replacingDetector(of file: SafeTensors, model: ModelDescription, with detectorFile: SafeTensors?,
                                         to url: URL) throws(ModelError) {
        var model = model
        let old = Set((model.detector?.tensorNames ?? []) + (model.legacyDetector?.tensorNames ?? []))
        var tensors: [Tensor] = file.entries.keys.sorted().filter { !old.contains($0) }.compactMap { name in
            file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) }
        }
        model.detector = nil
        model.legacyDetector = nil
        if let detectorFile {
            var detector = try detectorDescription(in: detectorFile)
            detector.backbone = 0
            guard let first = model.backbones.first, let backbone = Backbone.named(first.architecture) else {
                throw .invalidMetadata(file: url.path, detail: "the model has no backbone dedog knows")
            }
            for (name, shape) in zip(detector.tensorNames, detector.tensorShapes(on: backbone)) {
                guard let entry = detectorFile.entries[name], entry.shape == shape else {
                    throw .invalidMetadata(file: detectorFile.file, detail: "the detector's tensor \(name) is absent or not \(shape)")
                }
                tensors.append((name, entry.dtype, entry.shape, detectorFile.bytes(of: name)))
            }
            model.detector = detector
        }
        try write(model, tensors: tensors, to: url)
    }

    /// Where a detector file keeps its description (JSON).
    public static let detectorMetadataKey = "dedog.detector"

    /// The description a detector file holds.
    public static func detectorDescription(in file: SafeTensors) throws(ModelError) -> DetectorDescription {
        guard let json = file.metadata[detectorMetadataKey] else {
            throw .invalidMetadata(file: file.file, detail: "no \(detectorMetadataKey) entry: not a dedog detector file")
        }
        do {
            return try JSONDecoder().decode(DetectorDescription.self, from: Data(json.utf8))
        } catch {
            throw .invalidMetadata(file: file.file, detail: "its detector description cannot be read: \(error)")
        }
    }

    /// The one backbone of a model file that holds one (load the file as a `Model` for its heads and answers).
    public static func network(contentsOf url: URL) throws(ModelError) -> EfficientNetLite {
        try network(in: SafeTensors(contentsOf: url))
    }

    /// The one backbone of the model file `tensors` holds, read strictly.
    public static func network(in tensors: SafeTensors) throws(ModelError) -> EfficientNetLite {
        let contents = try read(tensors)
        guard contents.networks.count == 1, let network = contents.networks.first else {
            throw .invalidMetadata(file: tensors.file, detail: "it combines \(contents.networks.count) backbones; "
                                   + "load it as a whole model, not as one network")
        }
        return network
    }

    // MARK: Writing

    /// Writes `model` with `parts[i]` as its backbone i, and `confirmedPhotos` (one feature row per backbone and
    /// photo) if any, to `url`, atomically: an interrupted write leaves the previous file as it was. Each
    /// backbone's tensors keep their names after its `tensorPrefix` in `model`, and its breed head is
    /// `<prefix>breed_head.weight` / `.bias`. The result is checked as a loader would check it, so that nothing is
    /// written that dedog would refuse to load.
    public static func write(_ model: ModelDescription, parts: [Part], confirmedPhotos: ConfirmedPhotos? = nil,
                             to url: URL) throws(ModelError) {
        guard parts.count == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "\(parts.count) backbones given for a description of \(model.backbones.count)")
        }
        let photos = confirmedPhotos.flatMap { $0.isEmpty ? nil : $0 }
        if let photos, photos.backboneCount != parts.count {
            throw .invalidMetadata(file: url.path, detail: "confirmed photos of \(photos.backboneCount) backbones given for a model of \(parts.count)")
        }
        var model = model
        model.confirmedPhotos = photos?.photos
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
            let baseModel = (try? ModelDescription(from: part.base)) ?? ModelDescription(backbones: [part.source])
            guard let index = baseModel.backbones.firstIndex(of: part.source) else {
                throw .invalidMetadata(file: part.base.file, detail: "it holds no such backbone as the one to write")
            }
            let imagenet = [part.source.imagenetHead?.weight, part.source.imagenetHead?.bias].compactMap { $0 }
            func renamed(_ name: String) -> String {
                prefix + (name.hasPrefix(part.source.tensorPrefix) ? name.dropFirst(part.source.tensorPrefix.count) : name[...])
            }
            for name in backboneTensorNames(of: baseModel, index, among: part.base.entries.keys) + imagenet {
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
            model.backbones[b].confirmedPhotos = nil
            if let photos { tensors.append(confirmedPhotoTensor(photos, backbone: b, in: &model)) }
        }
        try write(model, tensors: tensors, to: url)
    }

    /// Writes `file` again with its confirmed photos replaced by `photos`: `model` is its description, and every
    /// other tensor is copied as stored. Atomic, and loaded back first, as `write` does.
    public static func replacingConfirmedPhotos(of file: SafeTensors, model: ModelDescription, with photos: ConfirmedPhotos,
                                                to url: URL) throws(ModelError) {
        guard photos.backboneCount == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "confirmed photos of \(photos.backboneCount) backbones given for a model of \(model.backbones.count)")
        }
        var model = model
        let old = Set(model.backbones.compactMap(\.confirmedPhotos))
        var tensors: [Tensor] = file.entries.keys.sorted().filter { !old.contains($0) }.compactMap { name in
            file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) }
        }
        model.confirmedPhotos = photos.isEmpty ? nil : photos.photos
        for b in model.backbones.indices {
            model.backbones[b].confirmedPhotos = nil
            if !photos.isEmpty { tensors.append(confirmedPhotoTensor(photos, backbone: b, in: &model)) }
        }
        try write(model, tensors: tensors, to: url)
    }

    /// Writes `file` again with `model` as its description and every tensor copied as stored: for a change of
    /// the description alone, such as a backbone's `fit`. Atomic, and loaded back first, as `write` does.
    public static func replacingDescription(of file: SafeTensors, with model: ModelDescription, to url: URL) throws(ModelError) {
        let tensors: [Tensor] = file.entries.keys.sorted().compactMap { name in
            file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) }
        }
        try write(model, tensors: tensors, to: url)
    }

    /// Backbone `b`'s confirmed-photo features as a tensor, named in `model`.
    static func confirmedPhotoTensor(_ photos: ConfirmedPhotos, backbone b: Int, in model: inout ModelDescription) -> Tensor {
        let name = model.backbones[b].tensorPrefix + confirmedPhotos
        model.backbones[b].confirmedPhotos = name
        return (name, "F32", [photos.count, EfficientNetLite.featureCount], raw(photos.features[b]))
    }

    /// Writes `tensors` with `model` as their description, checked and loaded back before the atomic rename.
    static func write(_ model: ModelDescription, tensors: [Tensor], to url: URL) throws(ModelError) {
        // The oldest format that holds the description: a dedog that knows only format 2 would crop a photo the
        // model pads, so such files are format 3, which it refuses as newer.
        var model = model
        let cropsOnly = model.backbones.allSatisfy { $0.preprocessing.fit == .crop }
        let floatsOnly = model.backbones.allSatisfy { $0.activationRanges == nil }
        let int8Temperatures = model.int8CombinedTemperature != nil
            || model.backbones.contains { $0.int8BreedTemperature != nil }
        let taughtOrRule = model.decision.unknownBreed != nil
            || model.backbones.contains { $0.breedHead?.labels.contains { $0.taught != nil } ?? false }
        if !cropsOnly || !floatsOnly || model.formatVersion > 1 || taughtOrRule || model.decision.cat != nil || model.detector != nil
            || model.legacyDetector != nil {
            model.formatVersion = model.detector != nil ? 9 : model.legacyDetector != nil ? 8 : model.decision.cat != nil ? 7 : taughtOrRule ? 6 : int8Temperatures ? 5 : !floatsOnly ? 4 : cropsOnly ? 2 : 3
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

    static func raw(_ values: [Float]) -> Data {
        var bytes = Data(capacity: values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }
}

// MARK: The description in the metadata

extension ModelDescription {
    public static let metadataKey = "dedog.model"

    /// Reads and checks the description in `tensors`' metadata.
    public init(from tensors: SafeTensors) throws(ModelError) {
        let file = tensors.file
        guard let json = tensors.metadata[Self.metadataKey] else {
            throw .invalidMetadata(file: file, detail: "no \"\(Self.metadataKey)\" entry in the safetensors metadata")
        }
        // A newer file is reported as newer, not as malformed: when the description does not decode, or decodes
        // with a version this dedog does not know, its version decides the message. When all is well the JSON is
        // parsed once and read without `Codable` (see ModelDescription+Quick.swift); otherwise `Codable` says what
        // is wrong.
        struct Version: Decodable { var formatVersion: Int }
        func unsupported() -> ModelError? {
            guard let version = try? JSONDecoder().decode(Version.self, from: Data(json.utf8)).formatVersion,
                  !(1...Self.currentVersion).contains(version) else { return nil }
            return .unsupportedVersion(file: file, version: version, supported: Self.currentVersion)
        }
        if let quick = Self.quickly(json) {
            self = quick
        } else {
            do {
                self = try JSONDecoder().decode(ModelDescription.self, from: Data(json.utf8))
            } catch {
                throw unsupported() ?? Self.decodingError(error, file: file)
            }
        }
        try validate(file: file)  // its first check: the version
    }

    fileprivate static func decodingError(_ error: any Error, file: String) -> ModelError {
        switch error {
        case let DecodingError.keyNotFound(key, context):
            return .invalidMetadata(file: file, detail: "missing \(path(context.codingPath + [key]))")
        case let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context):
            return .invalidMetadata(file: file, detail: "wrong type at \(path(context.codingPath))")
        case let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty:
            // A value of the right type that names nothing dedog knows, e.g. `"fit": "zoom"`.
            return .invalidMetadata(file: file, detail: "unknown value at \(path(context.codingPath))")
        default:
            return .invalidMetadata(file: file, detail: "not valid JSON")
        }
    }

}

extension TensorLoader {
    /// A head's layer, its outputs checked against its labels.
    mutating func linear(_ head: HeadDescription, role: String) throws(ModelError) -> Linear {
        guard let entry = tensors.entries[head.weight] else { throw .missingTensor(file: tensors.file, name: head.weight) }
        let outputs = entry.shape.first ?? 0
        guard outputs == head.labels.count else {
            throw .labelCountMismatch(file: tensors.file, head: role, labels: head.labels.count, outputs: outputs)
        }
        return try linear(weight: head.weight, bias: head.bias, outputs: outputs)
    }
}
