/// A k×k depthwise convolution (one filter per channel) with TF-SAME padding, bias and ReLU6 fused, on the
/// channels-last activation. Each output pixel accumulates its in-bounds taps in registers, 16 channels at a
/// time, so padding costs nothing and the channel loop is contiguous. Threads split the output rows.
public struct DepthwiseConvolution: Sendable {
    public let channels: Int
    public let kernel: Int
    public let stride: Int
    public let weight: [Float]  // [channels × kernel × kernel] as in the checkpoint, BN folded in
    public let bias: [Float]
    /// The same weights tap-major, [kernel × kernel × channels], as the kernel reads them.
    let tapWeights: [Float]

    public init(channels: Int, kernel: Int, stride: Int, weight: [Float], bias: [Float]) {
        precondition(weight.count == channels * kernel * kernel && bias.count == channels && stride >= 1,
                     "depthwise \(channels)ch \(kernel)×\(kernel): \(weight.count) weights, \(bias.count) biases")
        self.channels = channels
        self.kernel = kernel
        self.stride = stride
        self.weight = weight
        self.bias = bias
        tapWeights = KernelSupport.tapMajor(weight, rows: channels, taps: kernel * kernel)
    }

    /// Safe entry point: `input` is NHWC, [batch × height × width × channels]; so is the result.
    public func callAsFunction(_ input: [Float], batch: Int, height: Int, width: Int, threads: Int = 1) -> [Float] {
        let (oh, ow) = outputSize(height: height, width: width)
        return KernelSupport.call(input, expecting: channels * batch * height * width, kernel: "depthwise",
                                  outputCount: channels * batch * oh * ow) {
            run($0, $1, batch: batch, height: height, width: width, parallel: Parallel(threads: threads))
        }
    }

