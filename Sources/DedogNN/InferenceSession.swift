/// Runs the backbone on batches of preprocessed images, reusing its scratch memory between calls.
///
/// Activations are kept channels-last over the whole batch (NHWC), so that every 1×1 convolution is a single
/// GEMM over batch × height × width rows and the depthwise and stem kernels run along contiguous channels.
/// Not thread-safe: make one session per thread; `threads` is how many threads each call uses inside.
public final class InferenceSession {
    public let network: EfficientNetLite
    public let threads: Int
    private let parallel: Parallel
    /// Scratch for the three activation roles (block input/output, expanded, depthwise output).
    private var buffers: [UnsafeMutableBufferPointer<Float>] = []

    init(network: EfficientNetLite, threads: Int) {
        self.network = network
        self.threads = max(1, threads)
        parallel = self.threads > 1 ? Parallel(pool: WorkerPool(parts: self.threads)) : Parallel(threads: 1)
        BLASThreads.useSingleThreadedBLAS()
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
        let net = network
        // Plan sizes: the largest activation at each of the three buffer roles.
        var h = height, w = width
        let (sh, sw) = net.stem.outputSize(height: h, width: w)
        var sizeA = net.stem.outChannels * sh * sw, sizeB = 0, sizeC = 0
        h = sh; w = sw
        for block in net.blocks {
            let cin = block.expand?.inChannels ?? block.depthwise.channels
            let (oh, ow) = block.depthwise.outputSize(height: h, width: w)
            sizeA = max(sizeA, cin * h * w, block.project.outChannels * oh * ow)
            sizeB = max(sizeB, block.depthwise.channels * h * w, block.project.outChannels * oh * ow)
            sizeC = max(sizeC, block.depthwise.channels * oh * ow)
            h = oh; w = ow
        }
        sizeB = max(sizeB, net.head.outChannels * h * w)
        // The block input and output buffers swap roles after every block, so both take the larger size.
        let pingPong = max(sizeA, sizeB)
        let sizes = [pingPong, pingPong, sizeC].map { $0 * batch }
        if buffers.isEmpty || zip(buffers, sizes).contains(where: { $0.count < $1 }) {
            for b in buffers { b.deallocate() }
            buffers = sizes.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: $0) }
        }

        var features = [Float](repeating: 0, count: batch * EfficientNetLite.featureCount)
        let parallel = self.parallel
        input.withUnsafeBufferPointer { inp in
            var a = buffers[0].baseAddress!, b = buffers[1].baseAddress!
            let c = buffers[2].baseAddress!
            func emit(_ name: String, _ p: UnsafeMutablePointer<Float>, channels: Int, plane: Int) {
                guard let tap else { return }
                tap(name, Layout.nchw(fromNHWC: p, batch: batch, channels: channels, plane: plane))
            }
            var h = sh, w = sw
            net.stem.run(inp.baseAddress!, a, batch: batch, height: height, width: width, parallel: parallel)
            emit("stem", a, channels: net.stem.outChannels, plane: h * w)
            for (i, block) in net.blocks.enumerated() {
                let (oh, ow) = block.depthwise.outputSize(height: h, width: w)
                var dwInput = UnsafePointer(a)
                if let expand = block.expand {
                    expand.run(a, b, pixels: batch * h * w, parallel: parallel)
                    dwInput = UnsafePointer(b)
                }
                block.depthwise.run(dwInput, c, batch: batch, height: h, width: w, parallel: parallel)
                block.project.run(c, b, pixels: batch * oh * ow, residual: block.hasResidual ? UnsafePointer(a) : nil,
                                  parallel: parallel)
                swap(&a, &b)
                h = oh; w = ow
                emit(String(format: "block_%02d", i), a, channels: block.project.outChannels, plane: h * w)
            }
            net.head.run(a, b, pixels: batch * h * w, parallel: parallel)
            emit("head", b, channels: net.head.outChannels, plane: h * w)
            features.withUnsafeMutableBufferPointer { f in
                GlobalAveragePool.run(b, f.baseAddress!, channels: net.head.outChannels, batch: batch, planeSize: h * w)
            }
        }
        return features
    }
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
