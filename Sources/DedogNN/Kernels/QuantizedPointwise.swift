import DedogKernels

/// A 1×1 convolution on 8-bit activations: unsigned bytes x whose real value is (x − inputZero[k]) · s_x[k] (a
/// scale and zero point per input channel, or one for the tensor) times signed weights w whose real value is
/// w · s_w[c] (one scale per output channel, symmetric), summed exactly in 32-bit integers and stored as bytes again
/// (a zero point per output channel), with the residual added, or as floats. The weights are packed once, here,
/// into `dedog_qpointwise_pack`'s panels, which every kernel set reads.
public struct QuantizedPointwise: Sendable {
    /// What the layer stores from each integer sum (see `dedog_qstore` for the exact arithmetic). Zero points and
    /// residual encodings are one per output channel, or one for all.
    public enum Store: Sendable, Equatable {
        /// round(sum · scale[c]) + zero[c], clamped to low…high: with zero 0 and high the byte of 6, that clamp is ReLU6.
        case bytes(zero: [Int], low: Int, high: Int)
        /// The same after adding (r − residualZero[c]) · residualScale[c], r the residual's byte at the same place.
        case bytesAddingResidual(zero: [Int], low: Int, high: Int, residualZero: [Int], residualScale: [Float])
        /// sum · scale[c] as a float, clamped to 0…6 when `clampsToSix`.
        case floats(clampsToSix: Bool)

        /// Whether every zero point and clamp is a byte, every residual scale finite, and there is one of each per
        /// output or one for all.
        func fits(outputs: Int) -> Bool {
            let byte = 0...255
            func perOutput<T>(_ values: [T]) -> Bool { values.count == 1 || values.count == outputs }
            switch self {
            case let .bytes(zero, low, high):
                return perOutput(zero) && zero.allSatisfy(byte.contains) && byte.contains(low) && byte.contains(high) && low <= high
            case let .bytesAddingResidual(zero, low, high, residualZero, residualScale):
                return perOutput(zero) && zero.allSatisfy(byte.contains) && byte.contains(low) && byte.contains(high) && low <= high
                    && perOutput(residualZero) && residualZero.allSatisfy(byte.contains)
                    && perOutput(residualScale) && residualScale.allSatisfy { $0.isFinite && abs($0) * 255 < Float(1 << 20) }
            case .floats:
                return true
            }
        }

        /// Per output: the zero points, the residual's zero points and scales (nil where the store has none).
        func encodings(outputs: Int) -> (zero: [Int32]?, residualZero: [Int32]?, residualScale: [Float]?) {
            func spread<T>(_ values: [T]) -> [T] { values.count == outputs ? values : Array(repeating: values[0], count: outputs) }
            switch self {
            case let .bytes(zero, _, _):
                return (spread(zero).map(Int32.init), nil, nil)
            case let .bytesAddingResidual(zero, _, _, residualZero, residualScale):
                return (spread(zero).map(Int32.init), spread(residualZero).map(Int32.init), spread(residualScale))
            case .floats:
                return (nil, nil, nil)
            }
        }
    }

    public let inChannels: Int
    public let outChannels: Int
    /// What the kernel is told of the store at each call. Its zero points and residual encodings are in `packed`'s
    /// panel headers, and the layer keeps no `Store`: Swift keeps that enum's case in spare bits of the residual
    /// scales' array pointer, which LeakSanitizer does not follow, so every model alive at a process's exit had
    /// those arrays reported as leaked.
    private let storeKind: StoreKind
    /// `dedog_qpointwise_pack`'s layout: per panel of 16 outputs, the header (biases, scales, zero points, the
    /// residual's encoding), then weight bytes.
    let packed: AlignedBytes
    /// The largest input byte the layer takes: 255, or 127 for an input in 7 bits (`ByteEncoding.top`), which
    /// AVX2's `vpmaddubsw` multiplies by 8-bit weights without its signed build.
    public let inputMax: Int

