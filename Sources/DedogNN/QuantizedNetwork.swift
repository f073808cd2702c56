import DedogConcurrency
import DedogKernels

/// Which arithmetic a session runs the backbone in.
public enum Precision: String, CaseIterable, Sendable, CustomStringConvertible {
    /// 32-bit floats throughout.
    case fp32
    /// 8-bit activations and weights with 32-bit integer sums (`QuantizedNetwork`), where the model file has the
    /// activation ranges it needs; 32-bit floats otherwise.
    case int8

    public var description: String { rawValue }

    /// What runs when nobody says: int8 on every set, so that every CPU gives the same answers: every set computes
    /// the same integers (VNNI's `vpdpbusd`, AVX2's `vpmaddubsw` on one 7-bit operand, the portable build's pairs of
    /// 16-bit products), each faster than its floats (the portable one about as fast on x86-64's SSE2), top-1
    /// within 0.3 points of fp32 (docs/performance.md). The same for every `kernels`; kept as the one place that
    /// says so.
    public static func preferred(for kernels: KernelSet) -> Precision { .int8 }
}

/// A backbone's layers in 8 bits, made at load from the float layers and the activation ranges of its calibration:
/// weights symmetric per output channel, activations unsigned bytes with a scale and zero point for the tensor, or
/// per channel where the ranges give one per channel (the consuming layer folds the scales into its weights; ReLU6
/// outputs start at zero point 0; the stem's output always has one for the tensor).
/// The stem multiplies the photo's pixel bytes (`QuantizedStem`; in floats, storing bytes, for an input whose means
/// are not bytes); expand, depthwise and project layers read and write bytes (ReLU6 and
/// the residual add in their stores); the head reads bytes and writes the floats the pooling averages.
struct QuantizedNetwork: Sendable {
    struct Block: Sendable {
        let expand: QuantizedPointwise?
        let depthwise: QuantizedDepthwise
        let project: QuantizedPointwise
    }

    let stem: StemConvolution
    /// The stem on the photo's pixel bytes, where the input's normalisation allows (otherwise floats, then bytes).
    let byteStem: QuantizedStem?
    /// The encoding of each tensor kept in bytes, by `ActivationRanges` name.
    let encodings: [String: ByteEncoding]
    let blocks: [Block]
    let head: QuantizedPointwise

    /// A block's weights to quantize: its row of the block table and its layers in floats (see `PointwiseWeights`).
    struct BlockWeights: Sendable {
        let spec: BlockSpec
        let expand: PointwiseWeights?
        let depthwise: DepthwiseConvolution
        let project: PointwiseWeights

        init(spec: BlockSpec, expand: PointwiseWeights?, depthwise: DepthwiseConvolution, project: PointwiseWeights) {
            self.spec = spec
            self.expand = expand
            self.depthwise = depthwise
            self.project = project
        }

        init(_ block: MBConvBlock) {
            self.init(spec: block.spec, expand: block.expand.map { .packed($0) }, depthwise: block.depthwise,
                      project: .packed(block.project))
        }
    }

