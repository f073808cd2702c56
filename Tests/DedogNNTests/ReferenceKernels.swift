@_spi(Testing) import DedogNN
import Foundation
/// Plain, obviously-correct kernels in NCHW layout with double accumulation: the yardstick the fast kernels
/// are tested against. Slow by design, and not part of the product: they share with the engine only its rule of
/// output size and padding (`SamePadding`).
enum ReferenceKernels {
    static func samePadding(input: Int, kernel: Int, stride: Int) -> (output: Int, before: Int) {
        SamePadding.of(input: input, kernel: kernel, stride: stride)
    }

    /// Grouped 2-D convolution with TF-SAME padding, zeros outside the image.
    /// `input` [n, cin, h, w], `weight` [cout, cin / groups, k, k], `bias` [cout]; returns [n, cout, oh, ow].
    static func convolution(_ input: [Float], n: Int, cin: Int, h: Int, w: Int,
                                   weight: [Float], bias: [Float], cout: Int, kernel k: Int, stride: Int,
                                   groups: Int) -> (values: [Float], oh: Int, ow: Int) {
        let (oh, padTop) = samePadding(input: h, kernel: k, stride: stride)
        let (ow, padLeft) = samePadding(input: w, kernel: k, stride: stride)
        let cinPerGroup = cin / groups, coutPerGroup = cout / groups
        var out = [Float](repeating: 0, count: n * cout * oh * ow)
        for b in 0..<n {
            for co in 0..<cout {
                let g = co / coutPerGroup
                for oy in 0..<oh {
                    for ox in 0..<ow {
                        var acc = Double(bias[co])
                        for ci in 0..<cinPerGroup {
                            let c = g * cinPerGroup + ci
                            for ky in 0..<k {
                                let iy = oy * stride - padTop + ky
                                if iy < 0 || iy >= h { continue }
                                for kx in 0..<k {
                                    let ix = ox * stride - padLeft + kx
                                    if ix < 0 || ix >= w { continue }
                                    acc += Double(input[((b * cin + c) * h + iy) * w + ix])
                                        * Double(weight[((co * cinPerGroup + ci) * k + ky) * k + kx])
                                }
                            }
                        }
                        out[((b * cout + co) * oh + oy) * ow + ox] = Float(acc)
                    }
                }
            }
        }
        return (out, oh, ow)
    }

    static func relu6(_ x: [Float]) -> [Float] { x.map { min(max($0, 0), 6) } }