    public func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        KernelSupport.outputSize(height: height, width: width, kernel: kernel, stride: stride)
    }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, batch: Int,
             height: Int, width: Int, parallel: Parallel) {
        let (oh, padTop) = ReferenceKernels.samePadding(input: height, kernel: kernel, stride: stride)
        let (ow, padLeft) = ReferenceKernels.samePadding(input: width, kernel: kernel, stride: stride)
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let geometry = Geometry(height: height, width: width, oh: oh, ow: ow, padTop: padTop, padLeft: padLeft,
                                kernel: kernel, stride: stride, channels: channels)
        tapWeights.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                let wp = SharedPointer(UnsafeMutablePointer(mutating: w.baseAddress!))
                let bp = SharedPointer(UnsafeMutablePointer(mutating: b.baseAddress!))
                // Enough rows: threads take bands of rows. Few (7×7 at batch 1): bands of channels.
                let byRows = batch * oh >= 4 * parallel.parts
                parallel { part in
                    let rows = byRows ? slice(batch * oh, part: part, of: parallel.parts) : 0..<(batch * oh)
                    let channels = byRows ? 0..<geometry.channels : slice(geometry.channels, part: part, of: parallel.parts, align: 16)
                    for row in rows {
                        Self.row(row, channels, geometry, src.base, dst.base, wp.base, bp.base)
                    }
                }
            }
        }
    }

    struct Geometry {
        let height, width, oh, ow, padTop, padLeft, kernel, stride, channels: Int
    }

    /// The `channels` of output row `row` (of batch × oh). Interior pixels go in pairs that share each weight
    /// load; pixels whose window touches the padding go one by one, with only their in-bounds taps.
    @inline(__always)
    static func row(_ row: Int, _ channels: Range<Int>, _ g: Geometry, _ x: UnsafePointer<Float>,
                    _ y: UnsafeMutablePointer<Float>, _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>) {
        let oy = row % g.oh
        let iy0 = oy * g.stride - g.padTop
        let rows = max(0, -iy0)..<min(g.kernel, g.height - iy0)
        let image = x + (row / g.oh) * g.height * g.width * g.channels
        var ox = 0
        while ox < g.ow {
            let ix0 = ox * g.stride - g.padLeft
            let out = y + (row * g.ow + ox) * g.channels
            if ox + 1 < g.ow && ix0 >= 0 && ix0 + g.stride + g.kernel <= g.width {
                pair(image, iy0: iy0, ix0: ix0, rows: rows, channels, g, out, w, bias)
                ox += 2
            } else {
                let columns = max(0, -ix0)..<min(g.kernel, g.width - ix0)
                pixel(image, iy0: iy0, ix0: ix0, rows: rows, columns: columns, channels, g, out, w, bias)
                ox += 1
            }
        }
    }

    /// One output pixel over the taps `rows` × `columns` of its window.
    @inline(__always)
    static func pixel(_ image: UnsafePointer<Float>, iy0: Int, ix0: Int, rows: Range<Int>, columns: Range<Int>,
                      _ channels: Range<Int>, _ g: Geometry, _ out: UnsafeMutablePointer<Float>,
                      _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>) {
        let k = g.kernel, c = g.channels
        var ch = channels.lowerBound
        while ch + 16 <= channels.upperBound {
            var a0 = load8(bias + ch), a1 = load8(bias + ch + 8)
            for ky in rows {
                let pixelRow = image + ((iy0 + ky) * g.width + ix0) * c + ch
                let tapRow = w + ky * k * c + ch
                for kx in columns {
                    let xp = pixelRow + kx * c, wp = tapRow + kx * c
                    a0 += load8(xp) * load8(wp)
                    a1 += load8(xp + 8) * load8(wp + 8)
                }
            }
            store8(relu6(a0), out + ch)
            store8(relu6(a1), out + ch + 8)
            ch += 16
        }
        while ch < channels.upperBound {
            var a = bias[ch]
            for ky in rows {
                for kx in columns {
                    a += image[((iy0 + ky) * g.width + ix0 + kx) * c + ch] * w[(ky * k + kx) * c + ch]
                }
            }
            out[ch] = relu6(a)
            ch += 1
        }
    }

    /// Two neighbouring output pixels whose windows lie wholly inside the image, sharing each weight load.
    @inline(__always)
    static func pair(_ image: UnsafePointer<Float>, iy0: Int, ix0: Int, rows: Range<Int>,
                     _ channels: Range<Int>, _ g: Geometry, _ out: UnsafeMutablePointer<Float>,
                     _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>) {
        let k = g.kernel, c = g.channels, step = g.stride * c
        let next = out + c
        var ch = channels.lowerBound
        while ch + 16 <= channels.upperBound {
            let b0 = load8(bias + ch), b1 = load8(bias + ch + 8)
            var a0 = b0, a1 = b1, n0 = b0, n1 = b1
            for ky in rows {
                let pixelRow = image + ((iy0 + ky) * g.width + ix0) * c + ch
                let tapRow = w + ky * k * c + ch
                for kx in 0..<k {
                    let xp = pixelRow + kx * c, wp = tapRow + kx * c
                    let w0 = load8(wp), w1 = load8(wp + 8)
                    a0 += load8(xp) * w0
                    a1 += load8(xp + 8) * w1
                    n0 += load8(xp + step) * w0
                    n1 += load8(xp + step + 8) * w1
                }
            }
            store8(relu6(a0), out + ch)
            store8(relu6(a1), out + ch + 8)
            store8(relu6(n0), next + ch)
            store8(relu6(n1), next + ch + 8)
            ch += 16
        }
        if ch < channels.upperBound {
            let rest = ch..<channels.upperBound
            pixel(image, iy0: iy0, ix0: ix0, rows: rows, columns: 0..<k, rest, g, out, w, bias)
            pixel(image, iy0: iy0, ix0: ix0 + g.stride, rows: rows, columns: 0..<k, rest, g, next, w, bias)
        }
    }
}