    /// `threads`: how many threads quantize the layers.
    ///
    /// Every layer has one operand in 7 bits, on every set: 7-bit weights (±63) where the input has 8 bits (the
    /// stem on pixel bytes, the expansions, the head), 7-bit inputs (bytes up to 127) where the weights keep 8 bits
    /// (the depthwise layers and the projections, whose inputs are the stem's or an expansion's outputs and the
    /// depthwise layers'; 7-bit weights cost those most). `vpmaddubsw` adds two products of an unsigned and a signed
    /// byte in 16 bits: 2 · 255 · 63 and 2 · 127 · 127 fit, 2 · 255 · 127 does not. So AVX2 and AVX-512 multiply
    /// every layer with one plain `vpmaddubsw`, as ONNX Runtime's u8s8 kernels do, but without their saturation;
    /// the VNNI and portable sets sum the same integers: every CPU gives the same answers (`int8IsTheSameOnEverySet`).
    /// Top-1 on the restored test photos: docs/performance.md (issue 69).
    init(stem: StemConvolution, input: InputDescription, blocks floatBlocks: [BlockWeights], head floatHead: PointwiseWeights,
         ranges: ActivationRanges, threads: Int) throws(ModelError) {
        var encodings: [String: ByteEncoding] = [:]
        func encoding(_ name: String, feedsDepthwiseOrProjection: Bool = false) throws(ModelError) -> ByteEncoding {
            guard let range = ranges.ranges(name) else {
                throw .badInput(detail: "8-bit network: no activation range for \(name)")
            }
            let e = ByteEncoding(range, top: feedsDepthwiseOrProjection ? 127 : 255)
            encodings[name] = e
            return e
        }
        // Every tensor's encoding, in order (a layer reads what the one before wrote); then the layers, each of which
        // needs only its weights and those encodings, quantized side by side: most of an 8-bit load's time.
        struct Layers: Sendable {
            let weights: BlockWeights
            /// The expansion's weights and output, when the block expands.
            let expand: (weights: PointwiseWeights, output: ByteEncoding)?
            let input: ByteEncoding, middle: ByteEncoding, output: ByteEncoding
        }
        var current = try encoding("stem", feedsDepthwiseOrProjection: floatBlocks.first?.expand == nil)
        byteStem = QuantizedStem.fits(stem, input: input) && current.isPerTensor
            ? try QuantizedStem(stem, input: input, output: current, weightLimit: Self.weightLimit(inputTop: 255)) : nil  // pixel bytes
        var layers: [Layers] = []
        for block in floatBlocks {
            let name = block.spec.name
            let expand = try block.expand.map { e throws(ModelError) in
                (weights: e, output: try encoding(name + ".expand", feedsDepthwiseOrProjection: true))
            }
            let middle = try encoding(name + ".depthwise", feedsDepthwiseOrProjection: true), output = try encoding(name)
            layers.append(Layers(weights: block, expand: expand, input: current, middle: middle, output: output))
            current = output
        }
        let headInput = current, jobs = layers
        enum Built: Sendable { case block(Block), head(QuantizedPointwise) }
        let built = parallelMap(jobs.count + 1, threads: threads) { i -> Result<Built, ModelError> in
            Result { () throws(ModelError) -> Built in
                guard i < jobs.count else {
                    return .head(try Self.pointwise(floatHead, input: headInput, output: .floats(clampsToSix: floatHead.clampsToSix)))
                }
                let l = jobs[i], block = l.weights
                let expand = try l.expand.map { e throws(ModelError) in
                    try Self.pointwise(e.weights, input: l.input, output: .bytes(e.output, clampsToSix: true))
                }
                let depthwiseInput = l.expand?.output ?? l.input
                let depthwise = try Self.depthwise(block.depthwise, input: depthwiseInput, output: l.middle)
                let project = try Self.pointwise(block.project, input: l.middle, output: block.spec.hasResidual
                                                 ? .bytesAdding(l.output, residual: l.input) : .bytes(l.output, clampsToSix: false))
                return .block(Block(expand: expand, depthwise: depthwise, project: project))
            }
        }
        var blocks: [Block] = [], head: QuantizedPointwise? = nil
        for result in built {
            switch result {
            case let .success(.block(block)): blocks.append(block)
            case let .success(.head(h)): head = h
            case let .failure(error): throw error
            }
        }
        guard let head, blocks.count == layers.count else { throw .badInput(detail: "8-bit network: a layer is missing") }
        self.stem = stem
        self.head = head
        self.blocks = blocks
        self.encodings = encodings
    }

    /// What a quantized layer's store produces, in real terms.
    enum Output {
        case bytes(ByteEncoding, clampsToSix: Bool)
        case bytesAdding(ByteEncoding, residual: ByteEncoding)
        case floats(clampsToSix: Bool)
    }

    /// A bias at the sums' scale, within ±`limit` (what the kernel takes).
    static func integerBias(_ bias: Float, scale: Float, limit: Int32) -> Int32 {
        let b = (bias / scale).rounded()
        return b.isFinite ? Int32(max(-Float(limit), min(Float(limit), b))) : 0
    }

