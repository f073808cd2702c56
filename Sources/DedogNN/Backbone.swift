/// One row of the EfficientNet block table: a stage of `repeats` MBConv blocks.
public struct BlockArguments: Sendable, Equatable {
    public var kernel: Int
    public var stride: Int
    public var expandRatio: Int
    public var inChannels: Int
    public var outChannels: Int
    public var repeats: Int

    /// EfficientNet-B0's stages, which EfficientNet-Lite keeps (without squeeze-excitation and swish). Every
    /// variant is this table scaled; see `Backbone`.
    public static let base: [BlockArguments] = [
        .init(kernel: 3, stride: 1, expandRatio: 1, inChannels: 32, outChannels: 16, repeats: 1),
        .init(kernel: 3, stride: 2, expandRatio: 6, inChannels: 16, outChannels: 24, repeats: 2),
        .init(kernel: 5, stride: 2, expandRatio: 6, inChannels: 24, outChannels: 40, repeats: 2),
        .init(kernel: 3, stride: 2, expandRatio: 6, inChannels: 40, outChannels: 80, repeats: 3),
        .init(kernel: 5, stride: 1, expandRatio: 6, inChannels: 80, outChannels: 112, repeats: 3),
        .init(kernel: 5, stride: 2, expandRatio: 6, inChannels: 112, outChannels: 192, repeats: 4),
        .init(kernel: 3, stride: 1, expandRatio: 6, inChannels: 192, outChannels: 320, repeats: 1),
    ]
}

/// An EfficientNet-Lite variant as data: the base block table scaled by width and depth coefficients, as
/// TensorFlow's `efficientnet_lite_builder` does it. Lite keeps the stem at 32 and the head at 1280 channels
/// and does not scale the repeats of the first and last stage. A model file's `architecture` names one.
public struct Backbone: Sendable, Equatable, CustomStringConvertible {
    /// The model file's `architecture` value, e.g. `efficientnet-lite0`.
    public let architecture: String
    public let widthCoefficient: Double
    public let depthCoefficient: Double
    /// The input size the network was trained at (its crop); photos are resized to this / 0.875 first.
    public let resolution: Int
    /// The scaled stages.
    public let stages: [BlockArguments]

    public static let stemChannels = 32
    public static let featureCount = 1280

    init(architecture: String, width: Double, depth: Double, resolution: Int) {
        self.architecture = architecture
        widthCoefficient = width
        depthCoefficient = depth
        self.resolution = resolution
        let last = BlockArguments.base.count - 1
        stages = BlockArguments.base.enumerated().map { i, stage in
            var s = stage
            s.inChannels = i == 0 ? Self.stemChannels : Self.roundFilters(stage.inChannels, width)
            s.outChannels = Self.roundFilters(stage.outChannels, width)
            if i != 0 && i != last { s.repeats = Int((depth * Double(stage.repeats)).rounded(.up)) }
            return s
        }
    }

    public static let lite0 = Backbone(architecture: "efficientnet-lite0", width: 1.0, depth: 1.0, resolution: 224)
    public static let lite1 = Backbone(architecture: "efficientnet-lite1", width: 1.0, depth: 1.1, resolution: 240)
    public static let lite2 = Backbone(architecture: "efficientnet-lite2", width: 1.1, depth: 1.2, resolution: 260)
    public static let all: [Backbone] = [.lite0, .lite1, .lite2]

    /// How many pixels larger than its resolution a trained model classifies by default (`dedog train
    /// --test-size-increase`; the bundled breed models do): networks pretrained on random crops see objects
    /// larger than a centre crop shows them ("FixRes"). Measured on Stanford Dogs validation photos.
    public static let testSizeIncrease = 32

    /// The input sizes dedog's models run this backbone at: its resolution (ImageNet bases) and the larger one
    /// trained models classify at. Kernel tests and benchmarks use these.
    public var inputSizes: [Int] { [resolution, resolution + Self.testSizeIncrease] }

    /// The variant a model file's `architecture` names.
    public static func named(_ architecture: String) -> Backbone? { all.first { $0.architecture == architecture } }

    /// The short name users type (`lite2` for `efficientnet-lite2`); other names are returned as they are.
    public static func shortName(_ architecture: String) -> String {
        architecture.hasPrefix("efficientnet-") ? String(architecture.dropFirst("efficientnet-".count)) : architecture
    }

    /// Short name: `lite0`, `lite1`, `lite2`.
    public var description: String { Self.shortName(architecture) }

    public var blockCount: Int { stages.reduce(0) { $0 + $1.repeats } }

    /// The blocks a detection neck reads (`FeaturePyramidHead`): the last one at stride 16 (112 channels for Lite0
    /// and Lite1) and the last one of all, at stride 32 (320).
    public var pyramidBlocks: (fine: Int, coarse: Int) {
        var stride = 2, fine = 0  // the stem halves the photo
        for spec in blocks {
            stride *= spec.stride
            if stride == 16 { fine = spec.index }
        }
        return (fine, blockCount - 1)
    }

    /// Channels of block `index`'s output.
    public func outChannels(ofBlock index: Int) -> Int? {
        let all = blocks
        return all.indices.contains(index) ? all[index].outChannels : nil
    }

    /// Channels scaled by `width` and rounded to a multiple of 8, never more than 10 % down.
    static func roundFilters(_ filters: Int, _ width: Double) -> Int {
        let scaled = Double(filters) * width
        var rounded = max(8, Int(scaled + 4) / 8 * 8)
        if Double(rounded) < 0.9 * scaled { rounded += 8 }
        return rounded
    }

    /// Every block in execution order, as the block table makes it: the one place blocks are numbered, named
    /// and given their channels, stride and residual. The network's weights, its execution plans and the layer
    /// table (`layers`) are all built from this list.
    var blocks: [BlockSpec] {
        var result: [BlockSpec] = []
        for stage in stages {
            for r in 0..<stage.repeats {
                let inChannels = r == 0 ? stage.inChannels : stage.outChannels
                result.append(BlockSpec(index: result.count, inChannels: inChannels,
                                        expandedChannels: inChannels * stage.expandRatio, outChannels: stage.outChannels,
                                        kernel: stage.kernel, stride: r == 0 ? stage.stride : 1))
            }
        }
        return result
    }
}

/// One MBConv block of a backbone: 1×1 expand (when `expandedChannels` differ from `inChannels`) → k×k
/// depthwise → 1×1 project, plus its input when the shapes allow.
struct BlockSpec: Sendable, Equatable {
    let index: Int
    let inChannels: Int
    let expandedChannels: Int
    let outChannels: Int
    let kernel: Int
    let stride: Int

    /// `block_00`, `block_01`, …: the block's name in the layer table, plans and golden tensors.
    var name: String { "block_" + (index < 10 ? "0" : "") + String(index) }
    var expands: Bool { expandedChannels != inChannels }
    /// The block adds its input to its output when neither the size nor the channels change.
    var hasResidual: Bool { stride == 1 && inChannels == outChannels }
}
