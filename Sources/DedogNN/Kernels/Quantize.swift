import DedogKernels

/// Floats to bytes, as the 8-bit engine's stem stores its output (`dedog_quantize`): round(x · inverseScale) + zero,
/// clamped to low…high.
public enum Quantize {
    /// Safe entry point, for tests: every value of `x` as its byte.
    public static func bytes(_ x: [Float], inverseScale: Float, zero: Int, low: Int, high: Int,
                             kernels: KernelSet = .best) throws(ModelError) -> [UInt8] {
        let byte = 0...255
        guard byte.contains(zero), byte.contains(low), byte.contains(high), low <= high, inverseScale.isFinite,
              x.allSatisfy({ ($0 * inverseScale).magnitude < Float(1 << 22) }) else {
            throw .badInput(detail: "quantize: zero \(zero) and clamp \(low)…\(high) must be bytes, and every value "
                            + "times \(inverseScale) below 2^22")
        }
        let count = x.count
        return try KernelSupport.callBytes(x, expecting: count, kernel: "quantize", outputCount: count) { x, y in
            dedog_quantize(kernels.isa, x, count, inverseScale, Int32(zero), Int32(low), Int32(high), y)
        }
    }
}
