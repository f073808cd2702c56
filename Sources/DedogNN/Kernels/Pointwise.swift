import CCBLAS

/// A 1×1 convolution as one GEMM over the channel-major activation: out[cout × columns] = W[cout × cin] ·
/// in[cin × columns], where columns = batch × height × width (CNHW layout). The bias, ReLU6 and residual add
/// are fused into one pass over each thread's part of the output while it is still in cache.
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

    /// Safe entry point: `input` is channel-major, [inChannels × columns]; so is `residual`, [outChannels × columns].
    public func callAsFunction(_ input: [Float], columns: Int, residual: [Float]? = nil, threads: Int = 1) -> [Float] {
        precondition(input.count == inChannels * columns, "pointwise: \(input.count) inputs for \(inChannels)×\(columns)")
        precondition(residual.map { $0.count == outChannels * columns } ?? true, "pointwise: residual size")
        var out = [Float](repeating: 0, count: outChannels * columns)
        input.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in
                if let residual {
                    residual.withUnsafeBufferPointer { r in
                        run(x.baseAddress!, y.baseAddress!, columns: columns, residual: r.baseAddress!, threads: threads)
                    }
                } else {
                    run(x.baseAddress!, y.baseAddress!, columns: columns, threads: threads)
                }
            }
        }
        return out
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, columns: Int,
             residual: UnsafePointer<Float>? = nil, threads: Int) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input))
        let dst = SharedPointer(output)
        let res = residual.map { SharedPointer(UnsafeMutablePointer(mutating: $0)) }
        // Wide outputs split by columns (each thread streams its own part of the activation); narrow ones by
        // output channels, so that two threads still have work at 7×7.
        let byColumns = columns >= 128 * threads
        weight.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                let wp = SharedPointer(UnsafeMutablePointer(mutating: w.baseAddress!))
                let bp = SharedPointer(UnsafeMutablePointer(mutating: b.baseAddress!))
                parallelFor(threads) { part in
                    let rows = byColumns ? 0..<outChannels : slice(outChannels, part: part, of: threads)
                    let cols = byColumns ? slice(columns, part: part, of: threads, align: 16) : 0..<columns
                    if rows.isEmpty || cols.isEmpty { return }
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                                Int32(rows.count), Int32(cols.count), Int32(inChannels),
                                1, wp.base + rows.lowerBound * inChannels, Int32(inChannels),
                                src.base + cols.lowerBound, Int32(columns),
                                0, dst.base + rows.lowerBound * columns + cols.lowerBound, Int32(columns))
                    Epilogue.apply(dst.base, rowStride: columns, rows: rows, columns: cols, bias: bp.base,
                                   clampsToSix: clampsToSix, residual: res?.base)
                }
            }
        }
    }
}

/// out = out + bias[row], then ReLU6 or + residual.
enum Epilogue {
    static func apply(_ out: UnsafeMutablePointer<Float>, rowStride: Int, rows: Range<Int>, columns: Range<Int>,
                      bias: UnsafePointer<Float>, clampsToSix: Bool, residual: UnsafePointer<Float>?) {
        for r in rows {
            let row = out + r * rowStride + columns.lowerBound
            let b = bias[r]
            let n = columns.count
            if clampsToSix {
                for i in 0..<n { row[i] = min(max(row[i] + b, 0), 6) }
            } else if let residual {
                let add = residual + r * rowStride + columns.lowerBound
                for i in 0..<n { row[i] = row[i] + b + add[i] }
            } else {
                for i in 0..<n { row[i] += b }
            }
        }
    }
}
