import Foundation

/// What the engine needs to build one backbone from a file's tensors: its variant, where its tensors are, the input
/// it takes, its BatchNorm epsilon and, to run in 8 bits, its activations' ranges. A model file's backbone
/// description says all of it, beside the heads the engine knows nothing of.
public struct NetworkDescription: Sendable, Equatable {
    /// `efficientnet-lite0`, `-lite1` or `-lite2` (`Backbone.named`).
    public var architecture: String
    /// What the names of the backbone's tensors start with in the file ("" for the checkpoint's own names).
    public var tensorPrefix: String
    public var input: InputDescription
    public var batchNormEpsilon: Float
    public var activationRanges: ActivationRanges?

    public init(architecture: String, tensorPrefix: String = "", input: InputDescription, batchNormEpsilon: Float = 1e-3,
                activationRanges: ActivationRanges? = nil) {
        self.architecture = architecture
        self.tensorPrefix = tensorPrefix
        self.input = input
        self.batchNormEpsilon = batchNormEpsilon
        self.activationRanges = activationRanges
    }
}

/// What a backbone's own tensors are called, after its prefix, as in the EfficientNet checkpoints.
enum CheckpointNames {
    static let stem = (conv: "_conv_stem.weight", bn: "_bn0")
    static let head = (conv: "_conv_head.weight", bn: "_bn1")
    static func expand(_ block: BlockSpec) -> (conv: String, bn: String) {
        ("_blocks.\(block.index)._expand_conv.weight", "_blocks.\(block.index)._bn0")
    }
    static func depthwise(_ block: BlockSpec) -> (conv: String, bn: String) {
        ("_blocks.\(block.index)._depthwise_conv.weight", "_blocks.\(block.index)._bn1")
    }
    static func project(_ block: BlockSpec) -> (conv: String, bn: String) {
        ("_blocks.\(block.index)._project_conv.weight", "_blocks.\(block.index)._bn2")
    }
}


extension EfficientNetLite {
    /// Builds one backbone from its checkpoint tensors, walking its block table (`Backbone.blocks`): in floats and,
    /// where it has activation ranges, in 8 bits; in 8 bits only when `precision` is int8 and it has them. The 8-bit
    /// layers are made for `kernels` (see `byteKernels`).
    public static func load(_ description: NetworkDescription, from loader: inout TensorLoader,
                            precision: Precision? = nil, kernels: KernelSet = .best, threads: Int) throws(ModelError) -> EfficientNetLite {
        guard let backbone = Backbone.named(description.architecture) else {
            throw .unsupportedArchitecture(file: loader.tensors.file, name: description.architecture)
        }
        loader.prefix = description.tensorPrefix
        loader.epsilon = description.batchNormEpsilon
        let bytesOnly = precision == .int8 ? description.activationRanges : nil
        func pointwise(_ names: (conv: String, bn: String), inputs: Int, outputs: Int,
                       clampsToSix: Bool) throws(ModelError) -> PointwiseWeights {
            bytesOnly == nil
                ? .packed(try loader.pointwise(conv: names.conv, bn: names.bn, inputs: inputs, outputs: outputs, clampsToSix: clampsToSix))
                : .folded(try loader.foldedPointwise(conv: names.conv, bn: names.bn, inputs: inputs, outputs: outputs,
                                                     clampsToSix: clampsToSix))
        }
        let stemChannels = EfficientNetLite.stemChannels
        let stemWeight = try loader.folded(conv: CheckpointNames.stem.conv, bn: CheckpointNames.stem.bn,
                                           shape: [stemChannels, 3, 3, 3])
        let stem = try StemConvolution(inChannels: 3, outChannels: stemChannels, kernel: 3, stride: 2,
                                       weight: stemWeight.weight, bias: stemWeight.bias)
        var blocks: [QuantizedNetwork.BlockWeights] = []
        for spec in backbone.blocks {
            let expand = spec.expands ? try pointwise(CheckpointNames.expand(spec), inputs: spec.inChannels,
                                                      outputs: spec.expandedChannels, clampsToSix: true) : nil
            let k = spec.kernel, names = CheckpointNames.depthwise(spec)
            let d = try loader.folded(conv: names.conv, bn: names.bn, shape: [spec.expandedChannels, 1, k, k])
            let depthwise = try DepthwiseConvolution(channels: spec.expandedChannels, kernel: k, stride: spec.stride,
                                                     weight: d.weight, bias: d.bias)
            let project = try pointwise(CheckpointNames.project(spec), inputs: spec.expandedChannels, outputs: spec.outChannels,
                                        clampsToSix: false)
            blocks.append(.init(spec: spec, expand: expand, depthwise: depthwise, project: project))
        }
        let head = try pointwise(CheckpointNames.head, inputs: backbone.stages.last?.outChannels ?? 0,
                                 outputs: EfficientNetLite.featureCount, clampsToSix: true)
        if let ranges = bytesOnly {
            return try EfficientNetLite(backbone: backbone, input: description.input, stem: stem, bytesOnly: blocks,
                                        head: head, activationRanges: ranges, kernels: kernels, threads: threads)
        }
        // Float layers: every pointwise layer above was packed.
        let floatBlocks = blocks.compactMap { b -> MBConvBlock? in
            guard let project = b.project.layer else { return nil }
            if let expand = b.expand, expand.layer == nil { return nil }
            return MBConvBlock(spec: b.spec, expand: b.expand?.layer, depthwise: b.depthwise, project: project)
        }
        guard floatBlocks.count == blocks.count, let floatHead = head.layer else {
            throw .badInput(detail: "float layers expected for every block")
        }
        return try EfficientNetLite(backbone: backbone, input: description.input, stem: stem, blocks: floatBlocks,
                                    head: floatHead, activationRanges: description.activationRanges, kernels: kernels,
                                    threads: threads)
    }
}

