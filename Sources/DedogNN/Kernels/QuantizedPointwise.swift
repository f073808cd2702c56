import DedogKernels

/// A 1×1 convolution on 8-bit activations: unsigned bytes x whose real value is (x − inputZero) · s_x (one scale
/// per tensor) times signed weights w whose real value is w · s_w[c] (one scale per output channel, symmetric),
/// summed exactly in 32-bit integers and stored as bytes again, with the residual added, or as floats. The
/// weights are packed once, here, into `dedog_qpointwise_pack`'s panels, which every kernel set reads.
public struct QuantizedPointwise: Sendable {
    /// What the layer stores from each integer sum (see `dedog_qstore` for the exact arithmetic).
    public enum Store: Sendable, Equatable {
        /// round(sum · scale[c]) + zero, clamped to low…high: with zero 0 and high the byte of 6, that clamp is ReLU6.
        case bytes(zero: Int, low: Int, high: Int)
        /// The same after adding (r − residualZero) · residualScale, r the residual's byte at the same place.
        case bytesAddingResidual(zero: Int, low: Int, high: Int, residualZero: Int, residualScale: Float)
        /// sum · scale[c] as a float, clamped to 0…6 when `clampsToSix`.
        case floats(clampsToSix: Bool)

        var isBytes: Bool { if case .floats = self { false } else { true } }
    }

    public let inChannels: Int
    public let outChannels: Int
    public let store: Store
    /// `dedog_qpointwise_pack`'s layout: per panel of 16 outputs, int32 biases, float scales, then weight bytes.
    let packed: [UInt8]

