/// Eight floats at once, loaded and stored without alignment requirements. Channel counts of the network are
/// multiples of 8, so the kernels' inner loops run on these; a scalar tail handles any other count.
typealias Float8 = SIMD8<Float>

@inline(__always) func load8(_ p: UnsafePointer<Float>) -> Float8 {
    UnsafeRawPointer(p).loadUnaligned(as: Float8.self)
}

@inline(__always) func store8(_ v: Float8, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: Float8.self)
}

/// Written with masks rather than `clamped(lowerBound:upperBound:)`, whose generic implementation the optimiser
/// left as an out-of-line call per vector (half of all inference time when it did).
@inline(__always) func relu6(_ v: Float8) -> Float8 {
    let zero = Float8(repeating: 0), six = Float8(repeating: 6)
    return v.replacing(with: zero, where: v .< zero).replacing(with: six, where: v .> six)
}

@inline(__always) func relu6(_ v: Float) -> Float { min(max(v, 0), 6) }
