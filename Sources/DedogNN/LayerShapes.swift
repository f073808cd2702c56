/// One convolution of a backbone at its real size: the table that kernel tests and `DedogBench layers` share,
/// derived from the backbone's block table rather than written out again.
public struct LayerShape: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case stem, expand, depthwise, project, head }
    public let name: String
    public let kind: Kind
    public let inChannels: Int
    public let outChannels: Int
    public let kernel: Int
    public let stride: Int
    /// Spatial size of the layer's input.
    public let height: Int
    public let width: Int
    public let hasResidual: Bool
    /// The block the layer belongs to (nil for the stem and the head).
    public let block: Int?

    public init(name: String, kind: Kind, inChannels: Int, outChannels: Int, kernel: Int, stride: Int,
                height: Int, width: Int, hasResidual: Bool, block: Int? = nil) {
        self.block = block
        self.name = name
        self.kind = kind
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.kernel = kernel
        self.stride = stride
        self.height = height
        self.width = width
        self.hasResidual = hasResidual
    }

    public var description: String {
        "\(name) \(kind.rawValue) \(kernel)×\(kernel)/\(stride) \(inChannels)→\(outChannels) @\(height)×\(width)"
    }

    /// Spatial size of the layer's output.
    public var outputSize: (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    /// Multiply-accumulates per image.
    public var multiplyAccumulates: Int {
        let (oh, ow) = outputSize
        let perOutput = kind == .depthwise ? kernel * kernel : inChannels * kernel * kernel
        return outChannels * oh * ow * perOutput
    }
}

extension Backbone {
    /// Every convolution for a `size`×`size` input (by default the backbone's resolution), in execution order.
    public func layers(size: Int? = nil) -> [LayerShape] {
        layers(height: size ?? resolution, width: size ?? resolution)
    }

    /// Every convolution for a `height`×`width` input, in execution order: the network walked once from its
    /// block table (`blocks`). Execution plans are built from this table, and kernel tests and benchmarks
    /// iterate it.
    public func layers(height: Int, width: Int) -> [LayerShape] {
        var h = height, w = width
        var layers = [LayerShape(name: "stem", kind: .stem, inChannels: 3, outChannels: Self.stemChannels,
                                 kernel: 3, stride: 2, height: h, width: w, hasResidual: false)]
        (h, w) = layers[0].outputSize
        for block in blocks {
            func layer(_ kind: LayerShape.Kind, _ inChannels: Int, _ outChannels: Int, kernel: Int = 1, stride: Int = 1,
                       residual: Bool = false) -> LayerShape {
                LayerShape(name: block.name, kind: kind, inChannels: inChannels, outChannels: outChannels, kernel: kernel,
                           stride: stride, height: h, width: w, hasResidual: residual, block: block.index)
            }
            if block.expands { layers.append(layer(.expand, block.inChannels, block.expandedChannels)) }
            let depthwise = layer(.depthwise, block.expandedChannels, block.expandedChannels, kernel: block.kernel,
                                  stride: block.stride)
            layers.append(depthwise)
            (h, w) = depthwise.outputSize
            layers.append(layer(.project, block.expandedChannels, block.outChannels, residual: block.hasResidual))
        }
        layers.append(LayerShape(name: "head", kind: .head, inChannels: stages.last?.outChannels ?? 0,
                                 outChannels: Self.featureCount, kernel: 1, stride: 1, height: h, width: w,
                                 hasResidual: false))
        return layers
    }
}
