import Foundation
import DedogImage

/// An inverted-residual block: 1×1 expand (ReLU6) → k×k depthwise (ReLU6) → 1×1 project (linear) (+ input).
struct MBConvBlock: Sendable {
    let expand: PointwiseConvolution?
    let depthwise: DepthwiseConvolution
    let project: PointwiseConvolution
    var hasResidual: Bool { depthwise.stride == 1 && (expand?.inChannels ?? depthwise.channels) == project.outChannels }
}

/// An EfficientNet-Lite backbone with BatchNorm folded into the convolutions, built from the block table of the
/// variant the model file's `architecture` names (`Backbone`).
///
/// ```swift
/// let network = try EfficientNetLite(contentsOf: URL(fileURLWithPath: "models/efficientnet-lite0-imagenet.safetensors"))
/// let session = network.makeSession(threads: 2)
/// let features = try session.features(input, batch: 1)   // [1 × 1280]
/// let logits = network.imagenetHead!(features, batch: 1)  // [1 × 1000]
/// ```
public final class EfficientNetLite: Sendable {
    public static let stemChannels = Backbone.stemChannels
    public static let featureCount = Backbone.featureCount
    /// Input sizes (height and width, pixels) the engine takes: below 32 the last stage would see less than one
    /// pixel's worth of the image; above 1024 one image's activations pass a gigabyte.
    public static let inputSizes = 32...1024

    /// This backbone's part of the model file: architecture, input description, heads.
    public let specification: BackboneDescription
    public let backbone: Backbone
    public let imagenetHead: Linear?
    public let breedHead: Linear?
    /// [breed labels × 1280] unit vectors (see `BackboneDescription.prototypes`).
    public let prototypes: [Float]?
    /// [memory rows × 1280] unit vectors (see `BackboneDescription.memory`).
    public let memory: [Float]?
    let stem: StemConvolution
    let blocks: [MBConvBlock]
    let head: PointwiseConvolution

    /// The input this backbone takes: resize, crop and normalisation.
    public var preprocessing: Preprocessing { specification.preprocessing }

    /// Loads a model file that holds one backbone (use `Model` for files that combine several).
    public convenience init(contentsOf url: URL) throws(ModelError) {
        try self.init(tensors: SafeTensors(contentsOf: url))
    }

    /// Builds the network from a one-backbone model file, strictly: every tensor the architecture needs must be
    /// there with its exact shape and dtype, and nothing else may be.
    public convenience init(tensors: SafeTensors) throws(ModelError) {
        let model = try ModelDescription(from: tensors)
        guard model.backbones.count == 1 else {
            throw .invalidMetadata(file: tensors.file, detail: "it combines \(model.backbones.count) backbones; "
                                   + "load it as a whole model, not as one network")
        }
        var loader = StrictLoader(tensors: tensors)
        try self.init(model.backbones[0], loader: &loader)
        try loader.finish()
    }

    /// Builds one backbone of a model file; `loader` remembers which tensors were read.
    init(_ specification: BackboneDescription, loader: inout StrictLoader) throws(ModelError) {
        guard let backbone = Backbone.named(specification.architecture) else {
            throw .unsupportedArchitecture(file: loader.tensors.file, name: specification.architecture)
        }
        loader.prefix = specification.tensorPrefix
        loader.epsilon = specification.batchNormEpsilon

        let stemWeight = try loader.folded(conv: "_conv_stem.weight", bn: "_bn0",
                                           shape: [Self.stemChannels, 3, 3, 3])
        stem = try StemConvolution(inChannels: 3, outChannels: Self.stemChannels, kernel: 3, stride: 2,
                               weight: stemWeight.weight, bias: stemWeight.bias)
        var blocks: [MBConvBlock] = []
        for (i, stage, cin, stride) in backbone.blocks {
            let mid = cin * stage.expandRatio
            let p = "_blocks.\(i)."
            var expand: PointwiseConvolution? = nil
            if stage.expandRatio != 1 {
                expand = try loader.pointwise(conv: p + "_expand_conv.weight", bn: p + "_bn0", inputs: cin, outputs: mid,
                                              clampsToSix: true)
            }
            let k = stage.kernel
            let d = try loader.folded(conv: p + "_depthwise_conv.weight", bn: p + "_bn1", shape: [mid, 1, k, k])
            let depthwise = try DepthwiseConvolution(channels: mid, kernel: k, stride: stride,
                                                 weight: d.weight, bias: d.bias)
            let project = try loader.pointwise(conv: p + "_project_conv.weight", bn: p + "_bn2", inputs: mid,
                                               outputs: stage.outChannels, clampsToSix: false)
            blocks.append(MBConvBlock(expand: expand, depthwise: depthwise, project: project))
        }
        self.blocks = blocks
        let last = backbone.stages.last!.outChannels
        head = try loader.pointwise(conv: "_conv_head.weight", bn: "_bn1", inputs: last, outputs: Self.featureCount,
                                    clampsToSix: true)
        imagenetHead = try specification.imagenetHead.map { d throws(ModelError) in try loader.linear(d, role: "ImageNet") }
        breedHead = try specification.breedHead.map { d throws(ModelError) in try loader.linear(d, role: "breed") }
        prototypes = try specification.prototypes.map { name throws(ModelError) in
            try loader.read(name, [specification.breedHead?.labels.count ?? 0, Self.featureCount], prefixed: false)
        }
        memory = try specification.memory.map { name throws(ModelError) in
            let rows = loader.tensors.entries[name]?.shape.first ?? 0
            return try loader.read(name, [rows, Self.featureCount], prefixed: false)
        }
        self.specification = specification
        self.backbone = backbone
    }

