import Testing
import DedogNN

/// A small deterministic generator so that every run tests the same numbers.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int32(truncatingIfNeeded: state >> 33)) / Float(Int32.max)  // about −1…1
    }
    mutating func floats(_ n: Int, scale: Float = 1) -> [Float] { (0..<n).map { _ in next() * scale } }
}

/// Each fast kernel against the plain reference, at every real layer shape of EfficientNet-Lite0, batch 2,
/// one and two threads. Tolerance: float32 sums of up to 1152 products of values ≤ ~3 (weights ≤ 0.5) carry
/// rounding of order 1e-6 relative; 1e-4 · (1 + max |reference|) is far above that and far below any indexing
/// or padding mistake, which changes values by O(0.1).
@Suite struct KernelTests {
    static let batch = 2

    @Test(arguments: LayerShape.lite0())
    func fastKernelMatchesReference(_ layer: LayerShape) {
        var random = SeededRandom(state: layer.description.utf8.reduce(7) { $0 &* 31 &+ UInt64($1) })
        let n = Self.batch, h = layer.height, w = layer.width
        let cin = layer.inChannels, cout = layer.outChannels, k = layer.kernel
        let groups = layer.kind == .depthwise ? cin : 1
        let weight = random.floats(cout * (cin / groups) * k * k, scale: 0.5)
        let bias = random.floats(cout, scale: 0.5)
        // Inputs in the range activations really have: ReLU6 outputs are 0…6.
        let input = random.floats(n * cin * h * w, scale: 3).map { abs($0) }

        let reference = ReferenceKernels.convolution(input, n: n, cin: cin, h: h, w: w, weight: weight, bias: bias,
                                                     cout: cout, kernel: k, stride: layer.stride, groups: groups)
        let plane = reference.oh * reference.ow
        var expected = reference.values
        let residual = random.floats(n * cout * plane)
        switch layer.kind {
        case .project where layer.hasResidual: expected = ReferenceKernels.add(expected, residual)
        case .project: break
        default: expected = ReferenceKernels.relu6(expected)
        }

        for threads in [1, 2] {
            let nhwcInput = Layout.nhwc(fromNCHW: input, batch: n, channels: cin, plane: h * w)
            let nhwc: [Float]
            switch layer.kind {
            case .stem:
                nhwc = StemConvolution(inChannels: cin, outChannels: cout, kernel: k, stride: layer.stride,
                                       weight: weight, bias: bias)(input, batch: n, height: h, width: w, threads: threads)
            case .depthwise:
                nhwc = DepthwiseConvolution(channels: cin, kernel: k, stride: layer.stride, weight: weight, bias: bias)(
                    nhwcInput, batch: n, height: h, width: w, threads: threads)
            case .expand, .project, .head:
                let conv = PointwiseConvolution(inChannels: cin, outChannels: cout, weight: weight, bias: bias,
                                                clampsToSix: layer.kind != .project)
                let res = layer.hasResidual ? Layout.nhwc(fromNCHW: residual, batch: n, channels: cout, plane: plane) : nil
                nhwc = conv(nhwcInput, pixels: n * h * w, residual: res, threads: threads)
            }
            let ours = Layout.nchw(fromNHWC: nhwc, batch: n, channels: cout, plane: plane)
            let worst = zip(ours, expected).map { abs($0 - $1) }.max() ?? .infinity
            let bound = 1e-4 * (1 + expected.map(abs).max()!)
            #expect(ours.count == expected.count)
            #expect(worst <= bound, "\(layer), \(threads) thread(s): max difference \(worst) > \(bound)")
        }
    }

    @Test func layerTableMatchesTheArchitecture() {
        let layers = LayerShape.lite0()
        #expect(layers.count == 1 + 15 * 3 + 2 + 1)  // stem, 15 blocks with expand, block 0 without, head
        #expect(layers.filter { $0.kind == .project && $0.hasResidual }.map(\.name)
                == ["block_02", "block_04", "block_06", "block_07", "block_09", "block_10", "block_12", "block_13", "block_14"])
        // Multiply-accumulates per image, as counted in ../shared/reference/efficientnet-lite0/architecture.json
        // (385,187,552 including the 1,280,000 of the classifier).
        let macs = layers.reduce(0) { total, l in
            let out = ReferenceKernels.samePadding(input: l.height, kernel: l.kernel, stride: l.stride).output
            let perOutput = l.kind == .depthwise ? l.kernel * l.kernel : l.inChannels * l.kernel * l.kernel
            return total + l.outChannels * out * out * perOutput
        }
        #expect(macs + 1_280_000 == 385_187_552)
    }

    @Test func referencePaddingIsTensorFlowSame() {
        #expect(ReferenceKernels.samePadding(input: 224, kernel: 3, stride: 2) == (112, 0))
        #expect(ReferenceKernels.samePadding(input: 56, kernel: 5, stride: 2) == (28, 1))
        #expect(ReferenceKernels.samePadding(input: 14, kernel: 5, stride: 1) == (14, 2))
        #expect(ReferenceKernels.samePadding(input: 7, kernel: 3, stride: 2) == (4, 1))
    }

    @Test func globalAveragePoolMatchesReference() {
        var random = SeededRandom(state: 17)
        let (n, c, hw) = (2, 1280, 49)
        let nchw = random.floats(n * c * hw, scale: 6)
        let ours = GlobalAveragePool.features(Layout.nhwc(fromNCHW: nchw, batch: n, channels: c, plane: hw),
                                     batch: n, channels: c, planeSize: hw)
        let expected = ReferenceKernels.globalAveragePool(nchw, n: n, c: c, hw: hw)
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1e-5 * (1 + abs($1)) })
    }

    @Test func linearMatchesReference() {
        var random = SeededRandom(state: 99)
        let x = random.floats(3 * 1280), w = random.floats(10 * 1280, scale: 0.1), b = random.floats(10)
        let ours = Linear(inputs: 1280, outputs: 10, weight: w, bias: b)(x, batch: 3)
        let expected = ReferenceKernels.linear(x, n: 3, inputs: 1280, weight: w, bias: b, outputs: 10)
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1e-4 * (1 + abs($1)) })
    }
}
