import DedogConcurrency
import Dispatch

/// Runs the backbone on batches of preprocessed images, reusing its execution plans and scratch memory between
/// calls.
///
/// Each image goes through the network on its own, channels-last (NHWC), so its largest activation (4.8 MB
/// for Lite0) stays in cache; 32 images at once would not. With several threads and at least as many images,
/// each thread runs whole images side by side with no synchronisation between layers; a lone image is split
/// across the threads layer by layer instead.
/// Not thread-safe: make one session per thread; `threads` is how many threads each call uses inside, and
/// `kernels` which build of the kernels they run.
public final class InferenceSession {
    public let network: EfficientNetLite
    public let threads: Int
    public let kernels: KernelSet
    /// What the session computes in: int8 only where asked for and the network has activation ranges.
    public let precision: Precision
    /// Whether blocks with a large expanded activation run band by band (`BandedBlock`); off only to measure.
    @_spi(Benchmarks) public let bandsBlocks: Bool
    private let pool: WorkerPool?
    /// Plans by input size; few sizes occur.
    private var plans: [Size: ExecutionPlan] = [:]
    /// One set of activation buffers per thread.
    private var scratch: [Scratch] = []

    private struct Size: Hashable { let height, width: Int; let bands: Bool }
    /// The 8-bit layers the session runs, or nil for floats.
    private var quantized: QuantizedNetwork? { precision == .int8 ? network.quantized : nil }

    /// A thread's activation buffers: their memory is only ever touched by the thread that owns the set.
    private struct Scratch: @unchecked Sendable {
        var buffers: [UnsafeMutableBufferPointer<Float>]
    }

    init(network: EfficientNetLite, threads: Int, kernels: KernelSet, precision: Precision, bandsBlocks: Bool) {
        self.network = network
        self.precision = network.precision(asked: precision)
        self.bandsBlocks = bandsBlocks
        self.threads = max(1, threads)
        self.kernels = kernels.isSupported ? kernels : .portable
        pool = self.threads > 1 ? WorkerPool(parts: self.threads) : nil
    }

    deinit {
        for set in scratch { for b in set.buffers { b.deallocate() } }
    }

    /// The pooled 1280 features of each image, [batch × 1280].
    ///
    /// `input` is NCHW: `batch` images of 3 × height × width floats, already normalised; height and width are
    /// the model's crop size unless given.
    public func features(_ input: [Float], batch: Int, height: Int? = nil, width: Int? = nil) throws(ModelError) -> [Float] {
        try forward(input, batch: batch, height: height, width: width, tap: nil, keepsMaps: false).features
    }

    /// `features`, and the head's activations before pooling: each image's grid of 1280-feature cells (the
    /// pooled features are their mean), from which class activation maps show where the network saw what.
    public func featuresAndMaps(_ input: [Float], batch: Int, height: Int? = nil,
                                width: Int? = nil) throws(ModelError) -> (features: [Float], maps: FeatureMaps) {
        let pass = try forward(input, batch: batch, height: height, width: width, tap: nil, keepsMaps: true)
        return (pass.features, FeatureMaps(images: batch, rows: pass.grid.rows, columns: pass.grid.columns, values: pass.maps))
    }

    /// `featuresAndMaps`, and the outputs of the blocks `blocks` names (indices into the backbone's blocks) of the
    /// first `keptImages` images, each as a grid of cells (NHWC floats, dequantized in an 8-bit pass): the inner
    /// feature maps a detection neck reads (`FeaturePyramidHead`).
    public func featuresAndMaps(_ input: [Float], batch: Int, height: Int? = nil, width: Int? = nil, keepingBlocks blocks: [Int],
                                keptImages: Int = 1) throws(ModelError) -> (features: [Float], maps: FeatureMaps, blocks: [FeatureMaps]) {
        let specs = network.backbone.blocks
        guard blocks.allSatisfy(specs.indices.contains) else {
            throw .badInput(detail: "blocks \(blocks): the backbone has \(specs.count)")
        }
        let kept = min(max(0, keptImages), batch)
        let pass = try forward(input, batch: batch, height: height, width: width, tap: nil, keepsMaps: true,
                               keeps: blocks.map { specs[$0].name }, keptImages: kept)
        return (pass.features, FeatureMaps(images: batch, rows: pass.grid.rows, columns: pass.grid.columns, values: pass.maps),
                pass.blocks)
    }

