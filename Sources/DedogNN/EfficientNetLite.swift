import Foundation

/// One row of the EfficientNet block table: a stage of `repeats` MBConv blocks.
public struct BlockArguments: Sendable, Equatable {
    public var kernel: Int
    public var stride: Int
    public var expandRatio: Int
    public var inChannels: Int
    public var outChannels: Int
    public var repeats: Int

    /// EfficientNet-Lite0: like B0 without squeeze-excitation and swish, stem and head kept at 32 and 1280.
    public static let lite0: [BlockArguments] = [
        .init(kernel: 3, stride: 1, expandRatio: 1, inChannels: 32, outChannels: 16, repeats: 1),
        .init(kernel: 3, stride: 2, expandRatio: 6, inChannels: 16, outChannels: 24, repeats: 2),
        .init(kernel: 5, stride: 2, expandRatio: 6, inChannels: 24, outChannels: 40, repeats: 2),
        .init(kernel: 3, stride: 2, expandRatio: 6, inChannels: 40, outChannels: 80, repeats: 3),
        .init(kernel: 5, stride: 1, expandRatio: 6, inChannels: 80, outChannels: 112, repeats: 3),
        .init(kernel: 5, stride: 2, expandRatio: 6, inChannels: 112, outChannels: 192, repeats: 4),
        .init(kernel: 3, stride: 1, expandRatio: 6, inChannels: 192, outChannels: 320, repeats: 1),
    ]
}

/// An inverted-residual block: 1×1 expand (ReLU6) → k×k depthwise (ReLU6) → 1×1 project (linear) (+ input).
struct MBConvBlock: Sendable {
    let expand: PointwiseConvolution?
    let depthwise: DepthwiseConvolution
    let project: PointwiseConvolution
    var hasResidual: Bool { depthwise.stride == 1 && (expand?.inChannels ?? depthwise.channels) == project.outChannels }
}

/// EfficientNet-Lite0 with BatchNorm folded into the convolutions, built from `BlockArguments.lite0`.
///
/// ```swift
/// let network = try EfficientNetLite(contentsOf: URL(fileURLWithPath: "models/efficientnet-lite0-imagenet.safetensors"))
/// let session = network.makeSession(threads: 2)
/// let features = try session.features(input, batch: 1)   // [1 × 1280]
/// let logits = network.imagenetHead!(features, batch: 1)  // [1 × 1000]
/// ```
public final class EfficientNetLite: Sendable {
    public static let stemChannels = 32
    public static let featureCount = 1280

    public let model: ModelDescription
    public let imagenetHead: Linear?
    public let breedHead: Linear?
    let stem: StemConvolution
    let blocks: [MBConvBlock]
    let head: PointwiseConvolution

    public convenience init(contentsOf url: URL) throws(ModelError) {
        try self.init(tensors: SafeTensors(contentsOf: url))
    }

    /// Builds the network from a model file, strictly: every tensor the architecture needs must be there with
    /// its exact shape and dtype, and nothing else may be.
    public init(tensors: SafeTensors) throws(ModelError) {
        let model = try ModelDescription(from: tensors)
        var loader = StrictLoader(tensors: tensors, epsilon: model.batchNormEpsilon)

        let stemWeight = try loader.folded(conv: "_conv_stem.weight", bn: "_bn0",
                                           shape: [Self.stemChannels, 3, 3, 3])
        stem = StemConvolution(inChannels: 3, outChannels: Self.stemChannels, kernel: 3, stride: 2,
                               weight: stemWeight.weight, bias: stemWeight.bias)
        var blocks: [MBConvBlock] = []
        for stage in BlockArguments.lite0 {
            for r in 0..<stage.repeats {
                let i = blocks.count
                let cin = r == 0 ? stage.inChannels : stage.outChannels
                let mid = cin * stage.expandRatio
                let p = "_blocks.\(i)."
                var expand: PointwiseConvolution? = nil
                if stage.expandRatio != 1 {
                    let f = try loader.folded(conv: p + "_expand_conv.weight", bn: p + "_bn0", shape: [mid, cin, 1, 1])
                    expand = PointwiseConvolution(inChannels: cin, outChannels: mid, weight: f.weight, bias: f.bias,
                                                  clampsToSix: true)
                }
                let k = stage.kernel
                let d = try loader.folded(conv: p + "_depthwise_conv.weight", bn: p + "_bn1", shape: [mid, 1, k, k])
                let depthwise = DepthwiseConvolution(channels: mid, kernel: k, stride: r == 0 ? stage.stride : 1,
                                                     weight: d.weight, bias: d.bias)
                let pr = try loader.folded(conv: p + "_project_conv.weight", bn: p + "_bn2",
                                           shape: [stage.outChannels, mid, 1, 1])
                let project = PointwiseConvolution(inChannels: mid, outChannels: stage.outChannels,
                                                   weight: pr.weight, bias: pr.bias, clampsToSix: false)
                blocks.append(MBConvBlock(expand: expand, depthwise: depthwise, project: project))
            }
        }
        self.blocks = blocks
        let last = BlockArguments.lite0.last!.outChannels
        let h = try loader.folded(conv: "_conv_head.weight", bn: "_bn1", shape: [Self.featureCount, last, 1, 1])
        head = PointwiseConvolution(inChannels: last, outChannels: Self.featureCount, weight: h.weight, bias: h.bias,
                                    clampsToSix: true)
        imagenetHead = try model.imagenetHead.map { d throws(ModelError) in try loader.linear(d, role: "ImageNet") }
        breedHead = try model.breedHead.map { d throws(ModelError) in try loader.linear(d, role: "breed") }
        try loader.finish()
        self.model = model
    }

