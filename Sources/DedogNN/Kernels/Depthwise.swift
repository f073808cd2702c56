import DedogKernels

/// A k×k depthwise convolution (one filter per channel) with TF-SAME padding, bias and ReLU6 fused, on the
/// channels-last activation. The kernels take 16 channels at a time over several neighbouring output pixels
/// that share each weight load; pixels whose window touches the padding read only their in-bounds taps.
/// Threads split the output rows, or the channels when there are few rows (7×7 at batch 1).
public struct DepthwiseConvolution: Sendable {
    public let channels: Int
    public let kernel: Int
    public let stride: Int
    /// Tap-major, [kernel × kernel × channels], as the kernels read them.
    let tapWeights: [Float]
    let bias: [Float]

    /// `weight` is [channels × kernel × kernel] as in the checkpoint, BN folded in.
    public init(channels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) throws(ModelError) {
        try KernelSupport.check(channels > 0 && kernel > 0 && stride >= 1 && weight.count == channels * kernel * kernel
                                && bias.count == channels,
                                "depthwise \(channels)ch \(kernel)×\(kernel)/\(stride)", weights: weight.count, biases: bias.count)
        self.channels = channels
        self.kernel = kernel
        self.stride = stride
        self.bias = bias
        tapWeights = KernelSupport.tapMajor(weight, rows: channels, taps: kernel * kernel)
    }

    /// Safe entry point: `input` is NHWC, [batch × height × width × channels]; so is the result.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        let (oh, ow) = outputSize(height: height, width: width)
        return try KernelSupport.call(input, expecting: channels * batch * height * width, kernel: "depthwise",
                                  outputCount: channels * batch * oh * ow) {
            run($0, $1, batch: batch, height: height, width: width, parallel: Parallel(threads: threads, kernels: kernels))
        }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, batch: Int,
             height: Int, width: Int, parallel: Parallel) {
        let (oh, ow) = outputSize(height: height, width: width)
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let c = channels, kernels = parallel.kernels
        parallel.depthwise(batch: batch, outputRows: oh, channels: c) { image, rows, lanes in
            runBand(src.base + image * height * width * c, firstInputRow: 0,
                    dst.base + rows.lowerBound * ow * c + image * oh * ow * c, rows: rows, height: height, width: width,
                    channels: lanes, kernels: kernels)
        }
    }

    /// Output rows `rows` of one image on the calling thread, channels `channels` (all unless given), from a
    /// band of input rows that starts at `firstInputRow` into a band buffer that starts at output row
    /// `rows.lowerBound`; the one place that calls the C kernel.
    func runBand(_ input: UnsafePointer<Float>, firstInputRow: Int, _ output: UnsafeMutablePointer<Float>,
                 rows: Range<Int>, height: Int, width: Int, channels lanes: Range<Int>? = nil, kernels: KernelSet) {
        let (oh, padTop) = SamePadding.of(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = SamePadding.of(input: width, kernel: kernel, stride: stride)
        let lanes = lanes ?? 0..<channels
        tapWeights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                var args = dedog_depthwise_args(
                    in: input, in_first_row: Int32(firstInputRow), out_first_row: Int32(rows.lowerBound),
                    height: Int32(height), width: Int32(width), channels: Int32(channels), kernel: Int32(kernel),
                    stride: Int32(stride), pad_top: Int32(padTop), pad_left: Int32(padLeft), out_height: Int32(oh),
                    out_width: Int32(ow), weight: w.baseAddress!, bias: b.baseAddress!, out: output,
                    first_row: Int32(rows.lowerBound), end_row: Int32(rows.upperBound),
                    first_channel: Int32(lanes.lowerBound), end_channel: Int32(lanes.upperBound))
                dedog_depthwise(kernels.isa, &args)
            }
        }
    }
}

extension Parallel {
    /// How a depthwise layer shares one pass out: each part takes output rows (image after image), or all rows and
    /// some channels when there are few rows (7×7 at batch 1). `body(image, rows, channels)` runs once for each
    /// image's rows in a part's share, rows counted within the image; channel shares start at multiples of `align`.
    func depthwise(batch: Int, outputRows oh: Int, channels: Int, align: Int = Int(DEDOG_PANEL),
                   _ body: @escaping @Sendable (Int, Range<Int>, Range<Int>) -> Void) {
        let byRows = batch * oh >= 4 * parts, parts = self.parts
        self { part in
            let rows = byRows ? slice(batch * oh, part: part, of: parts) : 0..<(batch * oh)
            let lanes = byRows ? 0..<channels : slice(channels, part: part, of: parts, align: align)
            if lanes.isEmpty { return }
            var row = rows.lowerBound
            while row < rows.upperBound {
                let image = row / oh, end = min(rows.upperBound, (image + 1) * oh)
                body(image, (row - image * oh)..<(end - image * oh), lanes)
                row = end
            }
        }
    }
}
