import DedogKernels

/// Row-major matrix products on the engine's pointwise kernel, for the head trainer: single-threaded and
/// deterministic (the same inputs give the same bits), with the kernel set chosen once per process.
public enum MatrixProduct {
    /// a [m × k] · bᵀ + bias, with b [n × k] and bias [n] (zeros when nil): [m × n].
    public static func timesTransposed(_ a: UnsafePointer<Float>, rows m: Int, _ b: UnsafePointer<Float>,
                                       bias: UnsafePointer<Float>?, outputs n: Int, inner k: Int,
                                       kernels: KernelSet = .best) -> [Float] {
        let layer = PointwiseConvolution(inChannels: k, outChannels: n, clampsToSix: false) {
            dedog_pointwise_pack(kernels.isa, b, bias, Int32(k), Int32(n), $0)
        }
        return product(a, rows: m, layer, kernels: kernels)
    }

    /// aᵀ · b, with a [k × m] and b [k × n]: [m × n].
    public static func transposedTimes(_ a: UnsafePointer<Float>, columns m: Int, _ b: UnsafePointer<Float>,
                                       outputs n: Int, inner k: Int, kernels: KernelSet = .best) -> [Float] {
        var at = [Float](repeating: 0, count: m * k)
        for r in 0..<k { for c in 0..<m { at[c * k + r] = a[r * m + c] } }
        let layer = PointwiseConvolution(inChannels: k, outChannels: n, clampsToSix: false) {
            dedog_pointwise_pack_columns(kernels.isa, b, nil, Int32(k), Int32(n), $0)
        }
        return at.withUnsafeBufferPointer { product($0.baseAddress!, rows: m, layer, kernels: kernels) }
    }

    private static func product(_ a: UnsafePointer<Float>, rows m: Int, _ layer: PointwiseConvolution,
                                kernels: KernelSet) -> [Float] {
        var out = [Float](repeating: 0, count: m * layer.outChannels)
        out.withUnsafeMutableBufferPointer { layer.runRows(a, $0.baseAddress!, rows: m, residual: nil, kernels: kernels) }
        return out
    }
}