    /// The store of a layer's output of `channels` channels, and the scale each channel is stored at (1 for floats).
    /// A ReLU6 output with one range for the tensor clamps at the bytes of 0 and 6; with a range per channel, each
    /// from 0 to at most 6, at the bytes' own ends.
    static func store(_ output: Output, channels: Int) -> (QuantizedPointwise.Store, scales: [Float]) {
        switch output {
        case let .bytes(y, clampsToSix):
            let top = clampsToSix && y.isPerTensor ? min(y.top, y.zero + Int((6 / y.scale).rounded())) : y.top
            let low = clampsToSix && y.isPerTensor ? y.zero : 0
            return (.bytes(zero: y.zeros, low: low, high: top), y.perChannel(channels).scales)
        case let .bytesAdding(y, r):
            let (ys, rs) = (y.perChannel(channels), r.perChannel(channels))
            return (.bytesAddingResidual(zero: ys.zeros, low: 0, high: y.top, residualZero: rs.zeros,
                                         residualScale: zip(rs.scales, ys.scales).map { $0 / $1 }), ys.scales)
        case let .floats(clampsToSix):
            return (.floats(clampsToSix: clampsToSix), Array(repeating: 1, count: channels))
        }
    }

    /// The weights' limit of a layer whose inputs reach `inputTop`: 7 bits where the input has 8, so that every
    /// layer has one 7-bit operand (see `init`).
    static func weightLimit(inputTop: Int) -> Int { inputTop > 127 ? 63 : 127 }

    static func pointwise(_ layer: PointwiseWeights, input: ByteEncoding, output: Output) throws(ModelError) -> QuantizedPointwise {
        let (store, scales) = store(output, channels: layer.outChannels)
        let (inputScales, inputZeros) = input.perChannel(layer.inChannels)
        return try QuantizedPointwise(quantizing: layer, inputScale: inputScales, inputZero: inputZeros, outputScale: scales,
                                      store: store, weightLimit: weightLimit(inputTop: input.top), inputMax: input.top)
    }

    static func depthwise(_ layer: DepthwiseConvolution, input: ByteEncoding, output: ByteEncoding) throws(ModelError) -> QuantizedDepthwise {
        let c = layer.channels, taps = layer.kernel * layer.kernel
        let (inputScales, inputZeros) = input.perChannel(c), (outputScales, outputZeros) = output.perChannel(c)
        guard inputZeros.allSatisfy({ $0 == 0 }), outputZeros.allSatisfy({ $0 == 0 }) else {
            throw .badInput(detail: "8-bit depthwise: its input and output must be ReLU6 outputs, ranges from 0")
        }
        // Signed bytes with one scale per channel, w ≈ q · s, q in −L…L, s = max |w| / L over the channel's
        // taps (1 for a zero channel), rounded half away from zero, as `dedog_qpointwise_quantize` does the pointwise
        // layers; kept tap-major as floats, as the kernels read them. A channel whose bias dwarfs its weights
        // (BatchNorm folded into a filter near zero) gets a coarser scale, so that its bias stays within the 2^23 that
        // keeps the float sums exact. Rows of the tap-major weights are read in order: no gathering per channel.
        // L = 127 for the 7-bit inputs every network gives them, 63 for an input in 8 bits (`weightLimit`).
        let limit = Float(weightLimit(inputTop: input.top))
        var top = [Float](repeating: 0, count: c), weightScale = [Float](repeating: 1, count: c)
        layer.tapWeights.withUnsafeBufferPointer { w in
            for t in 0..<taps { for channel in 0..<c { top[channel] = max(top[channel], abs(w[t * c + channel])) } }
        }
        var bias: [Int32] = [], sumScales: [Float] = []
        bias.reserveCapacity(c)
        sumScales.reserveCapacity(c)
        for channel in 0..<c {
            let fits = abs(layer.bias[channel]) / (inputScales[channel] * Float(QuantizedDepthwise.biasLimit / 2))
            let s = max(top[channel] > 0 ? top[channel] / limit : 1, fits)
            weightScale[channel] = s
            sumScales.append(inputScales[channel] * s)
            bias.append(integerBias(layer.bias[channel], scale: inputScales[channel] * s, limit: QuantizedDepthwise.biasLimit))
        }
        let weight = [Float](unsafeUninitializedCapacity: c * taps) { q, initialized in
            layer.tapWeights.withUnsafeBufferPointer { w in
                weightScale.withUnsafeBufferPointer { s in
                    for t in 0..<taps {
                        for channel in 0..<c { q[t * c + channel] = max(-limit, min(limit, (w[t * c + channel] / s[channel]).rounded())) }
                    }
                }
            }
            initialized = c * taps
        }
        guard case let (.bytes(zero, low, high), _) = store(.bytes(output, clampsToSix: true), channels: c) else {
            throw .badInput(detail: "8-bit depthwise: a byte store")
        }
        return try QuantizedDepthwise(channels: c, kernel: layer.kernel, stride: layer.stride, tapWeights: weight, bias: bias,
                                      scale: zip(sumScales, outputScales).map { $0 / $1 }, zero: zero[0], low: low, high: high,
                                      inputMax: input.top)
    }

