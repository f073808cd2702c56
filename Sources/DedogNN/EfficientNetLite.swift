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
/// only: its heads, prototypes and confirmed photos belong to the `Model`, and its file to `ModelFile`.
///
/// ```swift
/// let model = try Model(contentsOf: URL(fileURLWithPath: "models/efficientnet-lite0-imagenet.safetensors"))
/// let session = model.backbones[0].makeSession(threads: 2)
/// let features = try session.features(input, batch: 1)          // [1 × 1280]
/// let logits = try model.heads[0].imagenet!(features, batch: 1)  // [1 × 1000]
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
    let blocks: [MBConvBlock]
    let head: PointwiseConvolution
    /// The same layers in 8 bits, when the model file has the activation ranges they need.
    let quantized: QuantizedNetwork?
    /// The activation ranges the 8-bit layers were made with (nil: the backbone runs in floats only).
    public let activationRanges: ActivationRanges?

    init(backbone: Backbone, input: InputDescription, stem: StemConvolution, blocks: [MBConvBlock], head: PointwiseConvolution,
         activationRanges: ActivationRanges?) throws(ModelError) {
        self.backbone = backbone
        self.input = input
        self.stem = stem
        self.blocks = blocks
        self.head = head
        self.activationRanges = activationRanges
        quantized = try activationRanges.map { r throws(ModelError) in
            try QuantizedNetwork(stem: stem, blocks: blocks, head: head, ranges: r)
        }
    }

    private init(_ other: EfficientNetLite) {
        backbone = other.backbone
        input = other.input
        stem = other.stem
        blocks = other.blocks
        head = other.head
        quantized = other.quantized
        activationRanges = other.activationRanges
    }

    /// The same network with its 8-bit layers made from `ranges` (nil: floats only), e.g. to compare calibrations.
    public func withActivationRanges(_ ranges: ActivationRanges?) throws(ModelError) -> EfficientNetLite {
        try EfficientNetLite(backbone: backbone, input: input, stem: stem, blocks: blocks, head: head, activationRanges: ranges)
    }

    /// The precisions this network runs in: fp32 always, int8 when it has activation ranges.
    public var precisions: [Precision] { quantized == nil ? [.fp32] : [.fp32, .int8] }

    /// The backbone of a model file that holds one (load the file as a `Model` for its heads and answers).
    public convenience init(contentsOf url: URL) throws(ModelError) {
        try self.init(tensors: SafeTensors(contentsOf: url))
    }

    /// The backbone of a model file that holds one, read strictly (`ModelFile`).
    public convenience init(tensors: SafeTensors) throws(ModelError) {
        let contents = try ModelFile.read(tensors)
        guard contents.networks.count == 1, let network = contents.networks.first else {
            throw .invalidMetadata(file: tensors.file, detail: "it combines \(contents.networks.count) backbones; "
                                   + "load it as a whole model, not as one network")
        }
        self.init(network)
    }

    /// A session owns the execution plans and scratch memory of forward passes; use one per thread.
    /// `kernels` defaults to the best this CPU runs; `precision` to `Precision.preferred(for: kernels)`. Int8 runs
    /// only where the network has activation ranges (the session's `precision` says what it runs).
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
