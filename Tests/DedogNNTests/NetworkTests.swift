import Foundation
import Testing
import DedogTestSupport
@_spi(Benchmarks) @_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

@Suite struct NetworkTests {
    /// Three different images in one batch, on one and two threads, against each image alone on one thread.
    /// Only the order of float additions may differ (GEMM blocking depends on the column count), so the features
    /// must agree to ~1e-6 relative; 1e-4 · (1 + max) allows for that and nothing more. In 8 bits too (integer
    /// sums are exact; only the float stem's rounding could move a byte).
    @Test(arguments: Precision.allCases)
    func resultsDoNotDependOnBatchSizeOrThreads(_ precision: Precision) throws {
        let network = try BundledModel.network
        var random = SeededRandom(state: 2026)
        let size = 3 * 224 * 224
        let images = (0..<3).map { _ in random.floats(size) }
        let alone = try images.map { try network.makeSession(threads: 1, precision: precision).features($0, batch: 1) }
        for threads in [1, 2] {
            let together = try network.makeSession(threads: threads, precision: precision).features(images.flatMap { $0 }, batch: 3)
            for i in 0..<3 {
                let part = Array(together[(i * 1280)..<((i + 1) * 1280)])
                let worst = zip(part, alone[i]).map { abs($0 - $1) }.max()!
                #expect(worst <= 1e-4 * (1 + alone[i].map(abs).max()!), "image \(i), \(threads) threads: \(worst)")
            }
        }
    }

    /// Banded blocks (expand → depthwise → project band by band, each thread its own rows) against every layer
    /// over the whole image, for every kernel set, on the model's size and on an odd one whose bands and
    /// thread shares end at other rows. Only summation order may differ: 1e-4 relative, as above.
    @Test(arguments: KernelSet.supported)
    func bandedBlocksMatchWholeLayers(_ kernels: KernelSet) throws {
        let network = try BundledModel.network
        var random = SeededRandom(state: 77)
        for (h, w) in [(224, 224), (292, 292), (131, 97)] {  // 292: odd maps (73, 37, 19) as the default model has
            let image = random.floats(3 * h * w)
            let whole = try network.makeSession(threads: 1, kernels: kernels, precision: .fp32, bandsBlocks: false)
                .features(image, batch: 1, height: h, width: w)
            for threads in [1, 2] {
                let banded = try network.makeSession(threads: threads, kernels: kernels, precision: .fp32)
                    .features(image, batch: 1, height: h, width: w)
                let worst = zip(banded, whole).map { abs($0 - $1) }.max()!
                #expect(worst <= 1e-4 * (1 + whole.map(abs).max()!), "\(h)×\(w), \(kernels), \(threads) threads: \(worst)")
            }
        }
    }

    /// The 8-bit blocks band by band give exactly the bytes of their layers one by one (the same integers, in the
    /// same stores), for every kernel set, one thread and two, on the model's size and on odd ones whose bands and
    /// thread shares end at other rows.
    @Test(arguments: KernelSet.supported)
    func bandedByteBlocksAreTheLayersExactly(_ kernels: KernelSet) throws {
        let network = try BundledModel.network
        var random = SeededRandom(state: 78)
        for (h, w) in [(224, 224), (292, 292), (131, 97)] {
            let image = random.floats(3 * h * w)
            let whole = try network.makeSession(threads: 1, kernels: kernels, precision: .int8, bandsBlocks: false)
                .featuresAndMaps(image, batch: 1, height: h, width: w, keepingBlocks: [1, 2, 4])
            for threads in [1, 2] {
                let session = network.makeSession(threads: threads, kernels: kernels, precision: .int8)
                let steps = try session.profile(image, height: h, width: w, runs: 1, warmup: 0)
                #expect(steps.contains { $0.kind == "block" }, "\(h)×\(w): the early blocks run banded")
                let banded = try session.featuresAndMaps(image, batch: 1, height: h, width: w, keepingBlocks: [1, 2, 4])
                #expect(banded.features == whole.features, "\(h)×\(w), \(kernels), \(threads) threads")
                #expect(banded.maps == whole.maps)
                #expect(banded.blocks == whole.blocks, "\(h)×\(w), \(kernels), \(threads) threads: the kept blocks")
            }
        }
    }

