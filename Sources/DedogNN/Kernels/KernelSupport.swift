/// What the convolution kernels share: their output size, the safe array entry point, and weight reordering.
enum KernelSupport {
    /// Output size of a TF-SAME convolution over a height × width input.
    static func outputSize(height: Int, width: Int, kernel: Int, stride: Int) -> (height: Int, width: Int) {
        (SamePadding.of(input: height, kernel: kernel, stride: stride).output,
         SamePadding.of(input: width, kernel: kernel, stride: stride).output)
    }

    /// Floats of guard zone on each side of a safe entry point's output: more than a vector store of the widest
    /// kernels (16 lanes) can reach past its end.
    static let guardFloats = 64
    /// What the guard zones hold: a NaN with a payload no arithmetic produces.
    static let guardPattern: UInt32 = 0x7FA5_C3E1

    /// Checks the input size, then runs `body` on the input and a zeroed output of `outputCount` floats, with
    /// guard zones before and after it: a kernel that writes outside its output (a masked store past the end,
    /// a slice that overlaps the next) is an error, not a silently corrupted neighbour.
    static func call<In>(_ input: [In], expecting count: Int, kernel name: String, outputCount: Int,
                         _ body: (UnsafePointer<In>, UnsafeMutablePointer<Float>) -> Void) throws(ModelError) -> [Float] {
        try guarded(input, expecting: count, kernel: name, outputCount: outputCount, zone: guardFloats,
                    fill: Float(bitPattern: guardPattern), intact: { $0.bitPattern == guardPattern }, unit: "float(s)", body)
    }

    /// Bytes of guard zone on each side of a byte output, and what they hold.
    static let guardBytes = 256
    static let guardByte: UInt8 = 0xA5

    /// `call` for kernels that store bytes: a guard zone of `guardBytes` on each side, every byte of it checked.
    static func callBytes<In>(_ input: [In], expecting count: Int, kernel name: String, outputCount: Int,
                              _ body: (UnsafePointer<In>, UnsafeMutablePointer<UInt8>) -> Void) throws(ModelError) -> [UInt8] {
        try guarded(input, expecting: count, kernel: name, outputCount: outputCount, zone: guardBytes,
                    fill: guardByte, intact: { $0 == guardByte }, unit: "byte(s)", body)
    }

    /// `zone` elements of `fill` on each side of a zeroed output, each checked with `intact` after `body` ran.
    private static func guarded<In, Out: Numeric>(_ input: [In], expecting count: Int, kernel name: String, outputCount: Int,
                                                  zone: Int, fill: Out, intact: (Out) -> Bool, unit: String,
                                                  _ body: (UnsafePointer<In>, UnsafeMutablePointer<Out>) -> Void) throws(ModelError) -> [Out] {
        guard input.count == count, count > 0 else {
            throw .badInput(detail: "\(name): \(input.count) input values, expected \(count)")
        }
        var out = [Out](repeating: fill, count: zone + outputCount + zone)
        for i in zone..<(zone + outputCount) { out[i] = 0 }
        input.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in body(x.baseAddress!, y.baseAddress! + zone) }
        }
        let clobbered = (0..<zone).filter { !intact(out[$0]) }.map { $0 - zone }
            + ((zone + outputCount)..<out.count).filter { !intact(out[$0]) }.map { $0 - zone }
        if let first = clobbered.first {
            throw .kernelOverrun(kernel: name, detail: "\(clobbered.count) \(unit) written outside its output of "
                                 + "\(outputCount), the first at offset \(first)")
        }
        return Array(out[zone..<(zone + outputCount)])
    }

    /// Refuses a layer whose weights or biases do not fit its shape.
    static func check(_ ok: Bool, _ layer: String, weights: Int, biases: Int) throws(ModelError) {
        if !ok { throw .badInput(detail: "\(layer): \(weights) weights and \(biases) biases do not fit the layer") }
    }

    /// [rows × taps] (checkpoint order) → [taps × rows], so that a kernel reads one tap's weights for
    /// consecutive channels contiguously.
    static func tapMajor<T: BitwiseCopyable>(_ weight: [T], rows: Int, taps: Int) -> [T] {
        // Callers have checked that `weight` holds rows × taps values.
        [T](unsafeUninitializedCapacity: rows * taps) { out, initialized in
            for t in 0..<taps {
                for r in 0..<rows { (out.baseAddress! + (t * rows + r)).initialize(to: weight[r * taps + t]) }
            }
            initialized = rows * taps
        }
    }
}

/// Output size and leading padding of a TensorFlow "SAME" convolution along one axis: the one rule the kernels and
/// their yardstick (the tests' reference kernels) share.
public enum SamePadding {
    public static func of(input: Int, kernel: Int, stride: Int) -> (output: Int, before: Int) {
        let output = (input + stride - 1) / stride
        let total = max((output - 1) * stride + kernel - input, 0)
        return (output, total / 2)
    }
}
