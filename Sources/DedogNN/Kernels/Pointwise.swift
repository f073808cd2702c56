import CCBLAS

/// A 1×1 convolution as one GEMM over the channels-last activation: out[pixels × cout] = in[pixels × cin] · Wᵀ,
/// where pixels = batch × height × width (NHWC). The bias, ReLU6 and residual add are fused into one pass over
/// each thread's rows while they are still in cache. Threads split the pixels.
public struct PointwiseConvolution: Sendable {
    public let inChannels: Int
    public let outChannels: Int
    public let weight: [Float]  // [outChannels × inChannels], BN folded in
    public let bias: [Float]    // [outChannels]
    public let clampsToSix: Bool

    public init(inChannels: Int, outChannels: Int, weight: [Float], bias: [Float], clampsToSix: Bool) {
        precondition(weight.count == inChannels * outChannels && bias.count == outChannels,
                     "pointwise \(inChannels)→\(outChannels): \(weight.count) weights, \(bias.count) biases")
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.weight = weight
        self.bias = bias
        self.clampsToSix = clampsToSix
    }

    /// Safe entry point: `input` is channels-last, [pixels × inChannels]; `residual` and the result are
    /// [pixels × outChannels].
    public func callAsFunction(_ input: [Float], pixels: Int, residual: [Float]? = nil, threads: Int = 1) -> [Float] {
        precondition(residual.map { $0.count == outChannels * pixels } ?? true, "pointwise: residual size")
        return KernelSupport.call(input, expecting: inChannels * pixels, kernel: "pointwise",
                                  outputCount: outChannels * pixels) { x, y in
            if let residual {
                residual.withUnsafeBufferPointer { run(x, y, pixels: pixels, residual: $0.baseAddress!, parallel: Parallel(threads: threads)) }
            } else {
                run(x, y, pixels: pixels, parallel: Parallel(threads: threads))
            }
        }
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, pixels: Int,
             residual: UnsafePointer<Float>? = nil, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input))
        let dst = SharedPointer(output)
        let res = residual.map { SharedPointer(UnsafeMutablePointer(mutating: $0)) }
        let cin = inChannels, cout = outChannels, clamps = clampsToSix
        weight.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                let wp = SharedPointer(UnsafeMutablePointer(mutating: w.baseAddress!))
                let bp = SharedPointer(UnsafeMutablePointer(mutating: b.baseAddress!))
                // Many pixels: each thread takes a band of rows. Few (7×7 at batch 1): each takes a band of output
                // channels, so that both still get a GEMM of useful size.
                let byRows = pixels >= 256 * parallel.parts
                parallel { part in
                    let rows = byRows ? slice(pixels, part: part, of: parallel.parts, align: 4) : 0..<pixels
                    let cols = byRows ? 0..<cout : slice(cout, part: part, of: parallel.parts, align: 16)
                    if rows.isEmpty || cols.isEmpty { return }
                    // Bands of rows small enough (≤ ~1 MB of output) that the epilogue finds them still in cache.
                    let band = max(64, (262_144 / cout) & ~3)
                    for start in stride(from: rows.lowerBound, to: rows.upperBound, by: band) {
                        let count = min(band, rows.upperBound - start)
                        let out = dst.base + start * cout + cols.lowerBound
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(count), Int32(cols.count), Int32(cin),
                                    1, src.base + start * cin, Int32(cin), wp.base + cols.lowerBound * cin, Int32(cin),
                                    0, out, Int32(cout))
                        Epilogue.apply(out, rows: count, channels: cols.count, rowStride: cout, bias: bp.base + cols.lowerBound,
                                       clampsToSix: clamps,
                                       residual: res.map { UnsafePointer($0.base + start * cout + cols.lowerBound) })
                    }
                }
            }
        }
    }
}

/// out = out + bias, then ReLU6 or + residual, row by row of channels.
enum Epilogue {
    static func apply(_ out: UnsafeMutablePointer<Float>, rows: Int, channels: Int, rowStride: Int,
                      bias: UnsafePointer<Float>, clampsToSix: Bool, residual: UnsafePointer<Float>?) {
        let vectorEnd = channels & ~7
        for r in 0..<rows {
            let row = out + r * rowStride
            let add = residual.map { $0 + r * rowStride }
            var c = 0
            while c < vectorEnd {
                var v = load8(row + c) + load8(bias + c)
                if clampsToSix { v = relu6(v) } else if let add { v += load8(add + c) }
                store8(v, row + c)
                c += 8
            }
            while c < channels {
                var v = row[c] + bias[c]
                if clampsToSix { v = relu6(v) } else if let add { v += add[c] }
                row[c] = v
                c += 1
            }
        }
    }
}