    /// The plan is walked from the same table the kernel tests and benchmarks iterate: run layer by layer, its
    /// steps are the table's rows in order (kind, channels, kernel, stride, sizes, residual), then the pooling;
    /// banded, each large block is one step in their place. For every backbone, in floats and in 8 bits, and for a
    /// photo that is not square.
    @Test func thePlanRunsTheLayerTable() throws {
        var random = SeededRandom(state: 9)
        for backbone in Backbone.all {
            let model = try Model(contentsOf: SharedData.packageRoot.appendingPathComponent("models/\(backbone.architecture)-imagenet.safetensors"))
            let network = model.backbones[0]
            for (h, w) in [(backbone.resolution, backbone.resolution), (97, 131)] {
                let table = backbone.layers(height: h, width: w)
                #expect(table.count == 2 + backbone.blockCount * 2 + table.filter { $0.kind == .expand }.count)
                let image = random.floats(3 * h * w)
                for session in [network.makeSession(precision: .fp32, bandsBlocks: false),
                                network.makeSession(precision: .int8, bandsBlocks: false)] {
                    let steps = try session.profile(image, height: h, width: w, runs: 1, warmup: 0)
                    #expect(steps.dropLast().map(\.layer?.description) == table.map(\.description), "\(backbone) \(h)×\(w)")
                    #expect(steps.dropLast().map(\.layer?.hasResidual) == table.map(\.hasResidual))
                    #expect(steps.map(\.kind) == table.map(\.kind.rawValue) + ["pool"])
                }
                for precision in [Precision.fp32, .int8] {
                    let banded = try network.makeSession(precision: precision).profile(image, height: h, width: w, runs: 1, warmup: 0)
                    #expect(banded.contains { $0.kind == "block" }, "\(precision): the early blocks are large enough to run banded")
                    // Banded or not, the blocks come in the table's order with the table's names.
                    var order: [String] = []
                    for name in banded.map(\.name) where order.last != name { order.append(name) }
                    var expected: [String] = []
                    for name in table.map(\.name) + ["pool"] where expected.last != name { expected.append(name) }
                    #expect(order == expected, "\(precision)")
                }
            }
        }
    }

    /// A model loaded for 8 bits only (what `classify` does where int8 runs) packs no float layers, yet its 8-bit
    /// layers are byte for byte those of a full load (quantized from the file's weights rather than from the packed
    /// float layers), and so are its features, on every backbone of the fast model and the two of the default.
    /// Its sessions run int8 whatever they ask for; it cannot be calibrated again.
    @Test func loadingForInt8AloneGivesTheSameBytes() throws {
        var random = SeededRandom(state: 31)
        for name in ["dedog-breeds-fast", "dedog-breeds"] {
            let url = SharedData.packageRoot.appendingPathComponent("models/\(name).safetensors")
            let full = try Model(contentsOf: url), bytesOnly = try Model(contentsOf: url, precision: .int8)
            for (a, b) in zip(full.backbones, bytesOnly.backbones) {
                #expect(a.precisions == [.fp32, .int8])
                #expect(b.precisions == [.int8])
                let table = a.backbone.layers(height: 224, width: 224)
                #expect(a.packedInt8Layers.count == table.filter { [.expand, .project, .head].contains($0.kind) }.count)
                #expect(a.packedInt8Layers == b.packedInt8Layers)
                let size = a.input.cropSize
                let image = random.floats(3 * size * size)
                let session = b.makeSession(threads: 2, precision: .fp32)
                #expect(session.precision == .int8)
                #expect(try session.features(image, batch: 1, height: size, width: size)
                        == a.makeSession(threads: 2, precision: .int8).features(image, batch: 1, height: size, width: size))
                #expect(throws: ModelError.self) { try b.withActivationRanges(nil) }
            }
        }
    }

    @Test func aSessionCanBeReusedAcrossBatchSizes() throws {
        let session = try BundledModel.network.makeSession()
        var random = SeededRandom(state: 5)
        let one = random.floats(3 * 224 * 224)
        let first = try session.features(one, batch: 1)
        _ = try session.features(one + one, batch: 2)
        #expect(try session.features(one, batch: 1) == first)
    }

    @Test func wrongInputSizeIsATypedError() {
        #expect(throws: ModelError.badInput(detail: "3 floats are not 1 images of 3×224×224")) {
            try BundledModel.network.makeSession().features([0, 1, 2], batch: 1)
        }
        #expect(throws: ModelError.badInput(detail: "16×16 images: the network takes 32 to 1024 pixels a side")) {
            try BundledModel.network.makeSession().features([Float](repeating: 0, count: 3 * 16 * 16), batch: 1,
                                                            height: 16, width: 16)
        }
    }

    @Test func bundledModelDescribesItself() throws {
        let model = try BundledModel.model.specification.backbones[0]
        #expect(model.architecture == "efficientnet-lite0")
        #expect(model.imagenetHead?.labels.count == 1000)
        #expect(model.imagenetHead?.labels.filter(\.isDog).count == 121)
        #expect(model.imagenetHead?.labels[207].key == "n02099601-golden_retriever")
        #expect(model.preprocessing.cropSize == 224)
    }
}