    static func add(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 + $1 } }

    /// [n, c, h, w] → [n, c], the mean of each plane.
    static func globalAveragePool(_ x: [Float], n: Int, c: Int, hw: Int) -> [Float] {
        (0..<(n * c)).map { i in Float((0..<hw).reduce(0.0) { $0 + Double(x[i * hw + $1]) } / Double(hw)) }
    }

    /// The 8-bit pointwise convolution's integer sums the plain way: for each of `pixels` rows of `inputs` bytes
    /// and each output c, bias[c] + Σ_k (x − inputZero[k]) · weight[c][k], in 64-bit integers (`inputZero`: one per
    /// input, or one for all).
    static func quantizedSums(_ input: [UInt8], pixels: Int, inputs: Int, inputZero: [Int], weight: [Int8],
                                     bias: [Int32]?, outputs: Int) -> [Int] {
        let inputZero = inputZero.count == inputs ? inputZero : Array(repeating: inputZero[0], count: inputs)
        var sums = [Int](repeating: 0, count: pixels * outputs)
        for p in 0..<pixels {
            for c in 0..<outputs {
                var acc = Int(bias?[c] ?? 0)
                for k in 0..<inputs { acc += (Int(input[p * inputs + k]) - inputZero[k]) * Int(weight[c * inputs + k]) }
                sums[p * outputs + c] = acc
            }
        }
        return sums
    }

    /// The 8-bit depthwise convolution's integer sums the plain way: `input` NHWC bytes whose zero point is 0 (so
    /// padding adds nothing), `weight` [channels × k × k]; for each output pixel and channel, bias[c] + Σ x · w over
    /// the taps inside the image, in 64-bit integers. Returns [oh × ow × channels].
    static func quantizedDepthwiseSums(_ input: [UInt8], height: Int, width: Int, channels: Int, weight: [Int8],
                                              bias: [Int32], kernel k: Int, stride: Int) -> (sums: [Int], oh: Int, ow: Int) {
        let (oh, padTop) = samePadding(input: height, kernel: k, stride: stride)
        let (ow, padLeft) = samePadding(input: width, kernel: k, stride: stride)
        var sums = [Int](repeating: 0, count: oh * ow * channels)
        for oy in 0..<oh {
            for ox in 0..<ow {
                for c in 0..<channels {
                    var acc = Int(bias[c])
                    for ky in 0..<k {
                        let iy = oy * stride - padTop + ky
                        if iy < 0 || iy >= height { continue }
                        for kx in 0..<k {
                            let ix = ox * stride - padLeft + kx
                            if ix < 0 || ix >= width { continue }
                            acc += Int(input[(iy * width + ix) * channels + c]) * Int(weight[(c * k + ky) * k + kx])
                        }
                    }
                    sums[(oy * ow + ox) * channels + c] = acc
                }
            }
        }
        return (sums, oh, ow)
    }

    /// Floats to bytes as the quantizer stores them: x · inverseScale (one rounding), clamped to low − zero …
    /// high − zero, rounded to nearest (ties to even), plus zero.
    static func quantize(_ x: [Float], inverseScale: Float, zero: Int, low: Int, high: Int) -> [UInt8] {
        x.map { UInt8(Int(clamp($0 * inverseScale, Float(low - zero), Float(high - zero)).rounded(.toNearestOrEven)) + zero) }
    }

    /// max then min, as the vector instructions do them (the second operand when they compare equal).
    static func clamp(_ x: Float, _ low: Float, _ high: Float) -> Float {
        let y = x > low ? x : low
        return y < high ? y : high
    }

    /// Sums to bytes: t = Float(sum) · scale[c] (plus (r − residualZero[c]) · residualScale[c]), clamped to
    /// low − zero[c] … high − zero[c], rounded to nearest (ties to even), plus zero[c]. One rounding per operation.
    /// Zero points and residual encodings: one per output, or one for all.
    static func requantize(_ sums: [Int], outputs: Int, scale: [Float], zero: [Int], low: Int, high: Int,
                                  residual: [UInt8]? = nil, residualZero: [Int] = [0], residualScale: [Float] = [0]) -> [UInt8] {
        func at<T>(_ values: [T], _ c: Int) -> T { values.count == 1 ? values[0] : values[c] }
        return sums.indices.map { i in
            let c = i % outputs, z = at(zero, c)
            var t = Float(Int32(truncatingIfNeeded: sums[i])) * scale[c]
            if let residual {
                let r = Float(Int(residual[i]) - at(residualZero, c)) * at(residualScale, c)
                t = t + r
            }
            t = clamp(t, Float(low - z), Float(high - z))
            return UInt8(Int(t.rounded(.toNearestOrEven)) + z)
        }
    }

    /// Sums to floats: Float(sum) · scale[c], clamped to 0…6 when `clampsToSix`.
    static func dequantize(_ sums: [Int], outputs: Int, scale: [Float], clampsToSix: Bool) -> [Float] {
        sums.indices.map { i in
            let t = Float(Int32(truncatingIfNeeded: sums[i])) * scale[i % outputs]
            return clampsToSix ? clamp(t, 0, 6) : t
        }
    }

    /// [n, inputs] · weightᵀ + bias, with `weight` [outputs, inputs]; returns [n, outputs].
    static func linear(_ x: [Float], n: Int, inputs: Int, weight: [Float], bias: [Float], outputs: Int) -> [Float] {
        var out = [Float](repeating: 0, count: n * outputs)
        for b in 0..<n {
            for o in 0..<outputs {
                var acc = Double(bias[o])
                for i in 0..<inputs { acc += Double(x[b * inputs + i]) * Double(weight[o * inputs + i]) }
                out[b * outputs + o] = Float(acc)
            }
        }
        return out
    }
}