    /// `features`, with `tap` receiving each image's stem output, block outputs and head activation in NCHW,
    /// named `stem`, `block_00`, `block_01`, … (as many as the backbone's `blockCount`), `head` (for tests
    /// against golden tensors).
    @_spi(Testing) public func features(_ input: [Float], batch: Int, height: Int? = nil, width: Int? = nil,
                                        tap: ((String, [Float]) -> Void)?) throws(ModelError) -> [Float] {
        try forward(input, batch: batch, height: height, width: width, tap: tap, keepsMaps: false).features
    }

    /// The forward pass; with `keepsMaps`, also each image's head activations before pooling (the pooling step's
    /// input, one image after another; empty otherwise), and the grid of cells they form.
    private func forward(_ input: [Float], batch: Int, height: Int?, width: Int?, tap: ((String, [Float]) -> Void)?,
                         keepsMaps: Bool, keeps blockNames: [String] = [], keptImages: Int = 0)
        throws(ModelError) -> (features: [Float], maps: [Float], grid: (rows: Int, columns: Int), blocks: [FeatureMaps]) {
        let (height, width) = try checkedSize(of: input, batch: batch, height: height, width: width)
        let plan = self.plan(height: height, width: width)
        // The kept blocks' outputs, image after image: each image's pass writes its own part.
        let keptSteps = blockNames.compactMap { name in plan.steps.last { $0.name == name && $0.isTap } }
        guard keptSteps.count == blockNames.count else {
            throw .badInput(detail: "blocks \(blockNames): not every one is an output of the plan")
        }
        let keptSizes = keptSteps.map { $0.outChannels * $0.outHeight * $0.outWidth }
        let keptBuffers = keptSizes.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, keptImages * $0)) }
        defer { for b in keptBuffers { b.deallocate() } }
        let keptBases = keptBuffers.map { SharedPointer($0.baseAddress!) }
        /// Where image `image`'s pass puts the kept blocks' outputs.
        func kept(_ image: Int) -> [KeptOutput] {
            image < keptImages ? zip(keptSteps, zip(keptBases, keptSizes)).map { KeptOutput(step: $0.name, into: $1.0.base + image * $1.1) } : []
        }
        let quantized = self.quantized
        let imageSize = 3 * height * width, featureCount = EfficientNetLite.featureCount
        let grid = plan.headGrid, mapSize = grid.rows * grid.columns * featureCount
        var maps = [Float](repeating: 0, count: keepsMaps ? batch * mapSize : 0)
        var features = [Float](repeating: 0, count: batch * featureCount)
        input.withUnsafeBufferPointer { inp in
            features.withUnsafeMutableBufferPointer { f in
                maps.withUnsafeMutableBufferPointer { m in
                    let x = SharedPointer(UnsafeMutablePointer(mutating: inp.baseAddress!))
                    let y = SharedPointer(f.baseAddress!)
                    let mapBase = keepsMaps ? m.baseAddress.map(SharedPointer.init) : nil
                    var image = 0
                    if let pool, tap == nil {
                        let scratch = self.scratch, kernels = self.kernels
                        while batch - image >= threads {
                            let first = image, keeps = (0..<threads).map { kept(first + $0) }
                            pool.run { part in
                                Self.run(plan, input: x.base + (first + part) * imageSize,
                                         features: y.base + (first + part) * featureCount, scratch: scratch[part],
                                         parallel: Parallel(threads: 1, kernels: kernels), quantized: quantized,
                                         map: mapBase.map { $0.base + (first + part) * mapSize }, keeps: keeps[part])
                            }
                            image += threads
                        }
                    }
                    while image < batch {
                        Self.run(plan, input: x.base + image * imageSize, features: y.base + image * featureCount,
                                 scratch: scratch[0], parallel: oneImage, quantized: quantized, tap: tap,
                                 map: mapBase.map { $0.base + image * mapSize }, keeps: kept(image))
                        image += 1
                    }
                }
            }
        }
        let blocks = zip(keptSteps, keptBuffers).map { step, buffer in
            FeatureMaps(images: keptImages, rows: step.outHeight, columns: step.outWidth, channels: step.outChannels,
                        values: Array(buffer.prefix(keptImages * step.outChannels * step.outHeight * step.outWidth)))
        }
        return (features, maps, grid, blocks)
    }

    /// The input size of `batch` images in `input` (the model's crop size where not given), checked against what the
    /// network takes and against the number of floats.
    private func checkedSize(of input: [Float], batch: Int, height: Int?, width: Int?) throws(ModelError) -> (height: Int, width: Int) {
        let height = height ?? network.input.cropSize, width = width ?? network.input.cropSize
        let sizes = EfficientNetLite.inputSizes
        guard sizes.contains(height), sizes.contains(width) else {
            throw .badInput(detail: "\(width)×\(height) images: the network takes \(sizes.lowerBound) to \(sizes.upperBound) pixels a side")
        }
        guard batch > 0, input.count == batch * 3 * height * width else {
            throw .badInput(detail: "\(input.count) floats are not \(batch) images of 3×\(height)×\(width)")
        }
        return (height, width)
    }

    /// The plan for one input size (for the 8-bit layers where the session runs them); `observeActivations` runs every
    /// layer on its own (no bands).
    private func plan(height: Int, width: Int, layerByLayer: Bool = false) -> ExecutionPlan {
        let bands = bandsBlocks && !layerByLayer
        let key = Size(height: height, width: width, bands: bands)
        if let plan = plans[key] { return plan }
        let plan = ExecutionPlan(network: network, height: height, width: width, parts: threads, bandsBlocks: bands,
                                 bytes: quantized != nil)
        if plans.count >= 8 { plans.removeAll() }
        plans[key] = plan
        let needed = plan.bufferSizes
        if scratch.isEmpty || zip(scratch[0].buffers, needed).contains(where: { $0.count < $1 }) {
            let sizes = scratch.isEmpty ? needed : zip(scratch[0].buffers, needed).map { max($0.count, $1) }
            for set in scratch { for b in set.buffers { b.deallocate() } }
            scratch = (0..<threads).map { _ in
                Scratch(buffers: sizes.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, $0)) })
            }
        }
        return plan
    }

    /// How one image's pass spreads over the session's threads: layer by layer, on its worker pool.
    private var oneImage: Parallel {
        pool.map { Parallel(pool: $0, kernels: kernels) } ?? Parallel(threads: 1, kernels: kernels)
    }

    /// Runs `batch` images (as `features` takes them) through the float layers one by one and adds the range of
    /// every activation the 8-bit engine keeps in bytes to `statistics`: the calibration that
    /// `ActivationRanges` records. Uses the session's first thread set only.
    public func observeActivations(_ input: [Float], batch: Int, height: Int? = nil, width: Int? = nil,
                                   into statistics: inout ActivationStatistics) throws(ModelError) {
        let (height, width) = try checkedSize(of: input, batch: batch, height: height, width: width)
        let plan = self.plan(height: height, width: width, layerByLayer: true)
        var features = [Float](repeating: 0, count: EfficientNetLite.featureCount)
        var seen = statistics
        input.withUnsafeBufferPointer { inp in
            features.withUnsafeMutableBufferPointer { f in
                for image in 0..<batch {
                    Self.run(plan, input: inp.baseAddress! + image * 3 * height * width, features: f.baseAddress!,
                             scratch: scratch[0], parallel: oneImage, quantized: nil, observe: { step, values in
                        if let name = ActivationRanges.name(of: step.kind, layer: step.name) {
                            seen.observe(name, values, channels: step.outChannels)
                        }
                    })
                    seen.finishPhoto()
                }
            }
        }
        statistics = seen
    }

    /// Times every step of the forward pass of `input` (one image, 3 × height × width), with the session's
    /// threads: the median over `runs` passes (after `warmup`), with each step's shape, for `DedogBench layers`.
    @_spi(Benchmarks) public func profile(_ input: [Float], height: Int, width: Int, runs: Int, warmup: Int = 3) throws(ModelError) -> [StepTiming] {
        _ = try checkedSize(of: input, batch: 1, height: height, width: width)
        let plan = self.plan(height: height, width: width)
        let quantized = self.quantized
        var features = [Float](repeating: 0, count: EfficientNetLite.featureCount)
        var samples = [[Double]](repeating: [], count: plan.steps.count)
        let parallel = oneImage
        input.withUnsafeBufferPointer { inp in
            features.withUnsafeMutableBufferPointer { f in
                for r in 0..<(warmup + runs) {
                    var last = DispatchTime.now().uptimeNanoseconds
                    Self.run(plan, input: inp.baseAddress!, features: f.baseAddress!, scratch: scratch[0],
                             parallel: parallel, quantized: quantized, stepDone: { i in
                        let t = DispatchTime.now().uptimeNanoseconds
                        if r >= warmup { samples[i].append(Double(t - last) * 1e-9) }
                        last = t
                    })
                }
            }
        }
        return zip(plan.steps, samples).map { step, times in
            let sorted = times.sorted()
            return StepTiming(name: step.name, kind: step.kind.rawValue, shape: step.shape, layer: step.layer, multiplyAccumulates: step.multiplyAccumulates,
                              seconds: sorted.isEmpty ? 0 : sorted[sorted.count / 2])
        }
    }

    private static func run(_ plan: ExecutionPlan, input: UnsafePointer<Float>, features: UnsafeMutablePointer<Float>,
                            scratch: Scratch, parallel: Parallel, quantized: QuantizedNetwork?,
                            tap: ((String, [Float]) -> Void)? = nil, map: UnsafeMutablePointer<Float>? = nil,
                            keeps: [KeptOutput] = [], stepDone: ((Int) -> Void)? = nil,
                            observe: ((ExecutionPlan.Step, UnsafeBufferPointer<Float>) -> Void)? = nil) {
        func place(_ p: ExecutionPlan.Place) -> UnsafeMutablePointer<Float> {
            switch p {
            case .input: UnsafeMutablePointer(mutating: input)
            case let .buffer(i): scratch.buffers[i].baseAddress!
            case .features: features
            }
        }
        if let quantized {
            // The buffers, sized in floats for the float plan, hold at least as many bytes.
            quantized.run(plan, place: { UnsafeMutableRawPointer(place($0)) }, parallel: parallel, tap: tap, map: map,
                          keeps: keeps, stepDone: stepDone)
            return
        }
        let batch = 1  // a plan is one image's pass
        for (index, step) in plan.steps.enumerated() {
            let x = place(step.input), y = place(step.output)
            switch step.operation {
            case let .stem(stem):
                stem.run(x, y, batch: batch, height: step.height, width: step.width, parallel: parallel)
            case let .pointwise(conv):
                conv.run(x, y, pixels: batch * step.height * step.width,
                         residual: step.residual.map { UnsafePointer(place($0)) }, parallel: parallel)
            case let .depthwise(conv):
                conv.run(x, y, batch: batch, height: step.height, width: step.width, parallel: parallel)
            case let .block(banded):
                banded.run(x, y, scratch: place(.buffer(2)), parallel: parallel)
            case .pool:
                GlobalAveragePool.run(x, y, channels: step.outChannels, batch: batch, planeSize: step.height * step.width)
                map?.update(from: x, count: step.outChannels * step.height * step.width)
            case .bytes:
                break  // not in a float pass: a session runs fp32 only on a network with its float layers
            }
            if let tap, step.isTap {
                tap(step.name, Layout.nchw(fromNHWC: y, batch: batch, channels: step.outChannels,
                                           plane: step.outHeight * step.outWidth))
            }
            if step.isTap, let k = keeps.first(where: { $0.step == step.name }) {
                k.into.update(from: y, count: step.outChannels * step.outHeight * step.outWidth)
            }
            observe?(step, UnsafeBufferPointer(start: y, count: step.outChannels * step.outHeight * step.outWidth))
            stepDone?(index)
        }
    }
}

