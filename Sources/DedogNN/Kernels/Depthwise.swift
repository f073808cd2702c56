/// A k×k depthwise convolution (one filter per channel) with TF-SAME padding, bias and ReLU6 fused.
/// Works plane by plane on the CNHW activation; threads split the channels.
public struct DepthwiseConvolution: Sendable {
    public let channels: Int
    public let kernel: Int
    public let stride: Int
    public let weight: [Float]  // [channels × kernel × kernel], BN folded in
    public let bias: [Float]

    public init(channels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) {
        precondition(weight.count == channels * kernel * kernel && bias.count == channels && stride >= 1,
                     "depthwise \(channels)ch \(kernel)×\(kernel): \(weight.count) weights, \(bias.count) biases")
        self.channels = channels
        self.kernel = kernel
        self.stride = stride
        self.weight = weight
        self.bias = bias
    }

    /// Safe entry point: `input` is CNHW, [channels × batch × height × width]; so is the result.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1) -> [Float] {
        precondition(input.count == channels * batch * height * width, "depthwise: input size")
        let (oh, ow) = outputSize(height: height, width: width)
        var out = [Float](repeating: 0, count: channels * batch * oh * ow)
        input.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in
                run(x.baseAddress!, y.baseAddress!, batch: batch, height: height, width: width, threads: threads)
            }
        }
        return out
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        (ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride).output,
         ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride).output)
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, batch: Int,
             height: Int, width: Int, threads: Int) {
        let (oh, padTop) = ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride)
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let k = kernel, s = stride
        weight.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                let wp = SharedPointer(UnsafeMutablePointer(mutating: w.baseAddress!))
                let bp = SharedPointer(UnsafeMutablePointer(mutating: b.baseAddress!))
                parallelFor(threads) { part in
                    for c in slice(channels, part: part, of: threads) {
                        let filter = wp.base + c * k * k
                        for n in 0..<batch {
                            let plane = c * batch + n
                            Self.plane(src.base + plane * height * width, height: height, width: width,
                                       dst.base + plane * oh * ow, oh: oh, ow: ow, padTop: padTop, padLeft: padLeft,
                                       filter: filter, kernel: k, stride: s, bias: bp.base[c])
                        }
                    }
                }
            }
        }
    }

    /// One channel of one image: rows of the output accumulate k×k shifted rows of the input.
    @inline(__always)
    static func plane(_ x: UnsafePointer<Float>, height: Int, width: Int,
                      _ y: UnsafeMutablePointer<Float>, oh: Int, ow: Int, padTop: Int, padLeft: Int,
                      filter: UnsafePointer<Float>, kernel k: Int, stride s: Int, bias: Float) {
        for oy in 0..<oh {
            let out = y + oy * ow
            for ox in 0..<ow { out[ox] = bias }
            for ky in 0..<k {
                let iy = oy * s - padTop + ky
                if iy < 0 || iy >= height { continue }
                let row = x + iy * width
                for kx in 0..<k {
                    let wv = filter[ky * k + kx]
                    let shift = kx - padLeft
                    // Valid outputs: 0 <= ox * s + shift < width.
                    let lo = shift >= 0 ? 0 : (-shift + s - 1) / s
                    let hi = min(ow, (width - 1 - shift) / s + 1)
                    if lo >= hi { continue }
                    if s == 1 {
                        let r = row + shift
                        for ox in lo..<hi { out[ox] += wv * r[ox] }
                    } else {
                        for ox in lo..<hi { out[ox] += wv * row[ox * s + shift] }
                    }
                }
            }
            for ox in 0..<ow { out[ox] = min(max(out[ox], 0), 6) }
        }
    }
}
