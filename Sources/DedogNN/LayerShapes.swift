/// One convolution of the network at its real size: the table that kernel tests and `scripts/bench-kernels`
/// share, derived from `BlockArguments.lite0` rather than written out again.
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

    public var description: String {
        "\(name) \(kind.rawValue) \(kernel)×\(kernel)/\(stride) \(inChannels)→\(outChannels) @\(height)×\(width)"
    }

    /// Every convolution of EfficientNet-Lite0 for a `size`×`size` input, in execution order.
    public static func lite0(size: Int = 224) -> [LayerShape] {
        var layers: [LayerShape] = []
        var hw = ReferenceKernels.samePadding(input: size, kernel: 3, stride: 2).output
        layers.append(LayerShape(name: "stem", kind: .stem, inChannels: 3, outChannels: EfficientNetLite.stemChannels,
                                 kernel: 3, stride: 2, height: size, width: size, hasResidual: false))
        var index = 0
        for stage in BlockArguments.lite0 {
            for r in 0..<stage.repeats {
                let cin = r == 0 ? stage.inChannels : stage.outChannels
                let mid = cin * stage.expandRatio
                let stride = r == 0 ? stage.stride : 1
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
                index += 1
            }
        }
        layers.append(LayerShape(name: "head", kind: .head, inChannels: BlockArguments.lite0.last!.outChannels,
                                 outChannels: EfficientNetLite.featureCount, kernel: 1, stride: 1,
                                 height: hw, width: hw, hasResidual: false))
        return layers
    }
}
