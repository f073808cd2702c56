/// What the convolution kernels share: their output size, the safe array entry point, and weight reordering.
enum KernelSupport {
    /// Output size of a TF-SAME convolution over a height × width input.
    static func outputSize(height: Int, width: Int, kernel: Int, stride: Int) -> (height: Int, width: Int) {
        (ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride).output,
         ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride).output)
    }

    /// Checks the input size, then runs `body` on the input and a zeroed output of `outputCount` floats.
    static func call(_ input: [Float], expecting count: Int, kernel name: String, outputCount: Int,
                     _ body: (UnsafePointer<Float>, UnsafeMutablePointer<Float>) -> Void) throws(ModelError) -> [Float] {
        guard input.count == count, count > 0 else {
            throw .badInput(detail: "\(name): \(input.count) input values, expected \(count)")
        }
        var out = [Float](repeating: 0, count: outputCount)
        input.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in body(x.baseAddress!, y.baseAddress!) }
        }
        return out
    }

    /// Refuses a layer whose weights or biases do not fit its shape.
    static func check(_ ok: Bool, _ layer: String, weights: Int, biases: Int) throws(ModelError) {
        if !ok { throw .badInput(detail: "\(layer): \(weights) weights and \(biases) biases do not fit the layer") }
    }

    /// [rows × taps] (checkpoint order) → [taps × rows], so that a kernel reads one tap's weights for
    /// consecutive channels contiguously.
    static func tapMajor(_ weight: [Float], rows: Int, taps: Int) -> [Float] {
        (0..<(taps * rows)).map { i in weight[(i % rows) * taps + i / rows] }
    }
}
