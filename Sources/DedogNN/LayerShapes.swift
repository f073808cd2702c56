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

    public init(name: String, kind: Kind, inChannels: Int, outChannels: Int, kernel: Int, stride: Int,
                height: Int, width: Int, hasResidual: Bool) {
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
        let size = size ?? resolution
        var layers: [LayerShape] = []
        var hw = ReferenceKernels.samePadding(input: size, kernel: 3, stride: 2).output
        layers.append(LayerShape(name: "stem", kind: .stem, inChannels: 3, outChannels: Self.stemChannels,
                                 kernel: 3, stride: 2, height: size, width: size, hasResidual: false))
        for (index, stage, cin, stride) in blocks {
            let mid = cin * stage.expandRatio
            let name = "block_" + (index < 10 ? "0" : "") + String(index)
            if stage.expandRatio != 1 {
                layers.append(LayerShape(name: name, kind: .expand, inChannels: cin, outChannels: mid, kernel: 1,
                                         stride: 1, height: hw, width: hw, hasResidual: false))
            }
            layers.append(LayerShape(name: name, kind: .depthwise, inChannels: mid, outChannels: mid,
                                     kernel: stage.kernel, stride: stride, height: hw, width: hw, hasResidual: false))
            hw = ReferenceKernels.samePadding(input: hw, kernel: stage.kernel, stride: stride).output
            layers.append(LayerShape(name: name, kind: .project, inChannels: mid, outChannels: stage.outChannels,
                                     kernel: 1, stride: 1, height: hw, width: hw,
                                     hasResidual: stride == 1 && cin == stage.outChannels))
        }
        layers.append(LayerShape(name: "head", kind: .head, inChannels: stages.last!.outChannels,
                                 outChannels: Self.featureCount, kernel: 1, stride: 1,
                                 height: hw, width: hw, hasResidual: false))
        return layers
    }
}