    /// `weight` is [outChannels × inChannels] in −127…127, `bias` (nil: zeros; |bias| ≤ 2^30) the int32 biases at
    /// the scale s_w[c] (input scales folded into the weights), `scale[c]` what each sum is multiplied by in the
    /// store, `inputZero` one zero point per input channel or one for all; `inputMax` the largest input byte (255,
    /// or 127 for inputs in 7 bits, which AVX2's kernel multiplies by 8-bit weights at full speed).
    public init(inChannels: Int, outChannels: Int, weight: [Int8], bias: [Int32]?, scale: [Float], inputZero: [Int],
                store: Store, inputMax: Int = 255) throws(ModelError) {
        try KernelSupport.check(inChannels > 0 && outChannels > 0 && weight.count == inChannels * outChannels
                                && (bias?.count ?? outChannels) == outChannels && scale.count == outChannels,
                                "8-bit pointwise \(inChannels)→\(outChannels)", weights: weight.count,
                                biases: bias?.count ?? outChannels)
        let limit = Int32(1 << 30)
        guard store.fits(outputs: outChannels), inputZero.count == 1 || inputZero.count == inChannels,
              (1...255).contains(inputMax), inputZero.allSatisfy((0...inputMax).contains), scale.allSatisfy(\.isFinite),
              (bias ?? []).allSatisfy({ (-limit...limit).contains($0) }) else {
            throw .badInput(detail: "8-bit pointwise \(inChannels)→\(outChannels): zero points must be bytes up to the "
                            + "largest input \(inputMax) (one per channel or one for all), scales finite and biases "
                            + "within ±2^30 (store \(store))")
        }
        // Every sum and stored value must stay well inside 32 bits (see `dedog_qstore`): the largest sum is the bias
        // plus 255 times the weights' magnitudes twice over (once for the bytes, once for the zero points folded in).
        for c in 0..<outChannels {
            let magnitude = weight[(c * inChannels)..<((c + 1) * inChannels)].reduce(0) { $0 + abs(Int($1)) }
            let largest = Double(abs(Int(bias?[c] ?? 0)) + 510 * magnitude)
            guard largest < Double(1 << 31), largest * Double(abs(scale[c])) < Double(1 << 30) - Double(1 << 20) else {
                throw .badInput(detail: "8-bit pointwise \(inChannels)→\(outChannels): output \(c)'s sums times its scale "
                                + "\(scale[c]) could pass 2^30")
            }
        }
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.inputMax = inputMax
        storeKind = StoreKind(store)
        let zeros = (inputZero.count == inChannels ? inputZero : Array(repeating: inputZero[0], count: inChannels)).map(Int32.init)
        let (outZero, residualZero, residualScale) = store.encodings(outputs: outChannels)
        let count = dedog_qpointwise_packed_size(Int32(inChannels), Int32(outChannels))
        packed = AlignedBytes(count: count) { buffer in
            dedog_qpointwise_pack(weight, bias, scale, zeros, outZero, residualZero, residualScale, Int32(inChannels),
                                  Int32(outChannels), Int32(inputMax), buffer)
        }
    }

    /// `layer`'s weights and biases quantized and packed in one pass at load (`dedog_qpointwise_quantize`, or
    /// `dedog_qpointwise_quantize_rows` from the file's weights: the same bytes), for inputs encoded per channel
    /// (`inputScale`, `inputZero`: one per input channel), stored as `store` says at `outputScale` (one per output
    /// channel; 1 for floats), with weights within ±`weightLimit` (127, or 63 for 8-bit inputs: see `QuantizedNetwork.init`)
    /// and inputs up to `inputMax`.
    init(quantizing layer: PointwiseWeights, inputScale: [Float], inputZero: [Int], outputScale: [Float],
         store: Store, weightLimit: Int = 127, inputMax: Int = 255) throws(ModelError) {
        guard store.fits(outputs: layer.outChannels), inputScale.count == layer.inChannels, inputZero.count == layer.inChannels,
              inputZero.allSatisfy((0...255).contains), outputScale.count == layer.outChannels,
              (inputScale + outputScale).allSatisfy({ $0.isFinite && $0 > 0 }) else {
            throw .badInput(detail: "8-bit pointwise \(layer.inChannels)→\(layer.outChannels): scales must be positive "
                            + "and finite and zero points bytes, one per channel (store \(store))")
        }
        inChannels = layer.inChannels
        outChannels = layer.outChannels
        self.inputMax = inputMax
        storeKind = StoreKind(store)
        let (outZero, residualZero, residualScale) = store.encodings(outputs: outChannels)
        let count = dedog_qpointwise_packed_size(Int32(inChannels), Int32(outChannels))
        let zeros = inputZero.map(Int32.init)
        let (inputs, outputs) = (Int32(inChannels), Int32(outChannels)), limit = Int32(weightLimit), top = Int32(inputMax)
        var fits: Int32 = 0
        packed = AlignedBytes(count: count) { buffer in
            switch layer {
            case let .packed(floats):
                fits = floats.packed.withUnsafeBufferPointer { f in
                    dedog_qpointwise_quantize(KernelSet.best.isa, f.baseAddress!, inputs, outputs, inputScale, zeros, outputScale, outZero,
                                              residualZero, residualScale, limit, 1 << 30, top, buffer)
                }
            case let .folded(rows):
                fits = rows.weight.withPointer { w in
                    dedog_qpointwise_quantize_rows(KernelSet.best.isa, w, rows.weight.half ? 1 : 0, rows.scale, rows.bias, inputs, outputs,
                                                   inputScale, zeros, outputScale, outZero, residualZero, residualScale,
                                                   limit, 1 << 30, top, buffer)
                }
            }
        }
        guard fits == 1 else {
            throw .badInput(detail: fits < 0 ? "8-bit pointwise \(inChannels)→\(outChannels): out of memory"
                            : "8-bit pointwise \(inChannels)→\(outChannels): some output's sums times its scale could pass 2^30")
        }
    }

    var panelCount: Int { (outChannels + Int(DEDOG_PANEL) - 1) / Int(DEDOG_PANEL) }

