import CCBLAS

/// The first convolution (3×3, stride 2, 3 → 32 channels, TF-SAME) as im2col + GEMM, bias and ReLU6 fused.
/// Reads the NCHW network input and writes the CNHW activation the rest of the network uses.
public struct StemConvolution: Sendable {
    public let inChannels: Int
    public let outChannels: Int
    public let kernel: Int
    public let stride: Int
    public let weight: [Float]  // [outChannels × (inChannels · k · k)], BN folded in
    public let bias: [Float]

    public init(inChannels: Int, outChannels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) {
        precondition(weight.count == outChannels * inChannels * kernel * kernel && bias.count == outChannels,
                     "stem: \(weight.count) weights, \(bias.count) biases")
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.kernel = kernel
        self.stride = stride
        self.weight = weight
        self.bias = bias
    }

    /// Safe entry point: `input` is NCHW, [batch × inChannels × height × width]; the result is CNHW.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1) -> [Float] {
        precondition(input.count == batch * inChannels * height * width, "stem: input size")
        let (oh, ow) = outputSize(height: height, width: width)
        var out = [Float](repeating: 0, count: outChannels * batch * oh * ow)
        var scratch = [Float](repeating: 0, count: inChannels * kernel * kernel * batch * oh * ow)
        input.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in
                scratch.withUnsafeMutableBufferPointer { s in
                    run(x.baseAddress!, y.baseAddress!, scratch: s.baseAddress!, batch: batch, height: height,
                        width: width, threads: threads)
                }
            }
        }
        return out
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        (ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride).output,
         ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride).output)
    }

    /// `scratch` holds inChannels·k·k × batch·oh·ow floats.
    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
             batch: Int, height: Int, width: Int, threads: Int) {
        let (oh, padTop) = ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride)
        let columns = batch * oh * ow
        let k = kernel, s = stride, cin = inChannels
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), col = SharedPointer(scratch)
        // im2col: row (c, ky, kx), column (n, oy, ox); threads split the rows.
        parallelFor(threads) { part in
            for r in slice(cin * k * k, part: part, of: threads) {
                let c = r / (k * k), ky = (r / k) % k, kx = r % k
                for n in 0..<batch {
                    let plane = src.base + (n * cin + c) * height * width
                    for oy in 0..<oh {
                        let dst = col.base + r * columns + (n * oh + oy) * ow
                        let iy = oy * s - padTop + ky
                        if iy < 0 || iy >= height {
                            for ox in 0..<ow { dst[ox] = 0 }
                            continue
                        }
                        let row = plane + iy * width
                        for ox in 0..<ow {
                            let ix = ox * s - padLeft + kx
                            dst[ox] = (ix >= 0 && ix < width) ? row[ix] : 0
                        }
                    }
                }
            }
        }
        PointwiseConvolution(inChannels: cin * k * k, outChannels: outChannels, weight: weight, bias: bias,
                             clampsToSix: true)
            .run(scratch, output, columns: columns, threads: threads)
    }
}
