import DedogKernels

/// A k×k depthwise convolution on 8-bit activations: the counterpart of `DepthwiseConvolution` (same geometry,
/// same TF-SAME padding, same split between threads). Inputs are bytes with zero point 0 (real value x · s_x; every
/// depthwise layer of the network reads a ReLU6 output), weights signed bytes with one scale per channel; each
/// output byte is round((Σ x·w + bias[c]) · scale[c]) + zero, clamped to low…high (see `dedog_qdepthwise_args`).
public struct QuantizedDepthwise: Sendable {
    public let channels: Int
    public let kernel: Int
    public let stride: Int
    public let zero: Int
    public let low: Int
    public let high: Int
    /// Tap-major, [kernel × kernel × channels], the signed weights as floats (the kernels multiply in floats, exactly).
    let tapWeights: [Float]
    let bias: [Int32]
    let scale: [Float]
    /// The same weights, biases and scales in the byte dot product kernels' layout (`dedog_qdepthwise_pack`).
    let packed: AlignedBytes
    /// The largest input byte the layer takes: 255, or 127 for an input in 7 bits (`ByteEncoding.top`), which
    /// AVX2's `vpmaddubsw` multiplies by 8-bit weights without its signed build.
    public let inputMax: Int

    /// The largest kernel whose integer sums stay below 2^24, where floats hold every integer exactly.
    public static let kernels = 1...16
    /// The largest bias magnitude: with 16×16 taps of 255 · 127 it keeps every sum below 2^24.
    public static let biasLimit = Int32(1 << 23)

    /// `weight` is [channels × kernel × kernel] in −127…127; `bias` (nil: zeros) the int32 biases at the scale
    /// s_x · s_w[c] (|bias| ≤ 2^23, so that floats hold every sum exactly); `scale[c]` what each sum is multiplied by
    /// in the store; `inputMax` the largest input byte (255, or 127 for inputs in 7 bits).
    public init(channels: Int, kernel: Int, stride: Int, weight: [Int8], bias: [Int32]?, scale: [Float], zero: Int,
                low: Int, high: Int, inputMax: Int = 255) throws(ModelError) {
        try KernelSupport.check(channels > 0 && Self.kernels.contains(kernel) && weight.count == channels * kernel * kernel,
                                "8-bit depthwise \(channels)ch \(kernel)×\(kernel)/\(stride)", weights: weight.count,
                                biases: bias?.count ?? channels)
        try self.init(channels: channels, kernel: kernel, stride: stride,
                      tapWeights: KernelSupport.tapMajor(weight.map(Float.init), rows: channels, taps: kernel * kernel),
                      bias: bias, scale: scale, zero: zero, low: low, high: high, inputMax: inputMax)
    }

