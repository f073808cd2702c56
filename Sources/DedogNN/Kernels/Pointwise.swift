import CCBLAS

/// A 1×1 convolution as one GEMM over the channel-major activation: out[cout × columns] = W[cout × cin] ·
/// in[cin × columns], where columns = batch × height × width (CNHW layout). The bias, ReLU6 and residual add
/// are fused into one pass over each thread's part of the output while it is still in cache.
struct PointwiseConvolution: Sendable {
    let inChannels: Int
    let outChannels: Int
    let weight: [Float]  // [outChannels × inChannels], BN folded in
    let bias: [Float]    // [outChannels]
    let clampsToSix: Bool

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
