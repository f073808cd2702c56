import DedogKernels

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

/// A fully-connected layer: out[n × outputs] = x[n × inputs] · Wᵀ + bias, on the pointwise kernel (a batch of
/// feature rows is a 1×1 convolution over `n` pixels).
public struct Linear: Sendable {
    let layer: PointwiseConvolution
    public var inputs: Int { layer.inChannels }
    public var outputs: Int { layer.outChannels }

    /// `weight` is [outputs × inputs], `bias` [outputs].
    public init(inputs: Int, outputs: Int, weight: [Float], bias: [Float]) throws(ModelError) {
        layer = try PointwiseConvolution(inChannels: inputs, outChannels: outputs, weight: weight, bias: bias,
                                         clampsToSix: false)
    }

    init(inputs: Int, outputs: Int, weight: StoredFloats, bias: [Float]) throws(ModelError) {
        layer = try PointwiseConvolution(inChannels: inputs, outChannels: outputs, weight: weight, scale: nil, bias: bias,
                                         clampsToSix: false)
    }

    /// Output `o`'s row of the weight matrix and its bias (e.g. to start a new head from a known class).
    public func row(_ o: Int) -> (weight: [Float], bias: Float)? {
        (0..<outputs).contains(o) ? layer.row(o) : nil
    }

    /// Applies the layer to `batch` rows of `x`.
    public func callAsFunction(_ x: [Float], batch: Int, kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        guard batch > 0, x.count == batch * inputs else {
            throw .badInput(detail: "Linear: \(x.count) values are not \(batch) rows of \(inputs)")
        }
        return try layer(x, pixels: batch, kernels: kernels)
    }

    /// The outputs for several views of one image (`x` holds `views` rows), averaged: one row of `outputs`.
    public func averaged(_ x: [Float], views: Int) throws(ModelError) -> [Float] {
        let all = try self(x, batch: views)
        return (0..<outputs).map { o in (0..<views).reduce(0) { $0 + all[$1 * outputs + o] } / Float(views) }
    }
}
