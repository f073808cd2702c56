/// The first convolution (3×3, stride 2, 3 → 32 channels, TF-SAME), computed directly: each output pixel
/// gathers its 27 inputs from the NCHW network input and accumulates 32 outputs in registers. Writes the
/// channels-last (NHWC) activation the rest of the network uses. Threads split the output rows.
public struct StemConvolution: Sendable {
    public let inChannels: Int
    public let outChannels: Int
    public let kernel: Int
    public let stride: Int
    public let weight: [Float]  // [outChannels × inChannels × k × k] as in the checkpoint, BN folded in
    public let bias: [Float]
    /// [inChannels · k · k × outChannels], as the kernel reads them.
    let tapWeights: [Float]

    public init(inChannels: Int, outChannels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) {
        precondition(weight.count == outChannels * inChannels * kernel * kernel && bias.count == outChannels,
                     "stem: \(weight.count) weights, \(bias.count) biases")
        self.inChannels = inChannels
        self.outChannels = outChannels
        self.kernel = kernel
        self.stride = stride
        self.weight = weight
        self.bias = bias
        tapWeights = KernelSupport.tapMajor(weight, rows: outChannels, taps: inChannels * kernel * kernel)
    }

    /// Safe entry point: `input` is NCHW, [batch × inChannels × height × width]; the result is NHWC.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1) -> [Float] {
        let (oh, ow) = outputSize(height: height, width: width)
        return KernelSupport.call(input, expecting: batch * inChannels * height * width, kernel: "stem",
                                  outputCount: outChannels * batch * oh * ow) {
            run($0, $1, batch: batch, height: height, width: width, parallel: Parallel(threads: threads))
        }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
             batch: Int, height: Int, width: Int, parallel: Parallel) {
        let (oh, padTop) = ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride)
        let k = kernel, s = stride, cin = inChannels, cout = outChannels
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        tapWeights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                let wp = SharedPointer(UnsafeMutablePointer(mutating: w.baseAddress!))
                let bp = SharedPointer(UnsafeMutablePointer(mutating: b.baseAddress!))
                parallel { part in
                    var patch = [Float](repeating: 0, count: cin * k * k)
                    patch.withUnsafeMutableBufferPointer { patchBuffer in
                        let patch = patchBuffer.baseAddress!
                        for row in slice(batch * oh, part: part, of: parallel.parts) {
                            let n = row / oh, oy = row % oh
                            for ox in 0..<ow {
                                // Gather the receptive field, zeros outside the image.
                                for c in 0..<cin {
                                    let plane = src.base + (n * cin + c) * height * width
                                    for ky in 0..<k {
                                        let iy = oy * s - padTop + ky
                                        for kx in 0..<k {
                                            let ix = ox * s - padLeft + kx
                                            patch[(c * k + ky) * k + kx] = (iy >= 0 && iy < height && ix >= 0 && ix < width)
                                                ? plane[iy * width + ix] : 0
                                        }
                                    }
                                }
                                Self.dot(patch, taps: cin * k * k, wp.base, bp.base, cout,
                                         dst.base + (row * ow + ox) * cout)
                            }
                        }
                    }
                }
            }
        }
    }

    /// out[cout] = ReLU6(bias + Σ_t patch[t] · w[t][·]).
    @inline(__always)
    static func dot(_ patch: UnsafePointer<Float>, taps: Int, _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>,
                    _ cout: Int, _ out: UnsafeMutablePointer<Float>) {
        var ch = 0
        while ch + 16 <= cout {
            var a0 = load8(bias + ch), a1 = load8(bias + ch + 8)
            for t in 0..<taps {
                let v = Float8(repeating: patch[t]), wp = w + t * cout + ch
                a0 += v * load8(wp)
                a1 += v * load8(wp + 8)
            }
            store8(relu6(a0), out + ch)
            store8(relu6(a1), out + ch + 8)
            ch += 16
        }
        while ch < cout {
            var a = bias[ch]
            for t in 0..<taps { a += patch[t] * w[t * cout + ch] }
            out[ch] = relu6(a)
            ch += 1
        }
    }
}
