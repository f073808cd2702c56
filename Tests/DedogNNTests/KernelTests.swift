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

/// Each fast kernel, in every build this CPU runs (portable, AVX2, AVX-512), against the plain reference, at
/// every real layer shape of every backbone (`Backbone.all`) and at shapes that leave partial tiles, batch 1
/// and 2, one and two threads. Tolerance: float32 sums of up to 1152 products of values ≤ ~3 (weights ≤ 0.5) carry
/// rounding of order 1e-6 relative; 1e-4 · (1 + max |reference|) is far above that and far below any indexing
/// or padding mistake, which changes values by O(0.1).
@Suite struct KernelTests {
    /// Shapes no Lite0 layer has: channel counts that are not multiples of 16 (a partial panel or channel tile),
    /// odd and tiny images (windows that touch both edges), strides on odd sizes.
    static let awkward: [LayerShape] = [
        LayerShape(name: "odd", kind: .stem, inChannels: 3, outChannels: 24, kernel: 3, stride: 2, height: 9, width: 13, hasResidual: false),
        LayerShape(name: "odd", kind: .depthwise, inChannels: 40, outChannels: 40, kernel: 5, stride: 2, height: 11, width: 7, hasResidual: false),
        LayerShape(name: "odd", kind: .depthwise, inChannels: 88, outChannels: 88, kernel: 3, stride: 1, height: 3, width: 17, hasResidual: false),
        LayerShape(name: "odd", kind: .depthwise, inChannels: 8, outChannels: 8, kernel: 5, stride: 1, height: 2, width: 2, hasResidual: false),
        LayerShape(name: "odd", kind: .expand, inChannels: 7, outChannels: 41, kernel: 1, stride: 1, height: 5, width: 3, hasResidual: false),
        LayerShape(name: "odd", kind: .project, inChannels: 88, outChannels: 88, kernel: 1, stride: 1, height: 3, width: 11, hasResidual: true),
        LayerShape(name: "odd", kind: .project, inChannels: 1, outChannels: 1, kernel: 1, stride: 1, height: 1, width: 1, hasResidual: true),
    ]

    /// Every distinct layer shape of every backbone at every input size models use (repeated blocks share
    /// shapes), then the awkward ones.
    static let shapes: [LayerShape] = {
        var seen = Set<String>()
        let real = Backbone.all.flatMap { backbone in backbone.inputSizes.flatMap { backbone.layers(size: $0) } }
        return (real + awkward).filter {
            seen.insert("\($0.kind) \($0.kernel)/\($0.stride) \($0.inChannels)→\($0.outChannels) @\($0.height)×\($0.width) \($0.hasResidual)").inserted
        }
    }()

    @Test(arguments: shapes)
    func fastKernelMatchesReference(_ layer: LayerShape) throws {
        for batch in [1, 2] { try check(layer, batch: batch) }
    }

    func check(_ layer: LayerShape, batch n: Int) throws {
        var random = SeededRandom(state: layer.description.utf8.reduce(UInt64(n)) { $0 &* 31 &+ UInt64($1) })
        let h = layer.height, w = layer.width
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

        for kernels in KernelSet.supported {
        for threads in [1, 2] {
            let nhwcInput = try Layout.nhwc(fromNCHW: input, batch: n, channels: cin, plane: h * w)
            let nhwc: [Float]
            switch layer.kind {
            case .stem:
                nhwc = try StemConvolution(inChannels: cin, outChannels: cout, kernel: k, stride: layer.stride,
                                       weight: weight, bias: bias)(input, batch: n, height: h, width: w, threads: threads,
                                                                   kernels: kernels)
            case .depthwise:
                nhwc = try DepthwiseConvolution(channels: cin, kernel: k, stride: layer.stride, weight: weight, bias: bias)(
                    nhwcInput, batch: n, height: h, width: w, threads: threads, kernels: kernels)
            case .expand, .project, .head:
                let conv = try PointwiseConvolution(inChannels: cin, outChannels: cout, weight: weight, bias: bias,
                                                clampsToSix: layer.kind != .project)
                let res = layer.hasResidual ? try Layout.nhwc(fromNCHW: residual, batch: n, channels: cout, plane: plane) : nil
                nhwc = try conv(nhwcInput, pixels: n * h * w, residual: res, threads: threads, kernels: kernels)
            }
            let ours = try Layout.nchw(fromNHWC: nhwc, batch: n, channels: cout, plane: plane)
            let worst = zip(ours, expected).map { abs($0 - $1) }.max() ?? .infinity
            let bound = 1e-4 * (1 + expected.map(abs).max()!)
            #expect(ours.count == expected.count)
            #expect(worst <= bound, "\(layer) \(kernels), batch \(n), \(threads) thread(s): max difference \(worst) > \(bound)")
        }
        }
    }