    /// One image's pass through `plan` (built for bytes), as `InferenceSession` runs the float one: `place` gives each
    /// step's memory (the buffers hold bytes here, floats for the head and the features).
    func run(_ plan: ExecutionPlan, place: (ExecutionPlan.Place) -> UnsafeMutableRawPointer, parallel: Parallel,
             tap: ((String, [Float]) -> Void)?, map: UnsafeMutablePointer<Float>?, keeps: [KeptOutput] = [],
             stepDone: ((Int) -> Void)?) {
        for (index, step) in plan.steps.enumerated() {
            let x = place(step.input), y = place(step.output)
            let pixels = step.height * step.width
            let block = step.layer?.block.map { blocks[$0] }
            switch step.kind {
            case .stem:
                if let byteStem {
                    byteStem.run(x.assumingMemoryBound(to: Float.self), bytes: y.assumingMemoryBound(to: UInt8.self),
                                 height: step.height, width: step.width, parallel: parallel)
                } else if let e = encodings["stem"] {
                    stem.run(x.assumingMemoryBound(to: Float.self), bytes: y.assumingMemoryBound(to: UInt8.self),
                             encoding: e, height: step.height, width: step.width, parallel: parallel)
                }
            case .expand:
                block?.expand?.run(x.assumingMemoryBound(to: UInt8.self), y, pixels: pixels, parallel: parallel)
            case .depthwise:
                block?.depthwise.run(x.assumingMemoryBound(to: UInt8.self), y.assumingMemoryBound(to: UInt8.self),
                                     batch: 1, height: step.height, width: step.width, parallel: parallel)
            case .project:
                block?.project.run(x.assumingMemoryBound(to: UInt8.self), y, pixels: pixels,
                                   residual: step.residual.map { UnsafePointer(place($0).assumingMemoryBound(to: UInt8.self)) },
                                   parallel: parallel)
            case .head:
                head.run(x.assumingMemoryBound(to: UInt8.self), y, pixels: pixels, parallel: parallel)
            case .pool:
                let floats = x.assumingMemoryBound(to: Float.self)
                GlobalAveragePool.run(floats, y.assumingMemoryBound(to: Float.self), channels: step.outChannels, batch: 1,
                                      planeSize: pixels)
                map?.update(from: floats, count: step.outChannels * pixels)
            case .block:
                if case let .block(banded) = step.operation, blocks.indices.contains(banded.spec.index) {
                    blocks[banded.spec.index].runBanded(banded, x.assumingMemoryBound(to: UInt8.self), y.assumingMemoryBound(to: UInt8.self),
                                                        scratch: place(.buffer(2)), parallel: parallel)
                }
            }
            let kept = step.isTap ? keeps.first { $0.step == step.name } : nil
            if step.isTap && tap != nil || kept != nil {
                let count = step.outChannels * step.outHeight * step.outWidth
                let values: [Float]
                if let name = ActivationRanges.name(of: step.kind, layer: step.name), let e = encodings[name] {
                    let bytes = UnsafeBufferPointer(start: y.assumingMemoryBound(to: UInt8.self), count: count)
                    values = bytes.enumerated().map { e.real($1, channel: $0 % step.outChannels) }
                } else {
                    values = Array(UnsafeBufferPointer(start: y.assumingMemoryBound(to: Float.self), count: count))
                }
                kept?.into.update(from: values, count: count)
                if let tap {
                    values.withUnsafeBufferPointer {
                        tap(step.name, Layout.nchw(fromNHWC: $0.baseAddress!, batch: 1, channels: step.outChannels,
                                                   plane: step.outHeight * step.outWidth))
                    }
                }
            }
            stepDone?(index)
        }
    }
}
