/// A small detection neck and head on two of a backbone's inner feature maps, in the manner of a feature pyramid
/// (Lin et al., "Feature Pyramid Networks for Object Detection", 2017) cut to two levels: the stride-32 map (the
/// last block's output) and the stride-16 map (`Backbone.pyramidBlocks`) are each reduced by a 1×1 layer to
/// `channels`, the coarse one is doubled in size (nearest neighbour) and added to the fine one; `blocks` residual
/// blocks of a 3×3 depthwise layer (ReLU6) and a 1×1 layer give each cell some context; a 1×1 layer (ReLU6) and
/// a last 1×1 layer give `outputs` numbers per cell of the fine grid. What the numbers mean is the caller's
/// (`DedogBreedModel.DogDetector`). Runs in floats on the engine's kernels; the backbone stays as it is.
public struct FeaturePyramidHead: Sendable {
    public let fineChannels: Int
    public let coarseChannels: Int
    public let channels: Int
    public let outputs: Int
    let coarse: PointwiseConvolution
    let fine: PointwiseConvolution
    let blocks: [(depthwise: DepthwiseConvolution, pointwise: PointwiseConvolution)]
    let hidden: PointwiseConvolution
    let output: PointwiseConvolution

    /// The layers' weights, each [out × in] with its bias; the depthwise ones [channels × 3 × 3].
    public struct Weights: Sendable {
        public var coarse, fine: (weight: [Float], bias: [Float])
        public var blocks: [(depthwise: (weight: [Float], bias: [Float]), pointwise: (weight: [Float], bias: [Float]))]
        public var hidden, output: (weight: [Float], bias: [Float])

        public init(coarse: (weight: [Float], bias: [Float]), fine: (weight: [Float], bias: [Float]),
                    blocks: [(depthwise: (weight: [Float], bias: [Float]), pointwise: (weight: [Float], bias: [Float]))],
                    hidden: (weight: [Float], bias: [Float]), output: (weight: [Float], bias: [Float])) {
            (self.coarse, self.fine, self.blocks, self.hidden, self.output) = (coarse, fine, blocks, hidden, output)
        }
    }

    public init(fineChannels: Int, coarseChannels: Int, channels: Int, outputs: Int, weights w: Weights) throws(ModelError) {
        (self.fineChannels, self.coarseChannels, self.channels, self.outputs) = (fineChannels, coarseChannels, channels, outputs)
        coarse = try PointwiseConvolution(inChannels: coarseChannels, outChannels: channels, weight: w.coarse.weight,
                                          bias: w.coarse.bias, clampsToSix: false)
        fine = try PointwiseConvolution(inChannels: fineChannels, outChannels: channels, weight: w.fine.weight, bias: w.fine.bias,
                                        clampsToSix: false)
        var blocks: [(depthwise: DepthwiseConvolution, pointwise: PointwiseConvolution)] = []
        for b in w.blocks {
            blocks.append((try DepthwiseConvolution(channels: channels, kernel: Self.kernel, stride: 1, weight: b.depthwise.weight,
                                                    bias: b.depthwise.bias),
                           try PointwiseConvolution(inChannels: channels, outChannels: channels, weight: b.pointwise.weight,
                                                    bias: b.pointwise.bias, clampsToSix: false)))
        }
        self.blocks = blocks
        hidden = try PointwiseConvolution(inChannels: channels, outChannels: channels, weight: w.hidden.weight, bias: w.hidden.bias,
                                          clampsToSix: true)
        output = try PointwiseConvolution(inChannels: channels, outChannels: outputs, weight: w.output.weight, bias: w.output.bias,
                                          clampsToSix: false)
    }

    /// The depthwise layers' kernel.
    public static let kernel = 3

    /// The outputs of every cell of the fine grid, [rows × columns × outputs], from one image's fine map
    /// ([rows × columns × fineChannels]) and coarse map (half its size, rounded up).
    public func callAsFunction(fine x: ArraySlice<Float>, rows: Int, columns: Int, coarse c: ArraySlice<Float>, coarseRows: Int,
                               coarseColumns: Int, kernels: KernelSet = .best) throws(ModelError) -> [Float] {
        guard rows > 0, columns > 0, x.count == rows * columns * fineChannels else {
            throw .badInput(detail: "detection neck: \(x.count) values are not \(rows)×\(columns) cells of \(fineChannels)")
        }
        guard coarseRows == (rows + 1) / 2, coarseColumns == (columns + 1) / 2, c.count == coarseRows * coarseColumns * coarseChannels else {
            throw .badInput(detail: "detection neck: the coarse map (\(coarseRows)×\(coarseColumns)) is not half the fine one (\(rows)×\(columns))")
        }
        let small = try coarse(Array(c), pixels: coarseRows * coarseColumns, kernels: kernels)
        var up = [Float](repeating: 0, count: rows * columns * channels)
        for r in 0..<rows {
            for col in 0..<columns {
                let from = ((r / 2) * coarseColumns + col / 2) * channels, to = (r * columns + col) * channels
                for k in 0..<channels { up[to + k] = small[from + k] }
            }
        }
        let cells = rows * columns
        var p = try fine(Array(x), pixels: cells, residual: up, kernels: kernels)
        for b in blocks {
            let d = try b.depthwise(p, batch: 1, height: rows, width: columns, kernels: kernels)
            p = try b.pointwise(d, pixels: cells, residual: p, kernels: kernels)
        }
        return try output(try hidden(p, pixels: cells, kernels: kernels), pixels: cells, kernels: kernels)
    }
}
