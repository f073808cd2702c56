import Dispatch

/// Runs the backbone on batches of preprocessed images, reusing its execution plans and scratch memory between
/// calls.
///
/// Activations are kept channels-last over the whole batch (NHWC), so that every 1×1 convolution is a single
/// GEMM over batch × height × width rows and the depthwise and stem kernels run along contiguous channels.
/// Not thread-safe: make one session per thread; `threads` is how many threads each call uses inside, and
/// `kernels` which build of the kernels they run.
public final class InferenceSession {
    public let network: EfficientNetLite
    public let threads: Int
    public let kernels: KernelSet
    private let parallel: Parallel
    /// Plans by input size and batch; few sizes occur (the model's, and a smaller last batch).
    private var plans: [PlanKey: ExecutionPlan] = [:]
    private var buffers: [UnsafeMutableBufferPointer<Float>] = []

    private struct PlanKey: Hashable { let height, width, batch: Int }

    init(network: EfficientNetLite, threads: Int, kernels: KernelSet) {
        self.network = network
        self.threads = max(1, threads)
        self.kernels = kernels.isSupported ? kernels : .portable
        parallel = self.threads > 1
            ? Parallel(pool: WorkerPool(parts: self.threads), kernels: self.kernels)
            : Parallel(threads: 1, kernels: self.kernels)
    }

    deinit {
        for b in buffers { b.deallocate() }
    }

    /// The pooled 1280 features of each image, [batch × 1280].
    ///
    /// `input` is NCHW: `batch` images of 3 × height × width floats, already normalised.
    /// `tap`, when given, receives the stem output, each block output and the head activation in NCHW,
    /// named `stem`, `block_00` … `block_15`, `head` (for tests against golden tensors).
    public func features(_ input: [Float], batch: Int, height: Int = 224, width: Int = 224,
                         tap: ((String, [Float]) -> Void)? = nil) throws(ModelError) -> [Float] {
        guard batch > 0, height >= 8, width >= 8, input.count == batch * 3 * height * width else {
            throw .badInput(detail: "\(input.count) floats are not \(batch) images of 3×\(height)×\(width)")
        }
        let plan = self.plan(height: height, width: width, batch: batch)
        var features = [Float](repeating: 0, count: batch * EfficientNetLite.featureCount)
        input.withUnsafeBufferPointer { inp in
            features.withUnsafeMutableBufferPointer { f in
                run(plan, input: inp.baseAddress!, features: f.baseAddress!, tap: tap)
            }
        }
        return features
    }

    private func plan(height: Int, width: Int, batch: Int) -> ExecutionPlan {
        let key = PlanKey(height: height, width: width, batch: batch)
        if let plan = plans[key] { return plan }
        let plan = ExecutionPlan(network: network, height: height, width: width, batch: batch)
        if plans.count >= 8 { plans.removeAll() }
        plans[key] = plan
        if buffers.isEmpty || zip(buffers, plan.bufferSizes).contains(where: { $0.count < $1 }) {
            let sizes = buffers.isEmpty ? plan.bufferSizes : zip(buffers, plan.bufferSizes).map { max($0.count, $1) }
            for b in buffers { b.deallocate() }
            buffers = sizes.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, $0)) }
        }
        return plan
    }

    /// Times every step of a forward pass on random input: the median over `runs` passes (after `warmup`),
    /// with each step's shape, for `DedogBench layers`.
    public func profile(batch: Int, height: Int, width: Int, runs: Int, warmup: Int = 3) -> [StepTiming] {
        let plan = self.plan(height: height, width: width, batch: batch)
        var state: UInt64 = 42
        let input = (0..<(batch * 3 * height * width)).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int32(truncatingIfNeeded: state >> 33)) / Float(Int32.max)
        }
        var features = [Float](repeating: 0, count: batch * EfficientNetLite.featureCount)
        var samples = [[Double]](repeating: [], count: plan.steps.count)
        input.withUnsafeBufferPointer { inp in
            features.withUnsafeMutableBufferPointer { f in
                for r in 0..<(warmup + runs) {
                    var last = DispatchTime.now().uptimeNanoseconds
                    run(plan, input: inp.baseAddress!, features: f.baseAddress!, tap: nil) { i in
                        let t = DispatchTime.now().uptimeNanoseconds
                        if r >= warmup { samples[i].append(Double(t - last) * 1e-9) }
                        last = t
                    }
                }
            }
        }
        return zip(plan.steps, samples).map { step, times in
            let sorted = times.sorted()
            return StepTiming(name: step.name, layer: step.layer, seconds: sorted.isEmpty ? 0 : sorted[sorted.count / 2])
        }
    }

    private func run(_ plan: ExecutionPlan, input: UnsafePointer<Float>, features: UnsafeMutablePointer<Float>,
                     tap: ((String, [Float]) -> Void)?, stepDone: ((Int) -> Void)? = nil) {
        func place(_ p: ExecutionPlan.Place) -> UnsafeMutablePointer<Float> {
            switch p {
            case .input: UnsafeMutablePointer(mutating: input)
            case let .buffer(i): buffers[i].baseAddress!
            case .features: features
            }
        }
        let batch = plan.batch
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
            case .pool:
                GlobalAveragePool.run(x, y, channels: step.outChannels, batch: batch, planeSize: step.height * step.width)
            }
            if let tap, step.isTap {
                tap(step.name, Layout.nchw(fromNHWC: y, batch: batch, channels: step.outChannels,
                                      plane: step.outHeight * step.outWidth))
            }
            stepDone?(index)
        }
    }
}

/// How long one step of a forward pass took (`InferenceSession.profile`).
public struct StepTiming: Sendable {
    /// The step's place in the network: `stem`, `block_03`, `head`, `pool`.
    public let name: String
    /// The layer's shape, or nil for pooling.
    public let layer: LayerShape?
    /// Median seconds for the whole batch.
    public let seconds: Double
}

/// Conversions between the layout callers use (NCHW: each channel a plane) and the engine's (NHWC: channels last).
public enum Layout {
    /// [n][c][plane] → [n][plane][c].
    public static func nhwc(fromNCHW x: [Float], batch: Int, channels: Int, plane: Int) -> [Float] {
        precondition(x.count == batch * channels * plane)
        var out = [Float](repeating: 0, count: x.count)
        for n in 0..<batch {
            for c in 0..<channels {
                for i in 0..<plane { out[(n * plane + i) * channels + c] = x[(n * channels + c) * plane + i] }
            }
        }
        return out
    }

    /// [n][plane][c] → [n][c][plane].
    public static func nchw(fromNHWC x: [Float], batch: Int, channels: Int, plane: Int) -> [Float] {
        precondition(x.count == batch * channels * plane)
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
