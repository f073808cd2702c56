import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// The bundled model file, made by scripts/convert-weights.
enum BundledModel {
    static let url = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")
    static let shared = Shared { try Model(contentsOf: url) }
    static var model: Model { get throws { try shared.value } }
    static var network: EfficientNetLite { get throws { try model.backbones[0] } }
}

/// The suggested tolerance of ../shared/reference/efficientnet-lite0/README.md: max |ours − PyTorch| ≤
/// 1e-3 · (1 + max |reference|) per tensor. PyTorch's own float32-vs-float64 error is ≤ 4e-5 on these tensors;
/// BN folding, GEMM blocking and a different summation order add rounding of the same order per layer, and
/// 16 blocks compound it — 1e-3 relative to the tensor's scale leaves a margin of ~10× while still catching any
/// wrong padding, epsilon or layer order (those move values by 1e-1 or more).
@Suite(.needsReference) struct GoldenTests {
    static func tolerance(_ reference: [Float]) -> Float {
        1e-3 * (1 + reference.map(abs).max()!)
    }

    static func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).map { abs($0 - $1) }.max()!
    }

    @Test(arguments: KernelSet.supported)
    func everyStageMatchesPyTorch(_ kernels: KernelSet) throws {
        let input = try SharedData.referenceTensor("input.f32")
        var stages: [(String, [Float])] = []
        let session = try BundledModel.network.makeSession(kernels: kernels, precision: .fp32)
        let features = try session.features(input, batch: 1) { stages.append(($0, $1)) }
        #expect(stages.count == 18)
        for (name, ours) in stages + [("features", features)] {
            let reference = try SharedData.referenceTensor(name + ".f32")
            try #require(ours.count == reference.count, "\(name): \(ours.count) vs \(reference.count) values")
            let diff = Self.maxDifference(ours, reference)
            #expect(diff <= Self.tolerance(reference), "\(name) (\(kernels)): max abs difference \(diff)")
        }
    }

    @Test(arguments: KernelSet.supported)
    func logitsAndTopFiveMatchPyTorch(_ kernels: KernelSet) throws {
        let input = try SharedData.referenceTensor("input.f32")
        let network = try BundledModel.network
        let features = try network.makeSession(threads: 2, kernels: kernels, precision: .fp32).features(input, batch: 1)
        let logits = try BundledModel.model.heads[0].imagenet!(features, batch: 1, kernels: kernels)
        let reference = try SharedData.referenceTensor("logits.f32")
        let diff = Self.maxDifference(logits, reference)
        #expect(diff <= Self.tolerance(reference), "logits: max abs difference \(diff)")
        #expect(Self.top5(logits) == Self.top5(reference))
        #expect(Self.top5(logits) == [207, 208, 676, 176, 231])
    }

    /// ‖ours − reference‖ / ‖reference‖: the noise 8 bits add, relative to the signal.
    static func relativeError(_ ours: [Float], _ reference: [Float]) -> Float {
        let noise = zip(ours, reference).reduce(Float(0)) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
        let signal = reference.reduce(Float(0)) { $0 + $1 * $1 }
        return (noise / max(signal, .leastNormalMagnitude)).squareRoot()
    }

    static func top5(_ x: [Float]) -> [Int] { Array(x.indices.sorted { x[$0] > x[$1] }.prefix(5)) }

    /// What 8 bits may change in an answer, against the PyTorch run in float: the same top-1 class, four of the
    /// top five, every probability within 0.05. Each stage (`int8StagesAndAnswerStayCloseToPyTorch`) within 20 %
    /// relative error ‖int8 − float‖ / ‖float‖: with the bundled ranges (min-max of 100 training photos, one per
    /// tensor) this input gives 0.2 % at the stem, 5–9 % through the blocks and 13 % at the head, the same in every
    /// build (their bytes are equal); a wrong scale, zero point or layer wiring gives 50 % and more.
    static func expectInt8Close(_ logits: [Float], _ reference: [Float], _ context: String) {
        #expect(top5(logits).first == top5(reference).first, "\(context): top-1 \(top5(logits)) vs \(top5(reference))")
        #expect(Set(top5(logits)).intersection(top5(reference)).count >= 4, "\(context): top-5 \(top5(logits)) vs \(top5(reference))")
        let p = Model.softmax(logits), q = Model.softmax(reference)
        let worst = Self.maxDifference(p, q)
        #expect(worst <= 0.05, "\(context): a probability moved by \(worst)")
    }

    /// The 8-bit engine with the bundled file's activation ranges, in every build, on one and two threads (every
    /// build runs the same layers to the same bytes: `int8IsTheSameOnEverySet`).
    @Test(arguments: KernelSet.supported)
    func int8StagesAndAnswerStayCloseToPyTorch(_ kernels: KernelSet) throws {
        let network = try Model(contentsOf: BundledModel.url, kernels: kernels).backbones[0]
        #expect(network.byteKernels == kernels)
        try #require(network.activationRanges != nil, "the bundled Lite0 file has no activation ranges")
        let input = try SharedData.referenceTensor("input.f32")
        for threads in [1, 2] {
            var stages: [(String, [Float])] = []
            let session = network.makeSession(threads: threads, kernels: kernels, precision: .int8)
            #expect(session.precision == .int8)
            let features = try session.features(input, batch: 1) { stages.append(($0, $1)) }
            #expect(stages.count == 18)
            for (name, ours) in stages + [("features", features)] {
                let reference = try SharedData.referenceTensor(name + ".f32")
                try #require(ours.count == reference.count)
                let error = Self.relativeError(ours, reference)
                #expect(error <= 0.2, "\(name) (\(kernels), \(threads) threads): relative error \(error)")
            }
            let logits = try BundledModel.model.heads[0].imagenet!(features, batch: 1, kernels: kernels)
            Self.expectInt8Close(logits, try SharedData.referenceTensor("logits.f32"), "Lite0 int8 \(kernels)")
        }
    }
}

