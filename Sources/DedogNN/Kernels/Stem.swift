import DedogKernels

/// The first convolution (3×3, stride 2, 3 → 32 channels, TF-SAME) as a GEMM over gathered patches: each
/// output row's 3·3·3-value receptive fields are gathered from the planar (NCHW) network input, then the
/// pointwise kernel multiplies them by the packed weights with ReLU6 in its store. Writes the channels-last
/// (NHWC) activation the rest of the network uses. Threads split the output rows.
public struct StemConvolution: Sendable {
    public let inChannels: Int
    public let outChannels: Int
    public let kernel: Int
    public let stride: Int
    /// The weights as a pointwise layer over patches of inChannels · kernel · kernel values.
    let gemm: PointwiseConvolution
    /// [outChannels × inChannels × k × k] and [outChannels], BN folded in, as given (the 8-bit stem is made from them).
    let weight: [Float]
    let bias: [Float]

    /// `weight` is [outChannels × inChannels × k × k] as in the checkpoint, BN folded in.
    public init(inChannels: Int, outChannels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) throws(ModelError) {
        try KernelSupport.check(inChannels > 0 && kernel > 0 && stride >= 1
                                && weight.count == outChannels * inChannels * kernel * kernel && bias.count == outChannels,
                                "stem", weights: weight.count, biases: bias.count)
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.kernel = kernel
        self.stride = stride
        self.weight = weight
        self.bias = bias
        gemm = try PointwiseConvolution(inChannels: inChannels * kernel * kernel, outChannels: outChannels,
                                        weight: weight, bias: bias, clampsToSix: true)
    }

    /// Safe entry point: `input` is NCHW, [batch × inChannels × height × width]; the result is NHWC.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        let (oh, ow) = outputSize(height: height, width: width)
        return try KernelSupport.call(input, expecting: batch * inChannels * height * width, kernel: "stem",
                                  outputCount: outChannels * batch * oh * ow) {
            run($0, $1, batch: batch, height: height, width: width, parallel: Parallel(threads: threads, kernels: kernels))
        }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
             batch: Int, height: Int, width: Int, parallel: Parallel) {
        let dst = SharedPointer(output), cout = outChannels
        eachRow(input, batch: batch, height: height, width: width, parallel: parallel) { row, ow, patches, kernels in
            gemm.runRows(patches, dst.base + row * ow * cout, rows: ow, residual: nil, kernels: kernels)
        }
    }

    /// The 8-bit engine's stem: one image, each output row computed in floats, then stored as bytes in `encoding`
    /// (ReLU6 already applied, so the bytes start at its zero point).
    func run(_ input: UnsafePointer<Float>, bytes output: UnsafeMutablePointer<UInt8>, encoding: ByteEncoding,
             height: Int, width: Int, parallel: Parallel) {
        let dst = SharedPointer(output), cout = outChannels
        let inverse = 1 / encoding.scale, zero = Int32(encoding.zero)
        eachRow(input, batch: 1, height: height, width: width, parallel: parallel, rowFloats: true) { row, ow, patches, kernels in
            let floats = patches + ow * inChannels * kernel * kernel
            gemm.runRows(patches, floats, rows: ow, residual: nil, kernels: kernels)
            dedog_quantize(kernels.isa, floats, ow * cout, inverse, zero, zero, Int32(encoding.top), dst.base + row * ow * cout)
        }
    }

    /// Gathers each output row's patches on the threads of `parallel` and hands them to `body` with the row, the
    /// output width and the kernel set; with `rowFloats`, room for one output row of floats follows the patches.
    private func eachRow(_ input: UnsafePointer<Float>, batch: Int, height: Int, width: Int, parallel: Parallel,
                         rowFloats: Bool = false,
                         _ body: @escaping @Sendable (Int, Int, UnsafeMutablePointer<Float>, KernelSet) -> Void) {
        let (oh, padTop) = SamePadding.of(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = SamePadding.of(input: width, kernel: kernel, stride: stride)
        let taps = inChannels * kernel * kernel, cin = inChannels, k = kernel, s = stride
        let src = SharedPointer(UnsafeMutablePointer(mutating: input))
        let kernels = parallel.kernels, extra = rowFloats ? ow * outChannels : 0
        parallel { part in
            let patches = UnsafeMutablePointer<Float>.allocate(capacity: ow * taps + extra)
            defer { patches.deallocate() }
            for row in slice(batch * oh, part: part, of: parallel.parts) {
                let image = row / oh
                dedog_stem_patches(src.base + image * cin * height * width, Int32(cin), Int32(height), Int32(width),
                                   Int32(k), Int32(s), Int32(padTop), Int32(padLeft), Int32(row % oh), Int32(ow),
                                   patches)
                body(row, ow, patches, kernels)
            }
        }
    }
}