    /// A session owns the execution plans and scratch memory of forward passes; use one per thread.
    /// `kernels` defaults to the best this CPU runs.
    public func makeSession(threads: Int = 1, kernels: KernelSet = .best) -> InferenceSession {
        InferenceSession(network: self, threads: threads, kernels: kernels, bandsBlocks: true)
    }

    /// `makeSession`, choosing whether each block runs in horizontal bands (the default) or layer by layer, for
    /// benchmarks and the tests that compare the two.
    @_spi(Benchmarks) public func makeSession(threads: Int = 1, kernels: KernelSet = .best, bandsBlocks: Bool) -> InferenceSession {
        InferenceSession(network: self, threads: threads, kernels: kernels, bandsBlocks: bandsBlocks)
    }

    /// This network's input for `image`: its centre crop, then the crop of its mirror image when `mirrored`
    /// (logits are averaged over the views); `views` is the batch to run.
    public func input(for image: RGBImage, mirrored: Bool) throws(ImageError) -> (tensor: [Float], views: Int) {
        let p = preprocessing
        return (try p.tensor(image) + (mirrored ? p.tensor(image, mirrored: true) : []), mirrored ? 2 : 1)
    }
}

/// Reads tensors by name, folds BatchNorm into the preceding convolution, and remembers what was read so
/// that unused (unexpected) tensors can be reported.
///
/// Backbone tensors are named as in the checkpoint, after the backbone's `prefix`; head tensors by their full
/// names in the description.
struct StrictLoader {
    let tensors: SafeTensors
    var prefix = ""
    var epsilon: Float = 1e-3
    var used: Set<String> = []

    init(tensors: SafeTensors) {
        self.tensors = tensors
    }

    mutating func read(_ name: String, _ shape: [Int], prefixed: Bool = true) throws(ModelError) -> [Float] {
        let name = prefixed ? prefix + name : name
        used.insert(name)
        return try tensors.floats(name, shape: shape)
    }

    /// BatchNorm `bn` as a per-channel scale γ/√(σ²+ε) and the folded bias β − μ · γ/√(σ²+ε).
    mutating func batchNorm(_ bn: String, channels c: Int) throws(ModelError) -> (scale: [Double], bias: [Float]) {
        let gamma = try read(bn + ".weight", [c]), beta = try read(bn + ".bias", [c])
        let mean = try read(bn + ".running_mean", [c]), variance = try read(bn + ".running_var", [c])
        var scale = [Double](repeating: 0, count: c), bias = [Float](repeating: 0, count: c)
        for o in 0..<c {
            guard variance[o] + epsilon > 0 else { throw .nonFiniteValues(file: tensors.file, name: prefix + bn + ".running_var") }
            scale[o] = Double(gamma[o]) / (Double(variance[o]) + Double(epsilon)).squareRoot()
            bias[o] = Float(Double(beta[o]) - Double(mean[o]) * scale[o])
        }
        return (scale, bias)
    }

    /// W' = W · γ/√(σ²+ε) per output channel; b' = β − μ · γ/√(σ²+ε).
    mutating func folded(conv: String, bn: String, shape: [Int]) throws(ModelError) -> (weight: [Float], bias: [Float]) {
        var weight = try read(conv, shape)
        let (scale, bias) = try batchNorm(bn, channels: shape[0])
        let perChannel = weight.count / shape[0]
        weight.withUnsafeMutableBufferPointer { w in
            for o in 0..<shape[0] {
                for i in (o * perChannel)..<((o + 1) * perChannel) { w[i] = Float(Double(w[i]) * scale[o]) }
            }
        }
        return (weight, bias)
    }

    /// A 1×1 convolution with its BatchNorm folded in, packed straight from the file's bytes.
    mutating func pointwise(conv: String, bn: String, inputs: Int, outputs: Int,
                            clampsToSix: Bool) throws(ModelError) -> PointwiseConvolution {
        let (scale, bias) = try batchNorm(bn, channels: outputs)
        used.insert(prefix + conv)
        return try tensors.withFloats(prefix + conv, shape: [outputs, inputs, 1, 1]) { w in
            PointwiseConvolution(inChannels: inputs, outChannels: outputs, weight: w.baseAddress!, scale: scale, bias: bias,
                                 clampsToSix: clampsToSix)
        }
    }

    mutating func linear(_ head: HeadDescription, role: String) throws(ModelError) -> Linear {
        guard let entry = tensors.entries[head.weight] else { throw .missingTensor(file: tensors.file, name: head.weight) }
        let outputs = entry.shape.first ?? 0
        guard outputs == head.labels.count else {
            throw .labelCountMismatch(file: tensors.file, head: role, labels: head.labels.count, outputs: outputs)
        }
        let bias = try read(head.bias, [outputs], prefixed: false)
        used.insert(head.weight)
        return try tensors.withFloats(head.weight, shape: [outputs, EfficientNetLite.featureCount]) { w in
            Linear(inputs: EfficientNetLite.featureCount, outputs: outputs, weight: w.baseAddress!, bias: bias)
        }
    }

    func finish() throws(ModelError) {
        if let extra = tensors.entries.keys.sorted().first(where: { !used.contains($0) }) {
            throw .unexpectedTensor(file: tensors.file, name: extra)
        }
    }
}