/// Lite1 and Lite2 against an independent PyTorch implementation (PyPI efficientnet-lite-pytorch, run by
/// scripts/make_golden.py with exactly the weights of the model files): the backbone table scaled by width
/// and depth, the resolution from the model file, the F16 weights widened at load. Lite0's input, features and
/// logits are those of ../shared/reference/efficientnet-lite0 (another independent PyTorch run), so that the
/// whole network is checked on a fresh clone too; its stages are checked above when ../shared is there.
/// Committed in Tests/Golden.
@Suite struct ScaledBackboneGoldenTests {
    static func tensor(_ architecture: String, _ name: String) throws -> [Float] {
        let url = SharedData.packageRoot.appendingPathComponent("Tests/Golden/\(architecture)/\(name).f32")
        let data = try Data(contentsOf: url)
        return data.withUnsafeBytes { raw in (0..<(data.count / 4)).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
    }

    @Test(arguments: ["efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"], KernelSet.supported)
    func featuresAndLogitsMatchPyTorch(_ architecture: String, _ kernels: KernelSet) throws {
        let model = try Model(contentsOf: SharedData.packageRoot
            .appendingPathComponent("models/\(architecture)-imagenet.safetensors"), kernels: kernels)
        let network = model.backbones[0]
        #expect(network.backbone.architecture == architecture)
        let size = network.input.cropSize
        #expect(size == network.backbone.resolution)
        let input = try Self.tensor(architecture, "input")
        #expect(input.count == 3 * size * size)
        let features = try network.makeSession(threads: 2, kernels: kernels, precision: .fp32)
            .features(input, batch: 1, height: size, width: size)
        let logits = try model.heads[0].imagenet!(features, batch: 1, kernels: kernels)
        try #require(network.activationRanges != nil, "\(architecture): the bundled file has no activation ranges")
        let int8 = try network.makeSession(threads: 2, kernels: kernels, precision: .int8)
            .features(input, batch: 1, height: size, width: size)
        GoldenTests.expectInt8Close(try model.heads[0].imagenet!(int8, batch: 1, kernels: kernels),
                                    try Self.tensor(architecture, "logits"), "\(architecture) int8 \(kernels)")
        for (name, ours) in [("features", features), ("logits", logits)] {
            let reference = try Self.tensor(architecture, name)
            try #require(ours.count == reference.count)
            let diff = GoldenTests.maxDifference(ours, reference)
            #expect(diff <= GoldenTests.tolerance(reference), "\(architecture) \(name) (\(kernels)): max abs difference \(diff)")
        }
        let top5 = { (x: [Float]) in Array(x.indices.sorted { x[$0] > x[$1] }.prefix(5)) }
        let reference = try Self.tensor(architecture, "logits")
        #expect(top5(logits) == top5(reference))
        #expect(top5(logits).first == 207)  // golden retriever, as Lite0 says
    }

    /// Every set runs the same 8-bit layers to the same integers and stores them alike, so a model answers alike on
    /// every CPU (issue 69): each backbone's 8-bit features of its golden input are the same bits on every set this
    /// CPU runs as on the portable one, on one and two threads. (AVX2 once ran layers of its own, one operand in 7
    /// bits, and named a photo near a threshold otherwise than the VNNI sets; now every set runs those layers.)
    @Test(arguments: ["efficientnet-lite0", "efficientnet-lite1", "efficientnet-lite2"])
    func int8IsTheSameOnEverySet(_ architecture: String) throws {
        let url = SharedData.packageRoot.appendingPathComponent("models/\(architecture)-imagenet.safetensors")
        let input = try Self.tensor(architecture, "input")
        var first: (KernelSet, [Float])?
        for kernels in KernelSet.supported {
            let network = try Model(contentsOf: url, kernels: kernels).backbones[0]
            let size = network.input.cropSize
            for threads in [1, 2] {
                let session = network.makeSession(threads: threads, kernels: kernels, precision: .int8)
                try #require(session.precision == .int8)
                let features = try session.features(input, batch: 1, height: size, width: size)
                guard let (set, reference) = first else {
                    first = (kernels, features)
                    continue
                }
                let differ = features.indices.filter { features[$0].bitPattern != reference[$0].bitPattern }
                #expect(features.count == reference.count && differ.isEmpty,
                        "\(architecture) \(kernels), \(threads) thread(s): \(differ.count) features differ from \(set)'s, the first at \(differ.first ?? -1)")
            }
        }
    }
}
