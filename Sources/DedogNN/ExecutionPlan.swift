/// Every step of one image's forward pass for a (network, input size): which layer runs, from which buffer into
/// which, at what size, and how large each buffer must be. Built once and then run as often as wanted, so
/// that sizing the buffers and running the layers cannot disagree.
struct ExecutionPlan: Sendable {
    enum Operation: Sendable {
        case stem(StemConvolution)
        case pointwise(PointwiseConvolution)
        case depthwise(DepthwiseConvolution)
        /// A whole MBConv block, band by band (its scratch in buffer 2).
        case block(BandedBlock)
        /// Global average pooling into the features.
        case pool
    }

    /// Where a step reads or writes: the network input, one of the plan's buffers, or the features.
    enum Place: Equatable, Sendable {
        case input
        case buffer(Int)
        case features
    }

    struct Step: Sendable {
        let operation: Operation
        let input: Place
        let output: Place
        /// The tensor added to the output (the block input, for residual blocks).
        let residual: Place?
        /// Spatial size of the input, and channels and spatial size of the output.
        let height, width: Int
        let outChannels, outHeight, outWidth: Int
        /// The layer's place in the network: `stem`, `block_00`…, `head`, `pool`.
        let name: String
        /// Whether the step completes an activation that golden tests compare (stem, block outputs, head).
        let isTap: Bool

        /// Multiply-accumulates of the step.
        var multiplyAccumulates: Int {
            if case let .block(b) = operation {
                let mid = b.block.depthwise.channels, k = b.block.depthwise.kernel
                let expand = b.block.expand.map { height * width * $0.inChannels * mid } ?? 0
                return expand + outHeight * outWidth * mid * (k * k + outChannels)
            }
            return layer?.multiplyAccumulates ?? 0
        }

        /// Kernel/stride, channels and input size, e.g. `3/2 16→96→24 @112×112`.
        var shape: String {
            let size = "@\(height)×\(width)"
            switch operation {
            case let .block(b):
                let d = b.block.depthwise
                let channels = [b.block.expand?.inChannels, d.channels, outChannels].compactMap { $0 }
                return "\(d.kernel)/\(d.stride) " + channels.map(String.init).joined(separator: "→") + " " + size
            case .pool: return "\(outChannels) " + size
            default:
                guard let l = layer else { return size }
                return "\(l.kernel)/\(l.stride) \(l.inChannels)→\(l.outChannels) " + size
            }
        }

        /// What the step does: a layer kind, `block` (a banded block) or `pool`.
        var kind: String {
            switch operation {
            case .block: "block"
            case .pool: "pool"
            default: layer?.kind.rawValue ?? ""
            }
        }

        /// The step's convolution as a row of the layer table (nil for banded blocks and pooling).
        var layer: LayerShape? {
            let shape: (LayerShape.Kind, Int, Int, Int)  // kind, input channels, kernel, stride
            switch operation {
            case let .stem(c): shape = (.stem, c.inChannels, c.kernel, c.stride)
            case let .pointwise(c): shape = (name == "head" ? .head : residual != nil || !c.clampsToSix ? .project : .expand, c.inChannels, 1, 1)
            case let .depthwise(c): shape = (.depthwise, c.channels, c.kernel, c.stride)
            case .block, .pool: return nil
            }
            return LayerShape(name: name, kind: shape.0, inChannels: shape.1, outChannels: outChannels,
                              kernel: shape.2, stride: shape.3, height: height, width: width, hasResidual: residual != nil)
        }
    }

    let height, width: Int
    private(set) var steps: [Step] = []
    /// Floats per buffer.
    private(set) var bufferSizes: [Int] = [0, 0, 0]

    /// Blocks whose expanded activation is larger than this many bytes run band by band (`BandedBlock`).
    static let bandedAbove = 1 << 20

    /// `parts`: how many threads share one image's pass (each banded block needs scratch for each);
    /// `bandsBlocks`: whether large blocks run band by band.
    init(network: EfficientNetLite, height: Int, width: Int, parts: Int, bandsBlocks: Bool = true) {
        self.height = height
        self.width = width
        // Block inputs and outputs alternate between buffers 0 and 1; the depthwise output goes to 2.
        var current = 0, h = height, w = width
        let (sh, sw) = network.stem.outputSize(height: h, width: w)
        append(.stem(network.stem), "stem", from: .input, to: .buffer(current), h, w, network.stem.outChannels, sh, sw,
               tap: true)
        h = sh; w = sw
        for (i, block) in network.blocks.enumerated() {
            let name = "block_" + (i < 10 ? "0" : "") + String(i)
            let other = 1 - current
            if bandsBlocks, 4 * block.depthwise.channels * h * w > Self.bandedAbove {
                let banded = BandedBlock(block: block, height: h, width: w)
                bufferSizes[2] = max(bufferSizes[2], parts * banded.scratchPerPart)
                // The banded block adds its own input where the block has a residual.
                append(.block(banded), name, from: .buffer(current), to: .buffer(other), h, w, block.project.outChannels,
                       banded.outHeight, banded.outWidth, tap: true)
                current = other
                h = banded.outHeight; w = banded.outWidth
                continue
            }
            var depthwiseInput = Place.buffer(current)
            if let expand = block.expand {
                append(.pointwise(expand), name, from: .buffer(current), to: .buffer(other), h, w, expand.outChannels, h, w)
                depthwiseInput = .buffer(other)
            }
            let (oh, ow) = block.depthwise.outputSize(height: h, width: w)
            append(.depthwise(block.depthwise), name, from: depthwiseInput, to: .buffer(2), h, w, block.depthwise.channels,
                   oh, ow)
            append(.pointwise(block.project), name, from: .buffer(2), to: .buffer(other), oh, ow,
                   block.project.outChannels, oh, ow, residual: block.hasResidual ? .buffer(current) : nil, tap: true)
            current = other
            h = oh; w = ow
        }
        let head = network.head
        append(.pointwise(head), "head", from: .buffer(current), to: .buffer(1 - current), h, w, head.outChannels, h, w,
               tap: true)
        append(.pool, "pool", from: .buffer(1 - current), to: .features, h, w, head.outChannels, 1, 1)
    }

    private mutating func append(_ operation: Operation, _ name: String, from input: Place, to output: Place,
                                 _ h: Int, _ w: Int, _ channels: Int, _ oh: Int, _ ow: Int,
                                 residual: Place? = nil, tap: Bool = false) {
        if case let .buffer(i) = output { bufferSizes[i] = max(bufferSizes[i], channels * oh * ow) }
        steps.append(Step(operation: operation, input: input, output: output, residual: residual, height: h, width: w,
                          outChannels: channels, outHeight: oh, outWidth: ow, name: name, isTap: tap))
    }
}