    /// The largest |weight| packed.
    @_spi(Testing) public var widestWeight: Int {
        packed.withUnsafeBytes { Int(dedog_qpointwise_widest_weight($0.baseAddress, Int32(inChannels), Int32(outChannels))) }
    }

    /// Safe entry point for the byte stores: `input` is channels-last, [pixels × inChannels]; `residual` (given
    /// exactly when the store adds one) and the result are [pixels × outChannels].
    public func callAsFunction(_ input: [UInt8], pixels: Int, residual: [UInt8]? = nil, threads: Int = 1,
                               kernels: KernelSet = .best) throws(ModelError) -> [UInt8] {
        try checkInputMax(input)
        let adds = storeKind.kind == DEDOG_Q_U8_ADD
        guard storeKind.isBytes, adds == (residual != nil), residual.map({ $0.count == outChannels * pixels }) ?? true else {
            throw .badInput(detail: "8-bit pointwise: a store \(adds ? "adding" : "without") a residual, given "
                            + "\(residual?.count ?? 0) residual bytes for \(pixels) pixels of \(outChannels)")
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
        guard !storeKind.isBytes else { throw .badInput(detail: "8-bit pointwise: this layer stores bytes, not floats") }
        try checkInputMax(input)
        return try KernelSupport.call(input, expecting: inChannels * pixels, kernel: "8-bit pointwise",
                                      outputCount: outChannels * pixels) { x, y in
            run(x, UnsafeMutableRawPointer(y), pixels: pixels, parallel: Parallel(threads: threads, kernels: kernels))
        }
    }

    /// The kernels rely on inputs up to `inputMax`.
    private func checkInputMax(_ input: [UInt8]) throws(ModelError) {
        if inputMax < 255, let byte = input.first(where: { Int($0) > inputMax }) {
            throw .badInput(detail: "8-bit pointwise: an input byte \(byte) past the layer's largest, \(inputMax)")
        }
    }

    /// Threads split the pixels, or the panels when there are few pixels.
    func run(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutableRawPointer, pixels: Int,
             residual: UnsafePointer<UInt8>? = nil, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input))
        let dst = SharedPointer(output.assumingMemoryBound(to: UInt8.self))
        let res = residual.map { SharedPointer(UnsafeMutablePointer(mutating: $0)) }
        let elementSize = storeKind.isBytes ? 1 : MemoryLayout<Float>.stride
        let cin = inChannels, cout = outChannels, kernels = parallel.kernels
        parallel.pointwise(pixels: pixels, panels: panelCount) { rows, panels in
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
        (args.store, args.out_min, args.out_max, args.relu6) = (storeKind.kind, storeKind.low, storeKind.high, storeKind.relu6)
        packed.withUnsafeBytes { w in
            args.packed = w.baseAddress!
            dedog_qpointwise(kernels.isa, &args)
        }
    }
}

/// A `QuantizedPointwise.Store` as the kernel's arguments take it: the kind of store and its clamps.
private struct StoreKind: Sendable {
    let kind: dedog_qstore
    let low: Int32, high: Int32
    let relu6: Int32

    init(_ store: QuantizedPointwise.Store) {
        switch store {
        case let .bytes(_, low, high): (kind, self.low, self.high, relu6) = (DEDOG_Q_U8, Int32(low), Int32(high), 0)
        case let .bytesAddingResidual(_, low, high, _, _): (kind, self.low, self.high, relu6) = (DEDOG_Q_U8_ADD, Int32(low), Int32(high), 0)
        case let .floats(clampsToSix): (kind, low, high, relu6) = (DEDOG_Q_F32, 0, 0, clampsToSix ? 1 : 0)
        }
    }

    var isBytes: Bool { kind != DEDOG_Q_F32 }
}

/// A 1×1 convolution's float weights, whichever form they are at hand in: a float layer (packed, BatchNorm
/// folded), or the file's weight tensor with its BatchNorm as a scale and bias per output (for a network loaded to
/// run in 8 bits only, which never packs float layers).
enum PointwiseWeights: Sendable {
    case packed(PointwiseConvolution)
    case folded(FoldedPointwise)

    var inChannels: Int {
        switch self {
        case let .packed(layer): layer.inChannels
        case let .folded(rows): rows.inChannels
        }
    }

    var outChannels: Int {
        switch self {
        case let .packed(layer): layer.outChannels
        case let .folded(rows): rows.outChannels
        }
    }

    var clampsToSix: Bool {
        switch self {
        case let .packed(layer): layer.clampsToSix
        case let .folded(rows): rows.clampsToSix
        }
    }

    /// The float layer, where these weights are one.
    var layer: PointwiseConvolution? {
        if case let .packed(layer) = self { layer } else { nil }
    }
}

/// A 1×1 convolution as its file holds it: weights [outChannels × inChannels] where they lie in the file's bytes,
/// and its BatchNorm as w · scale[c] and bias[c] per output (what `dedog_pointwise_pack_stored` folds in).
struct FoldedPointwise: Sendable {
    let inChannels, outChannels: Int
    let weight: StoredFloats
    let scale: [Double]
    let bias: [Float]
    let clampsToSix: Bool
}