    @Test func layerTableMatchesTheArchitecture() {
        let layers = Backbone.lite0.layers()
        #expect(layers.count == 1 + 15 * 3 + 2 + 1)  // stem, 15 blocks with expand, block 0 without, head
        #expect(layers.filter { $0.kind == .project && $0.hasResidual }.map(\.name)
                == ["block_02", "block_04", "block_06", "block_07", "block_09", "block_10", "block_12", "block_13", "block_14"])
        // Multiply-accumulates per image, as counted in ../shared/reference/efficientnet-lite0/architecture.json
        // (385,187,552 including the 1,280,000 of the classifier).
        let macs = layers.reduce(0) { $0 + $1.multiplyAccumulates }
        #expect(macs + 1_280_000 == 385_187_552)
    }

    /// The scaled tables of TensorFlow's efficientnet_lite_builder: Lite1 deepens (21 blocks) at width 1.0,
    /// Lite2 also widens by 1.1 with channels rounded to multiples of 8; stem 32 and head 1280 stay.
    @Test func scaledBackbonesHaveTheirPublishedShapes() {
        #expect(Backbone.all.map(\.blockCount) == [16, 21, 21])
        #expect(Backbone.lite1.stages.map(\.repeats) == [1, 3, 3, 4, 4, 5, 1])
        #expect(Backbone.lite1.stages.map(\.outChannels) == [16, 24, 40, 80, 112, 192, 320])
        #expect(Backbone.lite2.stages.map(\.repeats) == [1, 3, 3, 4, 4, 5, 1])
        #expect(Backbone.lite2.stages.map(\.outChannels) == [16, 24, 48, 88, 120, 208, 352])
        #expect(Backbone.lite2.stages.map(\.inChannels) == [32, 16, 24, 48, 88, 120, 208])
        #expect(Backbone.all.map(\.resolution) == [224, 240, 260])
        #expect(Backbone.named("efficientnet-lite2") == .lite2)
        #expect(Backbone.named("efficientnet-b0") == nil)
    }

    @Test func referencePaddingIsTensorFlowSame() {
        #expect(ReferenceKernels.samePadding(input: 224, kernel: 3, stride: 2) == (112, 0))
        #expect(ReferenceKernels.samePadding(input: 56, kernel: 5, stride: 2) == (28, 1))
        #expect(ReferenceKernels.samePadding(input: 14, kernel: 5, stride: 1) == (14, 2))
        #expect(ReferenceKernels.samePadding(input: 7, kernel: 3, stride: 2) == (4, 1))
    }

    @Test func globalAveragePoolMatchesReference() throws {
        var random = SeededRandom(state: 17)
        let (n, c, hw) = (2, 1280, 49)
        let nchw = random.floats(n * c * hw, scale: 6)
        let ours = try GlobalAveragePool.features(Layout.nhwc(fromNCHW: nchw, batch: n, channels: c, plane: hw),
                                     batch: n, channels: c, planeSize: hw)
        let expected = ReferenceKernels.globalAveragePool(nchw, n: n, c: c, hw: hw)
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1e-5 * (1 + abs($1)) })
    }

    @Test(arguments: KernelSet.supported)
    func linearMatchesReference(_ kernels: KernelSet) throws {
        var random = SeededRandom(state: 99)
        let x = random.floats(3 * 1280), w = random.floats(10 * 1280, scale: 0.1), b = random.floats(10)
        let linear = try Linear(inputs: 1280, outputs: 10, weight: w, bias: b)
        let ours = try linear(x, batch: 3, kernels: kernels)
        let expected = ReferenceKernels.linear(x, n: 3, inputs: 1280, weight: w, bias: b, outputs: 10)
        #expect(zip(ours, expected).allSatisfy { abs($0 - $1) <= 1e-4 * (1 + abs($1)) })
        // Rows read back are the rows given.
        for o in [0, 9] {
            #expect(linear.row(o)?.weight == Array(w[(o * 1280)..<((o + 1) * 1280)]))
            #expect(linear.row(o)?.bias == b[o])
        }
        #expect(linear.row(10) == nil)
        // Wrong sizes are typed errors, not traps.
        #expect(throws: ModelError.badInput(detail: "Linear: 5 values are not 1 rows of 1280")) { try linear([1, 2, 3, 4, 5], batch: 1) }
        #expect(throws: ModelError.badInput(detail: "pointwise 4→2: 7 weights and 2 biases do not fit the layer")) {
            try PointwiseConvolution(inChannels: 4, outChannels: 2, weight: [Float](repeating: 0, count: 7), bias: [0, 0],
                                     clampsToSix: false)
        }
        // A layer that clamps to six has no residual add in its store: a residual given to one is refused, not dropped.
        let clamping = try PointwiseConvolution(inChannels: 4, outChannels: 2, weight: [Float](repeating: 1, count: 8),
                                                bias: [0, 0], clampsToSix: true)
        #expect(throws: ModelError.badInput(detail: "pointwise: a layer that clamps to six takes no residual")) {
            try clamping([1, 1, 1, 1], pixels: 1, residual: [5, 5])
        }
        #expect(try clamping([1, 1, 1, 1], pixels: 1) == [4, 4])
        let linearLayer = try PointwiseConvolution(inChannels: 4, outChannels: 2, weight: [Float](repeating: 1, count: 8),
                                                   bias: [0, 0], clampsToSix: false)
        #expect(try linearLayer([1, 1, 1, 1], pixels: 1, residual: [5, 5]) == [9, 9])
    }

    @Test func kernelSetByName() throws {
        #expect(try KernelSet.named(nil) == KernelSet.best)
        #expect(try KernelSet.named("") == KernelSet.best)
        #expect(try KernelSet.named("Portable") == .portable)
        #expect(throws: ModelError.unknownKernelSet(name: "sse9", supported: KernelSet.supported.map(\.rawValue))) {
            try KernelSet.named("sse9")
        }
        for set in KernelSet.allCases where !set.isSupported {
            #expect(throws: ModelError.unsupportedKernelSet(name: set.rawValue, supported: KernelSet.supported.map(\.rawValue))) {
                try KernelSet.named(set.rawValue)
            }
        }
        #expect(KernelSet.supported.contains(.portable))
        #expect(KernelSet.supported.last == KernelSet.best)
    }
}