/// Reads a file's tensors by name, strictly (each with its exact shape), folds BatchNorm into the preceding
/// convolution, and remembers what was read so that unused (unexpected) tensors can be reported by `finish`.
///
/// Backbone tensors are named as in the checkpoint, after the backbone's `prefix`; other tensors (heads) by their
/// full names.
public struct TensorLoader {
    public let tensors: SafeTensors
    public var prefix = ""
    public var epsilon: Float = 1e-3
    /// The names of the tensors read so far.
    public var used: Set<String> = []

    public init(tensors: SafeTensors) {
        self.tensors = tensors
    }

    public mutating func read(_ name: String, _ shape: [Int], prefixed: Bool = true) throws(ModelError) -> [Float] {
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
        return try PointwiseConvolution(inChannels: inputs, outChannels: outputs,
                                        weight: tensors.storedFloats(prefix + conv, shape: [outputs, inputs, 1, 1]),
                                        scale: scale, bias: bias, clampsToSix: clampsToSix)
    }

    /// A 1×1 convolution's weights as stored (widened to floats) with its BatchNorm as a scale and bias per
    /// output, not packed: what its 8-bit layer is made from in a network that runs in 8 bits only.
    mutating func foldedPointwise(conv: String, bn: String, inputs: Int, outputs: Int,
                                  clampsToSix: Bool) throws(ModelError) -> FoldedPointwise {
        let (scale, bias) = try batchNorm(bn, channels: outputs)
        used.insert(prefix + conv)
        let weight = try tensors.storedFloats(prefix + conv, shape: [outputs, inputs, 1, 1])
        return FoldedPointwise(inChannels: inputs, outChannels: outputs, weight: weight, scale: scale, bias: bias,
                               clampsToSix: clampsToSix)
    }

    /// A fully-connected layer on the pooled features: `weight` [outputs × 1280] and `bias` [outputs], by their full
    /// names.
    public mutating func linear(weight: String, bias: String, outputs: Int) throws(ModelError) -> Linear {
        let bias = try read(bias, [outputs], prefixed: false)
        used.insert(weight)
        return try Linear(inputs: EfficientNetLite.featureCount, outputs: outputs,
                          weight: tensors.storedFloats(weight, shape: [outputs, EfficientNetLite.featureCount]), bias: bias)
    }

    /// Fails on the first tensor of the file that nothing read.
    public func finish() throws(ModelError) {
        if let extra = tensors.entries.keys.sorted().first(where: { !used.contains($0) }) {
            throw .unexpectedTensor(file: tensors.file, name: extra)
        }
    }
}
