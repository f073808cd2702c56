import DedogKernels

/// Row-major matrix products on the engine's pointwise kernel, for the head trainer: single-threaded and
/// deterministic (the same inputs give the same bits), with the kernel set chosen once per process.
public enum MatrixProduct {
    /// a [m × k] · bᵀ + bias, with b [n × k] and bias [n] (zeros when nil): [m × n].
    public static func timesTransposed(_ a: UnsafePointer<Float>, rows m: Int, _ b: UnsafePointer<Float>,
                                       bias: UnsafePointer<Float>?, outputs n: Int, inner k: Int,
                                       kernels: KernelSet = .automatic) -> [Float] {
        let packed = [Float](unsafeUninitializedCapacity: dedog_pointwise_packed_count(Int32(k), Int32(n))) { p, count in
            dedog_pointwise_pack(b, bias, Int32(k), Int32(n), p.baseAddress!)
            count = p.count
        }
        return product(a, rows: m, packed, outputs: n, inner: k, kernels: kernels)
    }

    /// aᵀ · b, with a [k × m] and b [k × n]: [m × n].
    public static func transposedTimes(_ a: UnsafePointer<Float>, columns m: Int, _ b: UnsafePointer<Float>,
                                       outputs n: Int, inner k: Int, kernels: KernelSet = .automatic) -> [Float] {
        var at = [Float](repeating: 0, count: m * k)
        for r in 0..<k { for c in 0..<m { at[c * k + r] = a[r * m + c] } }
        let packed = [Float](unsafeUninitializedCapacity: dedog_pointwise_packed_count(Int32(k), Int32(n))) { p, count in
            dedog_pointwise_pack_columns(b, nil, Int32(k), Int32(n), p.baseAddress!)
            count = p.count
        }
        return at.withUnsafeBufferPointer { product($0.baseAddress!, rows: m, packed, outputs: n, inner: k, kernels: kernels) }
    }

    private static func product(_ a: UnsafePointer<Float>, rows m: Int, _ packed: [Float], outputs n: Int, inner k: Int,
                                kernels: KernelSet) -> [Float] {
        var out = [Float](repeating: 0, count: m * n)
        if m == 0 || n == 0 { return out }
        packed.withUnsafeBufferPointer { w in
            out.withUnsafeMutableBufferPointer { o in
                var args = dedog_pointwise_args(
                    in: a, in_stride: k, packed: w.baseAddress!, inputs: Int32(k), outputs: Int32(n), rows: Int32(m),
                    first_panel: 0, end_panel: Int32((n + Int(DEDOG_PANEL) - 1) / Int(DEDOG_PANEL)), out: o.baseAddress!,
                    residual: nil, out_stride: n, epilogue: DEDOG_LINEAR)
                dedog_pointwise(kernels.isa, &args)
            }
        }
        return out
    }
}