    /// A session owns the scratch memory of forward passes; use one per thread.
    public func makeSession(threads: Int = 1) -> InferenceSession {
        InferenceSession(network: self, threads: threads)
    }

    /// Number of MBConv blocks (16 for Lite0).
    public var blockCount: Int { blocks.count }
}

/// Reads tensors by name, folds BatchNorm into the preceding convolution, and remembers what was read so
/// that unused (unexpected) tensors can be reported.
private struct StrictLoader {
    let tensors: SafeTensors
    let epsilon: Float
    var used: Set<String> = []

    init(tensors: SafeTensors, epsilon: Float) {
        self.tensors = tensors
        self.epsilon = epsilon
    }

    mutating func read(_ name: String, _ shape: [Int]) throws(ModelError) -> [Float] {
        used.insert(name)
        return try tensors.floats(name, shape: shape)
    }

    /// W' = W · γ/√(σ²+ε) per output channel; b' = β − μ · γ/√(σ²+ε).
    mutating func folded(conv: String, bn: String, shape: [Int]) throws(ModelError) -> (weight: [Float], bias: [Float]) {
        var weight = try read(conv, shape)
        let c = shape[0]
        let gamma = try read(bn + ".weight", [c]), beta = try read(bn + ".bias", [c])
        let mean = try read(bn + ".running_mean", [c]), variance = try read(bn + ".running_var", [c])
        let perChannel = weight.count / c
        var bias = [Float](repeating: 0, count: c)
        for o in 0..<c {
            guard variance[o] + epsilon > 0 else { throw .nonFiniteValues(file: tensors.file, name: bn + ".running_var") }
            let scale = Double(gamma[o]) / (Double(variance[o]) + Double(epsilon)).squareRoot()
            for i in 0..<perChannel { weight[o * perChannel + i] = Float(Double(weight[o * perChannel + i]) * scale) }
            bias[o] = Float(Double(beta[o]) - Double(mean[o]) * scale)
        }
        return (weight, bias)
    }

    mutating func linear(_ head: HeadDescription, role: String) throws(ModelError) -> Linear {
        guard let entry = tensors.entries[head.weight] else { throw .missingTensor(file: tensors.file, name: head.weight) }
        let outputs = entry.shape.first ?? 0
        guard outputs == head.labels.count else {
            throw .labelCountMismatch(file: tensors.file, head: role, labels: head.labels.count, outputs: outputs)
        }
        let weight = try read(head.weight, [outputs, EfficientNetLite.featureCount])
        let bias = try read(head.bias, [outputs])
        return Linear(inputs: EfficientNetLite.featureCount, outputs: outputs, weight: weight, bias: bias)
    }

    func finish() throws(ModelError) {
        if let extra = tensors.entries.keys.sorted().first(where: { !used.contains($0) }) {
            throw .unexpectedTensor(file: tensors.file, name: extra)
        }
    }
}
