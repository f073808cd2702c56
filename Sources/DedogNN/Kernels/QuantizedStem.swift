import DedogKernels

/// The first convolution in bytes, on the pixel bytes the photo was normalised from: the counterpart of
/// `StemConvolution` in the 8-bit engine (3×3, stride 2, 3 → 32 channels, TF-SAME). The input's mean and 1/std are
/// folded into signed 8-bit weights (one scale per output channel) and int32 biases, so the sums are exact integers
/// of pixel bytes, and the border TF-SAME pads with zeros is a border of the mean's bytes. Each output byte is
/// round((Σ q·p + bias) · scale) + zero, clamped to low…high (ReLU6 as a clamp, see `dedog_qstem`).
public struct QuantizedStem: Sendable {
    public let mean: [Float]
    public let std: [Float]
    public let zero: Int
    public let low: Int
    public let high: Int
    /// [32 × 3 × 3 × 3] (output, channel, row, column): the weights per pixel byte.
    public let weights: [Int8]
    /// Per output: the sums of a window of the mean's bytes taken away, the layer's bias added.
    public let bias: [Int32]
    /// Per output: what its sum is multiplied by in the store.
    public let scale: [Float]
    /// Weights, biases and scales as `dedog_qstem_pack` lays them out.
    let packed: AlignedBytes

    /// The largest bias magnitude: with 27 taps of 255 · 127 beside it every sum stays below 2^24, where floats
    /// hold every integer.
    static let biasLimit = Int32(1 << 22)

    /// Whether `stem` and `input` can run in bytes: the stem's shape, and means that are bytes (the border value)
    /// with positive, finite spreads.
    public static func fits(_ stem: StemConvolution, input: InputDescription) -> Bool {
        stem.inChannels == 3 && stem.kernel == 3 && stem.stride == 2 && stem.outChannels == Int(DEDOG_QSTEM_OUTPUTS)
            && input.mean.count == 3 && input.std.count == 3
            && input.mean.allSatisfy { $0 >= 0 && $0 <= 255 && $0 == $0.rounded() }
            && input.std.allSatisfy { $0.isFinite && $0 > 0 }
    }

    /// `stem`'s float weights made to multiply pixel bytes, for outputs stored as bytes over `outputRange` (ReLU6 as
    /// the clamp).
    public init(_ stem: StemConvolution, input: InputDescription, outputRange: ClosedRange<Float>,
                weightLimit: Int = 127) throws(ModelError) {
        try self.init(stem, input: input, output: ByteEncoding([outputRange]), weightLimit: weightLimit)
    }

    /// `stem`'s float weights ([32 × 3 × 3 × 3], in units of the normalised input) made to multiply pixel bytes, for
    /// outputs stored in `output` (its ReLU6 as the clamp), with weights within ±`weightLimit` (127, or 63: see
    /// `QuantizedNetwork.init`).
    init(_ stem: StemConvolution, input: InputDescription, output: ByteEncoding, weightLimit: Int = 127) throws(ModelError) {
        guard Self.fits(stem, input: input), output.isPerTensor, output.scale.isFinite, output.scale > 0 else {
            throw .badInput(detail: "8-bit stem: needs a 3×3 stride-2 stem of 32 channels, byte means and a per-tensor encoding")
        }
        let outputs = stem.outChannels, taps = 27, limit = Float(max(1, min(127, weightLimit)))
        var weights = [Int8](repeating: 0, count: outputs * taps), bias: [Int32] = [], scale: [Float] = []
        for o in 0..<outputs {
            // w / std per input channel: what a pixel byte's step is worth; the scale keeps q within ±limit and the
            // bias within its limit (a channel whose bias dwarfs its weights gets a coarser scale).
            let v = (0..<taps).map { t in stem.weight[o * taps + t] / input.std[t / 9] }
            let top = v.map(abs).max() ?? 0
            let s = max(top > 0 ? top / limit : 1, abs(stem.bias[o]) / Float(Self.biasLimit / 2))
            var meanSum: Float = 0
            for t in 0..<taps {
                let q = max(-limit, min(limit, (v[t] / s).rounded()))
                weights[o * taps + t] = Int8(q)
                meanSum += q * input.mean[t / 9]
            }
            bias.append(QuantizedNetwork.integerBias(stem.bias[o] / s - meanSum, scale: 1, limit: Self.biasLimit))
            scale.append(s / output.scale)
        }
        self.weights = weights
        self.bias = bias
        self.scale = scale
        mean = input.mean
        std = input.std
        zero = output.zero
        low = output.zero
        high = min(output.top, output.zero + Int((6 / output.scale).rounded()))
        packed = AlignedBytes(count: dedog_qstem_packed_size()) { p in dedog_qstem_pack(weights, bias, scale, p) }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: 3, stride: 2)
    }

    /// Safe entry point: `input` is one image's planar floats [3 × height × width]; the result NHWC bytes.
    public func callAsFunction(_ input: [Float], height: Int, width: Int, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [UInt8] {
        let (oh, ow) = outputSize(height: height, width: width)
        return try KernelSupport.callBytes(input, expecting: 3 * height * width, kernel: "8-bit stem",
                                           outputCount: oh * ow * Int(DEDOG_QSTEM_OUTPUTS)) {
            run($0, bytes: $1, height: height, width: width, parallel: Parallel(threads: threads, kernels: kernels))
        }
    }

    /// One image: `input` planar floats [3 × height × width] as the preprocessing made them; NHWC bytes out.
    /// Threads first share the rows of pixel bytes, then the output rows.
    func run(_ input: UnsafePointer<Float>, bytes output: UnsafeMutablePointer<UInt8>, height: Int, width: Int,
             parallel: Parallel) {
        let (oh, padTop) = SamePadding.of(input: height, kernel: 3, stride: 2)
        let (ow, padLeft) = SamePadding.of(input: width, kernel: 3, stride: 2)
        let ph = 2 * (oh - 1) + 3, pw = 2 * (ow - 1) + 3
        let image = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * ph * pw + 4)
        defer { image.deallocate() }
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), bytes = SharedPointer(image), dst = SharedPointer(output)
        let (mean, std) = (self.mean, self.std)
        parallel { part in
            let rows = slice(ph, part: part, of: parallel.parts)
            dedog_qstem_bytes(parallel.kernels.isa, src.base, Int32(height), Int32(width), mean, std, Int32(padTop), Int32(padLeft), Int32(ph),
                              Int32(pw), Int32(rows.lowerBound), Int32(rows.upperBound), bytes.base)
        }
        let (zero, low, high, packed) = (self.zero, self.low, self.high, self.packed)
        parallel { part in
            let rows = slice(oh, part: part, of: parallel.parts)
            if rows.isEmpty { return }
            packed.withUnsafeBytes { p in
                var args = dedog_qstem_args(in: bytes.base, padded_height: Int32(ph), padded_width: Int32(pw), out_width: Int32(ow), packed: p.baseAddress,
                                            out: dst.base, out_first_row: 0, out_zero: Int32(zero), out_min: Int32(low),
                                            out_max: Int32(high), first_row: Int32(rows.lowerBound),
                                            end_row: Int32(rows.upperBound))
                dedog_qstem(parallel.kernels.isa, &args)
            }
        }
    }
}