/// Where one image's pass copies a block's output (`InferenceSession.featuresAndMaps(_:batch:keepingBlocks:)`);
/// each image's pass writes only its own.
struct KeptOutput: @unchecked Sendable {
    /// The step's name: `block_14`.
    let step: String
    let into: UnsafeMutablePointer<Float>
}

/// A batch of images' activations as grids: per image a `rows` × `columns` grid of cells, each `channels` features
/// (NHWC). The head's before pooling have 1280 features a cell; a cell sees the whole image but mostly its own
/// 32-pixel square of it.
public struct FeatureMaps: Sendable, Equatable {
    public let images: Int
    public let rows: Int
    public let columns: Int
    public let channels: Int
    /// [image][row][column][feature].
    public let values: [Float]

    public init(images: Int, rows: Int, columns: Int, channels: Int = EfficientNetLite.featureCount, values: [Float]) {
        self.images = images
        self.rows = rows
        self.columns = columns
        self.channels = channels
        self.values = values
    }

    /// Cells per image.
    public var cells: Int { rows * columns }

    /// Image `image`'s features in cell (`row`, `column`).
    public func cell(image: Int, row: Int, column: Int) -> ArraySlice<Float> {
        let start = ((image * rows + row) * columns + column) * channels
        return values[start..<(start + channels)]
    }

