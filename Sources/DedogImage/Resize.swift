/// Antialiased resampling with a triangle (bilinear) filter whose support grows with the reduction factor,
/// computed like Pillow's `Image.resize(..., BILINEAR)`: separable, horizontal pass first, 22-bit fixed-point
/// weights, results rounded to 8 bits between passes. Downscaling therefore does not alias.
public enum Resampler {
    /// `image` resized to `width`×`height`.
    public static func resized(_ image: RGBImage, width: Int, height: Int) throws(ImageError) -> RGBImage {
        try resizedRegion(image, width: width, height: height, left: 0, top: 0, regionWidth: width, regionHeight: height)
    }

    /// The `regionWidth`×`regionHeight` window at (`left`, `top`) of `image` resized to `width`×`height`.
    /// Only the window's pixels are computed, and they equal those of a full resize followed by a crop.
    public static func resizedRegion(_ image: RGBImage, width: Int, height: Int,
                                     left: Int, top: Int, regionWidth: Int, regionHeight: Int) throws(ImageError) -> RGBImage {
        guard image.width > 0, image.height > 0, width > 0, height > 0, left >= 0, top >= 0, regionWidth >= 0,
              regionHeight >= 0, left + regionWidth <= width, top + regionHeight <= height else {
            throw .invalidArgument(detail: "a \(regionWidth)×\(regionHeight) window at (\(left), \(top)) of a \(image.width)×\(image.height) image resized to \(width)×\(height)")
        }
        if regionWidth == 0 || regionHeight == 0 { return RGBImage(checked: regionWidth, regionHeight, []) }
        let horizontal = Weights(inSize: image.width, outSize: width, first: left, count: regionWidth)
        let vertical = Weights(inSize: image.height, outSize: height, first: top, count: regionHeight)
        // Rows of the source that the vertical pass reads.
        let rowStart = vertical.start.min() ?? 0
        let rowEnd = zip(vertical.start, vertical.length).map { $0 + $1 }.max() ?? 0

        var middle = [UInt8](repeating: 0, count: (rowEnd - rowStart) * regionWidth * 3)
        image.pixels.withUnsafeBufferPointer { src in
            middle.withUnsafeMutableBufferPointer { dst in
                horizontal.withBuffers { start, length, coefficients in
                    for y in rowStart..<rowEnd {
                        let srcRow = y * image.width * 3
                        let dstRow = (y - rowStart) * regionWidth * 3
                        for x in 0..<regionWidth {
                            let n = length[x], taps = coefficients.baseAddress! + x * horizontal.stride
                            let px = src.baseAddress! + srcRow + start[x] * 3
                            var r = Weights.half, g = Weights.half, b = Weights.half
                            for i in 0..<n {
                                let w = taps[i], p = px + i &* 3
                                r &+= Int32(p[0]) &* w; g &+= Int32(p[1]) &* w; b &+= Int32(p[2]) &* w
                            }
                            dst[dstRow + x * 3] = Weights.clip(r)
                            dst[dstRow + x * 3 + 1] = Weights.clip(g)
                            dst[dstRow + x * 3 + 2] = Weights.clip(b)
                        }
                    }
                }
            }
        }

        var out = [UInt8](repeating: 0, count: regionWidth * regionHeight * 3)
        let rowBytes = regionWidth * 3
        // A row of sums at a time, a source row added to all of them per tap: the inner loop runs along the row.
        var sums = [Int32](repeating: 0, count: rowBytes)
        middle.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                sums.withUnsafeMutableBufferPointer { acc in
                    vertical.withBuffers { start, length, coefficients in
                        for y in 0..<regionHeight {
                            let s = start[y] - rowStart, n = length[y], k = y * vertical.stride
                            let line = dst.baseAddress! + y * rowBytes
                            acc.update(repeating: Weights.half)
                            for i in 0..<n {
                                let w = coefficients[k + i], row = src.baseAddress! + (s + i) * rowBytes
                                for c in 0..<rowBytes { acc[c] &+= Int32(row[c]) &* w }
                            }
                            for c in 0..<rowBytes { line[c] = Weights.clip(acc[c]) }
                        }
                    }
                }
            }
        }
        return RGBImage(checked: regionWidth, regionHeight, out)
    }
}

/// Per output pixel: the first source pixel, how many follow, and their fixed-point weights.
/// The weights are never negative (a triangle) and each pixel's add up to 2^22 give or take their rounding, so a
/// sum of bytes times weights stays under 2^31: the passes add and multiply without overflow checks.
private struct Weights {
    static let precisionBits: Int32 = 32 - 8 - 2
    static let half: Int32 = 1 << (precisionBits - 1)

    var start: [Int] = []
    var length: [Int] = []
    var coefficients: [Int32] = []
    let stride: Int

    /// `body` with the three tables as buffers (no bounds checks in the resampling loops; their indices come
    /// from the tables' own construction).
    func withBuffers<R>(_ body: (UnsafeBufferPointer<Int>, UnsafeBufferPointer<Int>, UnsafeBufferPointer<Int32>) -> R) -> R {
        start.withUnsafeBufferPointer { s in length.withUnsafeBufferPointer { l in coefficients.withUnsafeBufferPointer { body(s, l, $0) } } }
    }

    init(inSize: Int, outSize: Int, first: Int, count: Int) {
        let scale = Double(inSize) / Double(outSize)
        let filterScale = max(scale, 1.0)
        let support = 1.0 * filterScale  // the triangle filter's support is 1
        stride = Int(support.rounded(.up)) * 2 + 1
        coefficients = [Int32](repeating: 0, count: count * stride)
        var k = [Double](repeating: 0, count: stride)
        for o in 0..<count {
            let center = (Double(first + o) + 0.5) * scale
            let lo = max(Int(center - support + 0.5), 0)
            let n = min(Int(center + support + 0.5), inSize) - lo
            var total = 0.0
            for i in 0..<n {
                let t = abs((Double(i + lo) - center + 0.5) / filterScale)
                k[i] = t < 1 ? 1 - t : 0
                total += k[i]
            }
            for i in 0..<n {
                let w = total != 0 ? k[i] / total : 0
                let fixed = w * Double(1 << Weights.precisionBits)
                coefficients[o * stride + i] = Int32(w < 0 ? fixed - 0.5 : fixed + 0.5)
            }
            start.append(lo)
            length.append(n)
        }
    }

    static func clip(_ v: Int32) -> UInt8 {
        let s = v >> precisionBits
        return s < 0 ? 0 : s > 255 ? 255 : UInt8(s)
    }
}
