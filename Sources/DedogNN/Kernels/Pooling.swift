import CCBLAS

/// Global average pooling of the channels-last activation: [n][hw][c] → features [n][c].
public enum GlobalAveragePool {
    /// Safe entry point: `input` is NHWC with `planeSize` = height × width.
    public static func features(_ input: [Float], batch: Int, channels: Int, planeSize: Int) -> [Float] {
        KernelSupport.call(input, expecting: batch * planeSize * channels, kernel: "global average pool",
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

/// A fully-connected layer: out[n × outputs] = x[n × inputs] · Wᵀ + bias.
public struct Linear: Sendable {
    public let inputs: Int
    public let outputs: Int
    public let weight: [Float]  // [outputs × inputs]
    public let bias: [Float]

    public init(inputs: Int, outputs: Int, weight: [Float], bias: [Float]) {
        precondition(weight.count == inputs * outputs && bias.count == outputs)
        self.inputs = inputs
        self.outputs = outputs
        self.weight = weight
        self.bias = bias
    }

    /// Applies the layer to `batch` rows of `x`.
    public func callAsFunction(_ x: [Float], batch: Int) -> [Float] {
        precondition(x.count == batch * inputs, "Linear: \(x.count) values are not \(batch) rows of \(inputs)")
        var out = [Float](repeating: 0, count: batch * outputs)
        for n in 0..<batch { for o in 0..<outputs { out[n * outputs + o] = bias[o] } }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(batch), Int32(outputs), Int32(inputs),
                    1, x, Int32(inputs), weight, Int32(inputs), 1, &out, Int32(outputs))
        return out
    }

    /// The outputs for several views of one image (`x` holds `views` rows), averaged: one row of `outputs`.
    public func averaged(_ x: [Float], views: Int) -> [Float] {
        let all = self(x, batch: views)
        return (0..<outputs).map { o in (0..<views).reduce(0) { $0 + all[$1 * outputs + o] } / Float(views) }
    }
}
