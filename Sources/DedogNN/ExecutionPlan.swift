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
        /// A layer of a network loaded to run in 8 bits only: `QuantizedNetwork` finds it by the step's kind and
        /// block.
        case bytes
    }

    /// Where a step reads or writes: the network input, one of the plan's buffers, or the features.
    enum Place: Equatable, Sendable {
        case input
        case buffer(Int)
        case features
    }

    /// What a step does: one layer of the table, a whole block run band by band, or the pooling.
    enum Kind: String, Sendable {
        case stem, expand, depthwise, project, head, block, pool

        init(_ layer: LayerShape.Kind) {
            switch layer {
            case .stem: self = .stem
            case .expand: self = .expand
            case .depthwise: self = .depthwise
            case .project: self = .project
            case .head: self = .head
            }
        }
    }

    struct Step: Sendable {
        let operation: Operation
        let kind: Kind
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
        /// The step's row of the layer table (nil for banded blocks and pooling).
        let layer: LayerShape?

        /// Multiply-accumulates of the step.
        var multiplyAccumulates: Int {
            if case let .block(b) = operation {
                let mid = b.channels, k = b.kernel
                let expand = b.expands ? height * width * b.spec.inChannels * mid : 0
                return expand + outHeight * outWidth * mid * (k * k + outChannels)
            }
            return layer?.multiplyAccumulates ?? 0
        }

        /// Kernel/stride, channels and input size, e.g. `3/2 16→96→24 @112×112`.
        var shape: String {
            let size = "@\(height)×\(width)"
            switch operation {
            case let .block(b):
                let channels = [b.expands ? b.spec.inChannels : nil, b.channels, outChannels].compactMap { $0 }
                return "\(b.kernel)/\(b.stride) " + channels.map(String.init).joined(separator: "→") + " " + size
            case .pool: return "\(outChannels) " + size
            default:
                guard let l = layer else { return size }
                return "\(l.kernel)/\(l.stride) \(l.inChannels)→\(l.outChannels) " + size
            }
        }
    }

    let height, width: Int
    private(set) var steps: [Step] = []
    /// Floats per buffer.
    private(set) var bufferSizes: [Int] = [0, 0, 0]

    /// The grid of cells the head's activations form: the pooling step's input.
    var headGrid: (rows: Int, columns: Int) {
        steps.last { $0.kind == .pool }.map { ($0.height, $0.width) } ?? (0, 0)
    }

    /// Blocks whose expanded activation is larger than this many bytes run band by band (`BandedBlock`).
    static let bandedAbove = 1 << 20
    /// In 8 bits, blocks whose expanded activation is larger than this many bytes (each byte one value).
    static let bytesBandedAbove = 1 << 18

    /// `parts`: how many threads share one image's pass (each banded block needs scratch for each);
    /// `bandsBlocks`: whether large blocks run band by band; `bytes`: whether the plan is for the 8-bit layers
    /// (activations of one byte, no float layers needed). The steps follow the backbone's layer table
    /// (`Backbone.layers`), which gives every layer's sizes, channels and residual.
    init(network: EfficientNetLite, height: Int, width: Int, parts: Int, bandsBlocks: Bool = true, bytes: Bool = false) {
        self.height = height
        self.width = width
        let table = network.backbone.layers(height: height, width: width)
        // Block inputs and outputs alternate between buffers 0 and 1; the depthwise output goes to 2.
        var current = 0
        for layer in table where layer.kind == .stem {
            append(.stem(network.stem), layer, from: .input, to: .buffer(current), tap: true)
        }
        let floats = network.floatLayers
        for spec in network.backbone.blocks {
            let block = floats?.blocks.first { $0.spec.index == spec.index }
            let rows = table.filter { $0.block == spec.index }
            guard let first = rows.first, let last = rows.last else { continue }
            let other = 1 - current
            let elementSize = bytes ? 1 : 4
            if bandsBlocks, bytes || block != nil,
               elementSize * spec.expandedChannels * first.height * first.width > (bytes ? Self.bytesBandedAbove : Self.bandedAbove) {
                let banded = BandedBlock(spec: spec, block: bytes ? nil : block, height: first.height, width: first.width,
                                         elementSize: elementSize)
                // Floats per buffer: the bytes of a plan for 8 bits take a quarter.
                bufferSizes[2] = max(bufferSizes[2], (parts * banded.scratchPerPart * banded.elementSize + 3) / 4)
                // The banded block adds its own input where the block has a residual.
                let (oh, ow) = last.outputSize
                append(Step(operation: .block(banded), kind: .block, input: .buffer(current), output: .buffer(other),
                            residual: nil, height: first.height, width: first.width, outChannels: last.outChannels,
                            outHeight: oh, outWidth: ow, name: spec.name, isTap: true, layer: nil))
                current = other
                continue
            }
            var depthwiseInput = Place.buffer(current)
            for layer in rows {
                switch layer.kind {
                case .expand:
                    guard spec.expands else { continue }
                    append(block?.expand.map { .pointwise($0) } ?? .bytes, layer, from: .buffer(current), to: .buffer(other))
                    depthwiseInput = .buffer(other)
                case .depthwise:
                    append(block.map { .depthwise($0.depthwise) } ?? .bytes, layer, from: depthwiseInput, to: .buffer(2))
                case .project:
                    append(block.map { .pointwise($0.project) } ?? .bytes, layer, from: .buffer(2), to: .buffer(other),
                           residual: layer.hasResidual ? .buffer(current) : nil, tap: true)
                case .stem, .head:
                    continue
                }
            }
            current = other
        }
        for layer in table where layer.kind == .head {
            append(floats.map { .pointwise($0.head) } ?? .bytes, layer, from: .buffer(current), to: .buffer(1 - current), tap: true)
            let (h, w) = layer.outputSize
            append(Step(operation: .pool, kind: .pool, input: .buffer(1 - current), output: .features, residual: nil,
                        height: h, width: w, outChannels: layer.outChannels, outHeight: 1, outWidth: 1, name: "pool",
                        isTap: false, layer: nil))
        }
    }

    /// A step that runs `layer` of the table.
    private mutating func append(_ operation: Operation, _ layer: LayerShape, from input: Place, to output: Place,
                                 residual: Place? = nil, tap: Bool = false) {
        let (oh, ow) = layer.outputSize
        append(Step(operation: operation, kind: Kind(layer.kind), input: input, output: output,
                    residual: residual, height: layer.height, width: layer.width, outChannels: layer.outChannels,
                    outHeight: oh, outWidth: ow, name: layer.name, isTap: tap, layer: layer))
    }

    private mutating func append(_ step: Step) {
        if case let .buffer(i) = step.output { bufferSizes[i] = max(bufferSizes[i], step.outChannels * step.outHeight * step.outWidth) }
        steps.append(step)
    }
}
