import DedogKernels

/// A 1×1 convolution as one GEMM over the channels-last activation: out[pixels × cout] = in[pixels × cin] · Wᵀ,
/// where pixels = batch × height × width (NHWC), read in place. The weights are packed once, here, into panels
/// of 16 output channels as the kernels read them; bias, ReLU6 or the residual add happen in the kernel's store.
/// Threads split the pixels, or the panels when there are few pixels (7×7 at batch 1).
public struct PointwiseConvolution: Sendable {
    public let inChannels: Int
    public let outChannels: Int
    public let clampsToSix: Bool
    /// `dedog_pointwise_pack`'s layout: per panel of 16 outputs, 16 biases, then cin rows of 16 weights.
    let packed: [Float]

    /// `weight` is [outChannels × inChannels] (BN folded in), `bias` [outChannels].
    public init(inChannels: Int, outChannels: Int, weight: [Float], bias: [Float], clampsToSix: Bool) throws(ModelError) {
        try KernelSupport.check(inChannels > 0 && outChannels > 0 && weight.count == inChannels * outChannels
                                && bias.count == outChannels,
                                "pointwise \(inChannels)→\(outChannels)", weights: weight.count, biases: bias.count)
        self.init(inChannels: inChannels, outChannels: outChannels, clampsToSix: clampsToSix) { packed in
            dedog_pointwise_pack(KernelSet.best.isa, weight, bias, Int32(inChannels), Int32(outChannels), packed)
        }
    }

    /// From a weight tensor as the file stores it ([outChannels × inChannels], floats or halves) with each output's
    /// weights times `scale` (nil: as they are): BatchNorm folded while packing, with no copy of the tensor.
    init(inChannels: Int, outChannels: Int, weight: StoredFloats, scale: [Double]?, bias: [Float],
         clampsToSix: Bool) throws(ModelError) {
        var status: Int32 = 0
        self.init(inChannels: inChannels, outChannels: outChannels, clampsToSix: clampsToSix) { packed in
            status = weight.withPointer { w in
                if let scale { return dedog_pointwise_pack_stored(KernelSet.best.isa, w, weight.half ? 1 : 0, scale, bias, Int32(inChannels), Int32(outChannels), packed) }
                return dedog_pointwise_pack_stored(KernelSet.best.isa, w, weight.half ? 1 : 0, nil, bias, Int32(inChannels), Int32(outChannels), packed)
            }
        }
        guard status == 0 else { throw .badInput(detail: "pointwise \(inChannels)→\(outChannels): out of memory while packing") }
    }

    /// `pack` fills the `dedog_pointwise_packed_count` floats of the packed weights.
    init(inChannels: Int, outChannels: Int, clampsToSix: Bool, pack: (UnsafeMutablePointer<Float>) -> Void) {
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.clampsToSix = clampsToSix
        let count = dedog_pointwise_packed_count(Int32(inChannels), Int32(outChannels))
        packed = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            pack(buffer.baseAddress!)
            initialized = count
        }
    }

    /// Output `o`'s weights over the inputs and its bias, read back from the packed panels.
    func row(_ o: Int) -> (weight: [Float], bias: Float) {
        let width = Self.panelWidth, panel = width * (inChannels + 1) * (o / width), lane = o % width
        return ((0..<inChannels).map { packed[panel + width * ($0 + 1) + lane] }, packed[panel + lane])
    }

    static let panelWidth = Int(DEDOG_PANEL)
    var panelCount: Int { (outChannels + Self.panelWidth - 1) / Self.panelWidth }

    /// Safe entry point: `input` is channels-last, [pixels × inChannels]; `residual` and the result are
    /// [pixels × outChannels].
    public func callAsFunction(_ input: [Float], pixels: Int, residual: [Float]? = nil, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        // The kernels' stores add a residual or clamp to six, never both: a clamping layer (expand, head) has none.
        if residual != nil && clampsToSix {
            throw .badInput(detail: "pointwise: a layer that clamps to six takes no residual")
        }
        if let residual, residual.count != outChannels * pixels {
            throw .badInput(detail: "pointwise: \(residual.count) residual values, expected \(outChannels * pixels)")
        }
        return try KernelSupport.call(input, expecting: inChannels * pixels, kernel: "pointwise",
                                  outputCount: outChannels * pixels) { x, y in
            let parallel = Parallel(threads: threads, kernels: kernels)
            if let residual {
                residual.withUnsafeBufferPointer { run(x, y, pixels: pixels, residual: $0.baseAddress!, parallel: parallel) }
            } else {
                run(x, y, pixels: pixels, parallel: parallel)
            }
        }
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, pixels: Int,
             residual: UnsafePointer<Float>? = nil, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let res = residual.map { SharedPointer(UnsafeMutablePointer(mutating: $0)) }
        let cin = inChannels, cout = outChannels, kernels = parallel.kernels
        parallel.pointwise(pixels: pixels, panels: panelCount) { rows, panels in
            runRows(src.base + rows.lowerBound * cin, dst.base + rows.lowerBound * cout, rows: rows.count,
                    inputStride: cin, panels: panels,
                    residual: res.map { UnsafePointer($0.base + rows.lowerBound * cout) }, kernels: kernels)
        }
    }

    /// `rows` rows of `inputStride` floats (the input channels first) on the calling thread, into the output
    /// channels of `panels` (all of them unless given); the one place that calls the C kernel.
    func runRows(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, rows: Int,
                 inputStride: Int? = nil, panels: Range<Int>? = nil, residual: UnsafePointer<Float>?,
                 kernels: KernelSet) {
        let panels = panels ?? 0..<panelCount
        if rows <= 0 || panels.isEmpty { return }
        // `callAsFunction` refuses a residual for a clamping layer; the plans give one only to projections.
        let epilogue = clampsToSix ? DEDOG_RELU6 : (residual == nil ? DEDOG_LINEAR : DEDOG_ADD_RESIDUAL)
        packed.withUnsafeBufferPointer { w in
            var args = dedog_pointwise_args(
                in: input, in_stride: inputStride ?? inChannels, packed: w.baseAddress!, inputs: Int32(inChannels),
                outputs: Int32(outChannels), rows: Int32(rows),
                first_panel: Int32(panels.lowerBound), end_panel: Int32(panels.upperBound),
                out: output, residual: residual, out_stride: outChannels, epilogue: epilogue)
            dedog_pointwise(kernels.isa, &args)
        }
    }
}

extension Parallel {
    /// How a 1×1 layer (float or 8-bit) shares one pass out: each part takes pixels, or all pixels and some panels
    /// of outputs when there are few pixels (7×7 at batch 1). `body(rows, panels)` runs once per part.
    func pointwise(pixels: Int, panels: Int, _ body: @escaping @Sendable (Range<Int>, Range<Int>) -> Void) {
        let byRows = pixels >= 64 * parts, parts = self.parts
        self { part in
            body(byRows ? slice(pixels, part: part, of: parts, align: 8) : 0..<pixels,
                 byRows ? 0..<panels : slice(panels, part: part, of: parts))
        }
    }
}
