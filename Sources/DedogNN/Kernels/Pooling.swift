import DedogKernels
import struct Foundation.Data

/// Global average pooling of the channels-last activation: [n][hw][c] → features [n][c].
public enum GlobalAveragePool {
    /// Safe entry point: `input` is NHWC with `planeSize` = height × width.
    public static func features(_ input: [Float], batch: Int, channels: Int, planeSize: Int) throws(ModelError) -> [Float] {
        try KernelSupport.call(input, expecting: batch * planeSize * channels, kernel: "global average pool",
                           outputCount: batch * channels) {
            run($0, $1, channels: channels, batch: batch, planeSize: planeSize)
        }
    }

    static func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
                    channels: Int, batch: Int, planeSize: Int) {
        let scale = 1 / Float(planeSize)
        for n in 0..<batch {
            let out = output + n * channels
            for c in 0..<channels { out[c] = 0 }
            for p in 0..<planeSize {
                let row = input + (n * planeSize + p) * channels
                for c in 0..<channels { out[c] += row[c] }
            }
            for c in 0..<channels { out[c] *= scale }
        }
    }
}

/// A fully-connected layer: out[n × outputs] = x[n × inputs] · Wᵀ + bias, on its weights as the model file stores
/// them ([outputs × inputs], halves or floats), read by `dedog_linear`. Not packed: a head runs on a few rows per
/// photo, and packing the ImageNet head's 1.3 M weights meant writing 5 MB of fresh floats at every start. Copied
/// from the file, not read in place: a long-running server must not hold a mapping of a file that may be replaced
/// in place (`cp` over it) while it runs.
public struct Linear: Sendable {
    /// The weights as halves, or empty when they are `floats`.
    private let halves: [UInt16]
    private let floats: [Float]
    let bias: [Float]
    public let inputs: Int
    public let outputs: Int

    /// `weight` is [outputs × inputs], `bias` [outputs].
    public init(inputs: Int, outputs: Int, weight: [Float], bias: [Float]) throws(ModelError) {
        try Self.check(inputs: inputs, outputs: outputs, weights: weight.count, biases: bias.count)
        (halves, floats) = ([], weight)
        (self.bias, self.inputs, self.outputs) = (bias, inputs, outputs)
    }

    init(inputs: Int, outputs: Int, weight: StoredFloats, bias: [Float]) throws(ModelError) {
        let count = weight.bytes.count / (weight.half ? 2 : 4)
        try Self.check(inputs: inputs, outputs: outputs, weights: count, biases: bias.count)
        let bytes = weight.bytes
        if weight.half {
            (halves, floats) = ([UInt16](unsafeUninitializedCapacity: count) { out, n in n = bytes.copyBytes(to: out) / 2 }, [])
        } else {
            (halves, floats) = ([], [Float](unsafeUninitializedCapacity: count) { out, n in n = bytes.copyBytes(to: out) / 4 })
        }
        (self.bias, self.inputs, self.outputs) = (bias, inputs, outputs)
    }

    private static func check(inputs: Int, outputs: Int, weights: Int, biases: Int) throws(ModelError) {
        try KernelSupport.check(inputs > 0 && outputs > 0 && weights == inputs * outputs && biases == outputs,
                                "linear \(inputs)→\(outputs)", weights: weights, biases: biases)
    }

    /// Calls `body` with the weights' address and whether they are halves.
    private func withWeights<R>(_ body: (UnsafeRawPointer, Bool) -> R) -> R {
        halves.isEmpty ? floats.withUnsafeBytes { body($0.baseAddress!, false) } : halves.withUnsafeBytes { body($0.baseAddress!, true) }
    }

    /// Output `o`'s row of the weight matrix and its bias (e.g. to start a new head from a known class).
    public func row(_ o: Int) -> (weight: [Float], bias: Float)? {
        guard (0..<outputs).contains(o) else { return nil }
        let row = [Float](unsafeUninitializedCapacity: inputs) { out, initialized in
            withWeights { w, half in
                if half {
                    dedog_f16_to_f32(w.assumingMemoryBound(to: UInt16.self) + o * inputs, out.baseAddress!, inputs)
                } else {
                    out.baseAddress!.update(from: w.assumingMemoryBound(to: Float.self) + o * inputs, count: inputs)
                }
            }
            initialized = inputs
        }
        return (row, bias[o])
    }

    /// Applies the layer to `batch` rows of `x`.
    public func callAsFunction(_ x: [Float], batch: Int, kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        guard batch > 0, x.count == batch * inputs else {
            throw .badInput(detail: "Linear: \(x.count) values are not \(batch) rows of \(inputs)")
        }
        return try KernelSupport.call(x, expecting: batch * inputs, kernel: "linear", outputCount: batch * outputs) { x, y in
            withWeights { w, half in
                bias.withUnsafeBufferPointer { b in
                    var args = dedog_linear_args(in: x, in_stride: inputs, weight: w, half: half ? 1 : 0,
                                                 bias: b.baseAddress, inputs: Int32(inputs), rows: Int32(batch),
                                                 first_output: 0, end_output: Int32(outputs), out: y, out_stride: outputs)
                    dedog_linear(kernels.isa, &args)
                }
            }
        }
    }

    /// The outputs for several views of one image (`x` holds `views` rows), averaged: one row of `outputs`.
    public func averaged(_ x: [Float], views: Int) throws(ModelError) -> [Float] {
        let all = try self(x, batch: views)
        return (0..<outputs).map { o in (0..<views).reduce(0) { $0 + all[$1 * outputs + o] } / Float(views) }
    }
}