    /// Image `image`'s grid, [cells × channels].
    public func image(_ image: Int) -> ArraySlice<Float> {
        let size = cells * channels
        return values[(image * size)..<((image + 1) * size)]
    }
}

/// How long one step of a forward pass took (`InferenceSession.profile`).
@_spi(Benchmarks) public struct StepTiming: Sendable {
    /// The step's place in the network: `stem`, `block_03`, `head`, `pool`.
    public let name: String
    /// `stem`, `expand`, `depthwise`, `project`, `head`, `block` (a whole block, banded) or `pool`.
    public let kind: String
    /// Kernel/stride, channels and input size, e.g. `3/2 16→96→24 @112×112`.
    public let shape: String
    /// The layer's shape, or nil for banded blocks and pooling.
    public let layer: LayerShape?
    public let multiplyAccumulates: Int
    /// Median seconds of the step over the profiled passes of one image.
    public let seconds: Double
}

/// Conversions between the layout callers use (NCHW: each channel a plane) and the engine's (NHWC: channels last).
public enum Layout {
    /// [n][c][plane] → [n][plane][c].
    public static func nhwc(fromNCHW x: [Float], batch: Int, channels: Int, plane: Int) throws(ModelError) -> [Float] {
        guard x.count == batch * channels * plane else { throw .badInput(detail: "\(x.count) values are not \(batch)×\(channels)×\(plane)") }
        var out = [Float](repeating: 0, count: x.count)
        for n in 0..<batch {
            for c in 0..<channels {
                for i in 0..<plane { out[(n * plane + i) * channels + c] = x[(n * channels + c) * plane + i] }
            }
        }
        return out
    }

    /// [n][plane][c] → [n][c][plane].
    public static func nchw(fromNHWC x: [Float], batch: Int, channels: Int, plane: Int) throws(ModelError) -> [Float] {
        guard x.count == batch * channels * plane else { throw .badInput(detail: "\(x.count) values are not \(batch)×\(channels)×\(plane)") }
        return x.withUnsafeBufferPointer { nchw(fromNHWC: $0.baseAddress!, batch: batch, channels: channels, plane: plane) }
    }

    static func nchw(fromNHWC p: UnsafePointer<Float>, batch: Int, channels: Int, plane: Int) -> [Float] {
        var out = [Float](repeating: 0, count: channels * batch * plane)
        for n in 0..<batch {
            for i in 0..<plane {
                for c in 0..<channels { out[(n * channels + c) * plane + i] = p[(n * plane + i) * channels + c] }
            }
        }
        return out
    }
}