    /// `weight` is [outChannels × inChannels] in −127…127, `bias` (nil: zeros) the int32 biases at the scale
    /// s_x · s_w[c], `scale[c]` what each sum is multiplied by in the store.
    public init(inChannels: Int, outChannels: Int, weight: [Int8], bias: [Int32]?, scale: [Float], inputZero: Int,
                store: Store) throws(ModelError) {
        try KernelSupport.check(inChannels > 0 && outChannels > 0 && weight.count == inChannels * outChannels
                                && (bias?.count ?? outChannels) == outChannels && scale.count == outChannels,
                                "8-bit pointwise \(inChannels)→\(outChannels)", weights: weight.count,
                                biases: bias?.count ?? outChannels)
        let byte = 0...255
        let storeFits: Bool
        switch store {
        case let .bytes(zero, low, high):
            storeFits = byte.contains(zero) && byte.contains(low) && byte.contains(high) && low <= high
        case let .bytesAddingResidual(zero, low, high, residualZero, residualScale):
            storeFits = byte.contains(zero) && byte.contains(low) && byte.contains(high) && low <= high
                && byte.contains(residualZero) && residualScale.isFinite
        case .floats:
            storeFits = true
        }
        guard byte.contains(inputZero), storeFits, scale.allSatisfy(\.isFinite) else {
            throw .badInput(detail: "8-bit pointwise \(inChannels)→\(outChannels): zero points must be bytes and "
                            + "scales finite (input zero \(inputZero), store \(store))")
        }
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.store = store
        let count = dedog_qpointwise_packed_size(Int32(inChannels), Int32(outChannels))
        packed = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            dedog_qpointwise_pack(weight, bias, scale, Int32(inputZero), Int32(inChannels), Int32(outChannels),
                                  buffer.baseAddress!)
            initialized = count
        }
    }

    var panelCount: Int { (outChannels + Int(DEDOG_PANEL) - 1) / Int(DEDOG_PANEL) }

    /// Safe entry point for the byte stores: `input` is channels-last, [pixels × inChannels]; `residual` (given
    /// exactly when the store adds one) and the result are [pixels × outChannels].
    public func callAsFunction(_ input: [UInt8], pixels: Int, residual: [UInt8]? = nil, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [UInt8] {
        let adds = if case .bytesAddingResidual = store { true } else { false }
        guard store.isBytes, adds == (residual != nil), residual.map({ $0.count == outChannels * pixels }) ?? true else {
            throw .badInput(detail: "8-bit pointwise: store \(store) with \(residual?.count ?? 0) residual bytes "
                            + "for \(pixels) pixels of \(outChannels)")
        }
        return try KernelSupport.callBytes(input, expecting: inChannels * pixels, kernel: "8-bit pointwise",
                                           outputCount: outChannels * pixels) { x, y in
            if let residual {
                residual.withUnsafeBufferPointer { run(x, UnsafeMutableRawPointer(y), pixels: pixels, residual: $0.baseAddress!,
                                                       parallel: Parallel(threads: threads, kernels: kernels)) }
            } else {
                run(x, UnsafeMutableRawPointer(y), pixels: pixels, parallel: Parallel(threads: threads, kernels: kernels))
            }
        }
    }

    /// Safe entry point for the float store: [pixels × inChannels] bytes in, [pixels × outChannels] floats out.
    public func floats(_ input: [UInt8], pixels: Int, threads: Int = 1, kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        guard !store.isBytes else { throw .badInput(detail: "8-bit pointwise: store \(store) makes bytes, not floats") }
        return try KernelSupport.call(input, expecting: inChannels * pixels, kernel: "8-bit pointwise",
                                      outputCount: outChannels * pixels) { x, y in
            run(x, UnsafeMutableRawPointer(y), pixels: pixels, parallel: Parallel(threads: threads, kernels: kernels))
        }
    }

    /// Threads split the pixels, or the panels when there are few pixels.
    func run(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutableRawPointer, pixels: Int,
             residual: UnsafePointer<UInt8>? = nil, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input))
        let dst = SharedPointer(output.assumingMemoryBound(to: UInt8.self))
        let res = residual.map { SharedPointer(UnsafeMutablePointer(mutating: $0)) }
        let elementSize = store.isBytes ? 1 : MemoryLayout<Float>.stride
        let cin = inChannels, cout = outChannels, kernels = parallel.kernels
        let byRows = pixels >= 64 * parallel.parts
        parallel { part in
            let rows = byRows ? slice(pixels, part: part, of: parallel.parts, align: 8) : 0..<pixels
            let panels = byRows ? 0..<panelCount : slice(panelCount, part: part, of: parallel.parts)
            runRows(src.base + rows.lowerBound * cin,
                    UnsafeMutableRawPointer(dst.base) + rows.lowerBound * cout * elementSize, rows: rows.count,
                    panels: panels, residual: res.map { UnsafePointer($0.base + rows.lowerBound * cout) }, kernels: kernels)
        }
    }

    /// `rows` rows on the calling thread, into the output channels of `panels`; the one place that calls the C kernel.
    func runRows(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutableRawPointer, rows: Int, panels: Range<Int>,
                 residual: UnsafePointer<UInt8>?, kernels: KernelSet) {
        if rows <= 0 || panels.isEmpty { return }
        var args = dedog_qpointwise_args()
        args.in = input
        args.in_stride = inChannels
        args.inputs = Int32(inChannels)
        args.outputs = Int32(outChannels)
        args.rows = Int32(rows)
        args.first_panel = Int32(panels.lowerBound)
        args.end_panel = Int32(panels.upperBound)
        args.out = output
        args.out_stride = outChannels
        args.residual = residual
        switch store {
        case let .bytes(zero, low, high):
            (args.store, args.out_zero, args.out_min, args.out_max) = (DEDOG_Q_U8, Int32(zero), Int32(low), Int32(high))
        case let .bytesAddingResidual(zero, low, high, residualZero, residualScale):
            (args.store, args.out_zero, args.out_min, args.out_max) = (DEDOG_Q_U8_ADD, Int32(zero), Int32(low), Int32(high))
            (args.residual_zero, args.residual_scale) = (Int32(residualZero), residualScale)
        case let .floats(clampsToSix):
            (args.store, args.relu6) = (DEDOG_Q_F32, clampsToSix ? 1 : 0)
        }
        packed.withUnsafeBytes { w in
            args.packed = w.baseAddress!
            dedog_qpointwise(kernels.isa, &args)
        }
    }
}
