import Foundation

/// An inverted-residual block: 1×1 expand (ReLU6) → k×k depthwise (ReLU6) → 1×1 project (linear) (+ input).
struct MBConvBlock: Sendable {
    /// Its row of the block table: name, channels, stride, residual.
    let spec: BlockSpec
    let expand: PointwiseConvolution?
    let depthwise: DepthwiseConvolution
    let project: PointwiseConvolution
}

/// An EfficientNet-Lite backbone with BatchNorm folded into the convolutions, built from the block table of the
/// variant the model file's `architecture` names (`Backbone`): photo in, 1280 pooled features out. The network
/// only: the heads on its features, and what they mean, belong to the model file that holds it
/// (`DedogBreedModel`); it is built from a file's tensors by `load(_:from:precision:kernels:threads:)`.
///
/// ```swift
/// var loader = TensorLoader(tensors: try SafeTensors(contentsOf: url))
/// let network = try EfficientNetLite.load(description, from: &loader, threads: 2)
/// let session = network.makeSession(threads: 2)
/// let features = try session.features(input, batch: 1)          // [1 × 1280]
/// ```
public final class EfficientNetLite: Sendable {
    public static let stemChannels = Backbone.stemChannels
    public static let featureCount = Backbone.featureCount
    /// Input sizes (height and width, pixels) the engine takes: below 32 the last stage would see less than one
    /// pixel's worth of the image; above 1024 one image's activations pass a gigabyte.
    public static let inputSizes = 32...1024

    public let backbone: Backbone
    /// The input the network takes: resize, crop and normalisation (checked when its file was read).
    public let input: InputDescription
    let stem: StemConvolution
    /// The float layers after the stem; nil in a network loaded to run in 8 bits only (`Model(tensors:precision:)`).
    let floatLayers: FloatLayers?
    /// The same layers in 8 bits, when the model file has the activation ranges they need.
    let quantized: QuantizedNetwork?
    /// The activation ranges the 8-bit layers were made with (nil: the backbone runs in floats only).
    public let activationRanges: ActivationRanges?
    /// The kernels the network was loaded for, which its sessions run unless told otherwise. The 8-bit layers are the
    /// same for every set, and every set computes them exactly.
    public let byteKernels: KernelSet

    struct FloatLayers: Sendable {
        let blocks: [MBConvBlock]
        let head: PointwiseConvolution
    }

    init(backbone: Backbone, input: InputDescription, stem: StemConvolution, blocks: [MBConvBlock], head: PointwiseConvolution,
         activationRanges: ActivationRanges?, kernels: KernelSet, threads: Int) throws(ModelError) {
        self.backbone = backbone
        self.input = input
        self.stem = stem
        floatLayers = FloatLayers(blocks: blocks, head: head)
        self.activationRanges = activationRanges
        byteKernels = kernels
        quantized = try activationRanges.map { r throws(ModelError) in
            try QuantizedNetwork(stem: stem, input: input, blocks: blocks.map(QuantizedNetwork.BlockWeights.init),
                                 head: .packed(head), ranges: r, threads: threads)
        }
    }

    /// A network that runs in 8 bits only: its layers quantized from `blocks` and `head` with `activationRanges`, on
    /// `threads` threads.
    init(backbone: Backbone, input: InputDescription, stem: StemConvolution, bytesOnly blocks: [QuantizedNetwork.BlockWeights],
         head: PointwiseWeights, activationRanges: ActivationRanges, kernels: KernelSet, threads: Int) throws(ModelError) {
        self.backbone = backbone
        self.input = input
        self.stem = stem
        floatLayers = nil
        self.activationRanges = activationRanges
        byteKernels = kernels
        quantized = try QuantizedNetwork(stem: stem, input: input, blocks: blocks, head: head, ranges: activationRanges,
                                         threads: threads)
    }

    /// The same network with its 8-bit layers made from `ranges` (nil: floats only), e.g. to compare calibrations.
    /// Needs the float layers (not a network loaded for 8 bits only).
    public func withActivationRanges(_ ranges: ActivationRanges?) throws(ModelError) -> EfficientNetLite {
        guard let floatLayers else {
            throw .badInput(detail: "this network was loaded to run in 8 bits only; load it with its float layers to calibrate it again")
        }
        return try EfficientNetLite(backbone: backbone, input: input, stem: stem, blocks: floatLayers.blocks, head: floatLayers.head,
                                    activationRanges: ranges, kernels: byteKernels,
                                    threads: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// The 8-bit 1×1 layers as the kernels read them (panels: header, then weight bytes), in network order.
    @_spi(Testing) public var packedInt8Layers: [[UInt8]] {
        guard let quantized else { return [] }
        return (quantized.blocks.flatMap { [$0.expand?.packed, $0.project.packed].compactMap { $0 } } + [quantized.head.packed]).map(\.bytes)
    }

    /// The 8-bit 1×1 layers' largest |weight| and largest input byte, in network order (expansions, projections, the head).
    @_spi(Testing) public var int8PointwiseOperands: [(kind: String, widestWeight: Int, inputMax: Int)] {
        guard let quantized else { return [] }
        let layers: [(String, QuantizedPointwise?)] = quantized.blocks.flatMap { [("expand", $0.expand), ("project", $0.project)] }
            + [("head", quantized.head)]
        return layers.compactMap { kind, layer in layer.map { (kind: kind, widestWeight: $0.widestWeight, inputMax: $0.inputMax) } }
    }

    /// The precisions this network runs in: fp32 unless loaded for 8 bits only, int8 when it has activation ranges.
    public var precisions: [Precision] { (floatLayers == nil ? [] : [.fp32]) + (quantized == nil ? [] : [.int8]) }

    /// The precision a session asked for `asked` runs in: `asked` where the network has those layers, else the one
    /// it has (a network without activation ranges runs fp32; one loaded for 8 bits only, int8). The one place
    /// that decides it: sessions run it, and front ends report it.
    public func precision(asked: Precision) -> Precision {
        precisions.contains(asked) ? asked : precisions.first ?? .fp32
    }

    /// A session owns the execution plans and scratch memory of forward passes; use one per thread.
    /// `kernels` defaults to the best this CPU runs; `precision` to `Precision.preferred(for: kernels)`. Int8 runs
    /// only where the network has activation ranges, fp32 only where it has its float layers (`precisions`; the
    /// session's `precision` says what it runs).
    public func makeSession(threads: Int = 1, kernels: KernelSet = .best, precision: Precision? = nil) -> InferenceSession {
        InferenceSession(network: self, threads: threads, kernels: kernels, precision: precision ?? .preferred(for: kernels),
                         bandsBlocks: true)
    }

    /// `makeSession`, choosing whether each block runs in horizontal bands (the default) or layer by layer, for
    /// benchmarks and the tests that compare the two.
    @_spi(Benchmarks) public func makeSession(threads: Int = 1, kernels: KernelSet = .best, precision: Precision? = nil,
                                              bandsBlocks: Bool) -> InferenceSession {
        InferenceSession(network: self, threads: threads, kernels: kernels, precision: precision ?? .preferred(for: kernels),
                         bandsBlocks: bandsBlocks)
    }
}