    /// The same from weights already tap-major as floats, [kernel × kernel × channels], each an integer in −127…127
    /// (as `QuantizedNetwork` makes them).
    init(channels: Int, kernel: Int, stride: Int, tapWeights: [Float], bias: [Int32]?, scale: [Float], zero: Int,
         low: Int, high: Int, inputMax: Int = 255) throws(ModelError) {
        try KernelSupport.check(channels > 0 && Self.kernels.contains(kernel) && stride >= 1
                                && tapWeights.count == channels * kernel * kernel && (bias?.count ?? channels) == channels
                                && scale.count == channels,
                                "8-bit depthwise \(channels)ch \(kernel)×\(kernel)/\(stride)", weights: tapWeights.count,
                                biases: bias?.count ?? channels)
        let byte = 0...255, limit = Self.biasLimit
        guard byte.contains(zero), byte.contains(low), byte.contains(high), low <= high, scale.allSatisfy(\.isFinite),
              (1...255).contains(inputMax),
              (bias ?? []).allSatisfy({ (-limit...limit).contains($0) }) else {
            throw .badInput(detail: "8-bit depthwise \(channels)ch: zero \(zero) and clamp \(low)…\(high) must be bytes, "
                            + "scales finite and biases within ±2^23")
        }
        self.channels = channels
        self.kernel = kernel
        self.stride = stride
        self.zero = zero
        self.low = low
        self.high = high
        self.bias = bias ?? [Int32](repeating: 0, count: channels)
        self.scale = scale
        self.tapWeights = tapWeights
        self.inputMax = inputMax
        let bias = self.bias
        packed = AlignedBytes(count: dedog_qdepthwise_packed_size(Int32(channels), Int32(kernel))) {
            dedog_qdepthwise_pack(tapWeights, bias, scale, Int32(channels), Int32(kernel), Int32(inputMax), $0)
        }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    /// Safe entry point: `input` is NHWC bytes, [batch × height × width × channels]; so is the result.
    public func callAsFunction(_ input: [UInt8], batch: Int, height: Int, width: Int, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [UInt8] {
        try call(input, batch: batch, height: height, width: width, threads: threads, kernels: kernels, vnni: true)
    }

    /// The same as a CPU without AVX-512 VNNI runs it (the AVX-512 set widening bytes to floats), so that tests reach
    /// that build on CPUs with VNNI.
    @_spi(Testing) public func withoutVNNI(_ input: [UInt8], batch: Int, height: Int, width: Int, threads: Int,
                                           kernels: KernelSet) throws(ModelError) -> [UInt8] {
        try call(input, batch: batch, height: height, width: width, threads: threads, kernels: kernels, vnni: false)
    }

    private func call(_ input: [UInt8], batch: Int, height: Int, width: Int, threads: Int, kernels: KernelSet,
                      vnni: Bool) throws(ModelError) -> [UInt8] {
        if inputMax < 255, let byte = input.first(where: { Int($0) > inputMax }) {  // the kernels rely on it
            throw .badInput(detail: "8-bit depthwise: an input byte \(byte) past the layer's largest, \(inputMax)")
        }
        let (oh, ow) = outputSize(height: height, width: width)
        return try KernelSupport.callBytes(input, expecting: channels * batch * height * width, kernel: "8-bit depthwise",
                                           outputCount: channels * batch * oh * ow) {
            run($0, $1, batch: batch, height: height, width: width, parallel: Parallel(threads: threads, kernels: kernels),
                vnni: vnni)
        }
    }

    /// Threads split the output rows, or the channels when there are few rows.
    func run(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, batch: Int, height: Int, width: Int,
             parallel: Parallel, vnni: Bool = true) {
        let (oh, ow) = outputSize(height: height, width: width)
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let c = channels, kernels = parallel.kernels
        // Channels split in 64s, the VNNI kernel's blocks.
        parallel.depthwise(batch: batch, outputRows: oh, channels: c, align: 64) { image, rows, lanes in
            runRows(src.base + image * height * width * c, dst.base + image * oh * ow * c, rows: rows, height: height,
                    width: width, channels: lanes, kernels: kernels, vnni: vnni)
        }
    }

    /// Output rows `rows` of one image, channels `lanes`, on the calling thread; the one place that calls the C kernel.
    /// `input` starts at input row `firstInputRow` and `output` at output row `firstOutputRow` (a band's buffers).
    func runRows(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, rows: Range<Int>, height: Int,
                 width: Int, channels lanes: Range<Int>, kernels: KernelSet, vnni: Bool = true, firstInputRow: Int = 0,
                 firstOutputRow: Int = 0) {
        let (oh, padTop) = SamePadding.of(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = SamePadding.of(input: width, kernel: kernel, stride: stride)
        tapWeights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                scale.withUnsafeBufferPointer { s in
                    packed.withUnsafeBytes { p in
                        var args = dedog_qdepthwise_args(
                            in: input, in_first_row: Int32(firstInputRow), out_first_row: Int32(firstOutputRow),
                            height: Int32(height), width: Int32(width),
                            channels: Int32(channels), kernel: Int32(kernel), stride: Int32(stride),
                            pad_top: Int32(padTop), pad_left: Int32(padLeft), out_height: Int32(oh), out_width: Int32(ow),
                            weight: w.baseAddress!, bias: b.baseAddress!, scale: s.baseAddress!, out: output,
                            out_zero: Int32(zero), out_min: Int32(low), out_max: Int32(high),
                            first_row: Int32(rows.lowerBound), end_row: Int32(rows.upperBound),
                            first_channel: Int32(lanes.lowerBound), end_channel: Int32(lanes.upperBound),
                            packed: p.baseAddress)
                        if vnni { dedog_qdepthwise(kernels.isa, &args) } else { dedog_qdepthwise_without_vnni(kernels.isa, &args) }
                    }
                }
            }
        }
    }
}
