import Foundation
import Testing
import DedogTestSupport
import DedogImage

@Suite struct PreprocessingTests {
    @Test func resizeMatchesPillowOnKnownSizes() {
        let p = Preprocessing()
        #expect(p.resizedSize(width: 300, height: 500) == (256, 426))
        #expect(p.resizedSize(width: 500, height: 375) == (341, 256))
        #expect(p.resizedSize(width: 224, height: 224) == (256, 256))
    }

    @Test func regionResizeEqualsFullResizeThenCrop() throws {
        var pixels = [UInt8](repeating: 0, count: 37 * 23 * 3)
        var state: UInt32 = 12345
        for i in pixels.indices { state = state &* 1664525 &+ 1013904223; pixels[i] = UInt8(state >> 24) }
        let image = try RGBImage(width: 37, height: 23, pixels: pixels)
        for (w, h) in [(20, 11), (50, 31), (37, 23), (9, 40)] {
            let full = try Resampler.resized(image, width: w, height: h)
            let region = try Resampler.resizedRegion(image, width: w, height: h, left: w / 4, top: h / 3,
                                                 regionWidth: w / 2, regionHeight: h / 2)
            #expect(try region == full.cropped(left: w / 4, top: h / 3, width: w / 2, height: h / 2))
        }
    }

    /// The mirrored view is made from the crop, not from a mirrored copy of the whole photo; it must be exactly
    /// the crop of the mirror image (the resampler's weights are symmetric), so cached features stay valid.
    @Test(arguments: [(640, 480), (333, 517), (1001, 250), (256, 256), (301, 300), (4000, 3000)])
    func mirroredCropEqualsCropOfTheMirrorImage(_ size: (Int, Int)) throws {
        let (w, h) = size
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        var state: UInt32 = UInt32(w * 7919 + h)
        for i in pixels.indices { state = state &* 1664525 &+ 1013904223; pixels[i] = UInt8(state >> 24) }
        let image = try RGBImage(width: w, height: h, pixels: pixels)
        let p = Preprocessing()
        #expect(try p.cropped(image, mirrored: true) == p.cropped(image.mirrored()))
        #expect(try p.tensor(image, mirrored: true) == p.tensor(image.mirrored()))
    }

    /// The resampler against a plain implementation of the same arithmetic (Pillow's bilinear filter, 22-bit
    /// weights, each pass rounded to bytes), written for clarity in 64-bit integers: the same bytes, for up- and
    /// downscaling by many factors, windows included.
    @Test(arguments: [(37, 23, 20, 11), (37, 23, 50, 31), (640, 480, 341, 256), (301, 300, 256, 256),
                      (1001, 250, 260, 65), (224, 224, 292, 292), (4000, 30, 256, 7), (5, 3, 40, 17)])
    func resamplerMatchesAPlainImplementation(_ sizes: (Int, Int, Int, Int)) throws {
        let (w, h, outW, outH) = sizes
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        var state = UInt32(w * 31 + h)
        for i in pixels.indices { state = state &* 1664525 &+ 1013904223; pixels[i] = UInt8(state >> 24) }
        // Extremes too: runs of black and white, where a sum overflowing or a clamp off by one would show.
        for i in stride(from: 0, to: pixels.count, by: 97) { pixels[i] = i % 2 == 0 ? 255 : 0 }
        let image = try RGBImage(width: w, height: h, pixels: pixels)
        #expect(try Resampler.resized(image, width: outW, height: outH).pixels == Self.plainResize(pixels, w, h, outW, outH))
        let window = try Resampler.resizedRegion(image, width: outW, height: outH, left: outW / 3, top: outH / 4,
                                                 regionWidth: outW / 2, regionHeight: outH / 2)
        #expect(try window == RGBImage(width: outW, height: outH, pixels: Self.plainResize(pixels, w, h, outW, outH))
            .cropped(left: outW / 3, top: outH / 4, width: outW / 2, height: outH / 2))
    }

    /// Pillow's `ImagingResample` for RGB bytes and the bilinear filter, one pass per axis.
    static func plainResize(_ pixels: [UInt8], _ w: Int, _ h: Int, _ outW: Int, _ outH: Int) -> [UInt8] {
        func weights(_ inSize: Int, _ outSize: Int) -> [(start: Int, taps: [Int64])] {
            let scale = Double(inSize) / Double(outSize), filterScale = max(scale, 1), support = filterScale
            return (0..<outSize).map { o in
                let center = (Double(o) + 0.5) * scale
                let lo = max(Int(center - support + 0.5), 0), hi = min(Int(center + support + 0.5), inSize)
                let k = (lo..<hi).map { i in max(0, 1 - abs((Double(i) - center + 0.5) / filterScale)) }
                let total = k.reduce(0, +)
                return (lo, k.map { Int64(((total != 0 ? $0 / total : 0) * Double(1 << 22) + 0.5).rounded(.towardZero)) })
            }
        }
        func clip(_ v: Int64) -> UInt8 { UInt8(max(0, min(255, v >> 22))) }
        let across = weights(w, outW), down = weights(h, outH)
        var middle = [UInt8](repeating: 0, count: outW * h * 3)
        for y in 0..<h { for x in 0..<outW { for c in 0..<3 {
            let (start, taps) = across[x]
            let sum = taps.indices.reduce(Int64(1 << 21)) { $0 + Int64(pixels[(y * w + start + $1) * 3 + c]) * taps[$1] }
            middle[(y * outW + x) * 3 + c] = clip(sum)
        } } }
        var out = [UInt8](repeating: 0, count: outW * outH * 3)
        for y in 0..<outH { for x in 0..<outW { for c in 0..<3 {
            let (start, taps) = down[y]
            let sum = taps.indices.reduce(Int64(1 << 21)) { $0 + Int64(middle[((start + $1) * outW + x) * 3 + c]) * taps[$1] }
            out[(y * outW + x) * 3 + c] = clip(sum)
        } } }
        return out
    }

    @Test func downscalingAveragesInsteadOfAliasing() throws {
        // A one-pixel checkerboard shrunk 4× must come out flat grey, not a moiré of black and white.
        var pixels = [UInt8](repeating: 0, count: 64 * 64 * 3)
        for y in 0..<64 { for x in 0..<64 where (x + y) % 2 == 0 { for c in 0..<3 { pixels[(y * 64 + x) * 3 + c] = 255 } } }
        let small = try Resampler.resized(RGBImage(width: 64, height: 64, pixels: pixels), width: 16, height: 16)
        let inner = (2..<14).flatMap { y in (2..<14).map { x in Int(small[x: x, y: y].r) } }
        #expect(inner.allSatisfy { abs($0 - 128) <= 2 }, "\(inner.min()!)...\(inner.max()!)")
    }

    @Test func constantImageNormalisesPerChannel() throws {
        let image = try RGBImage(width: 300, height: 260, pixels: [UInt8](repeating: 0, count: 300 * 260 * 3).enumerated().map {
            [UInt8(255), 127, 0][$0.offset % 3]
        })
        let p = Preprocessing(mean: [127, 127, 127], std: [128, 128, 128])
        let t = try p.tensor(image)
        let plane = 224 * 224
        #expect(t.count == 3 * plane)
        #expect(t[0] == 1.0 && t[plane] == 0 && t[2 * plane] == -127.0 / 128)
        #expect(Preprocessing(resizeShorterSide: 200).problem != nil)
    }

    /// The reference input was made by Pillow from photo.jpg (see its README). We decode with the same
    /// libjpeg-turbo and resample with Pillow's filter, so the crop should be within a couple of levels;
    /// the bound of 3 levels (of 255) leaves room for IDCT rounding differences between library builds.
    @Test(.needsReference)
    func referencePhotoPreprocessesLikePillow() throws {
        let photo = SharedData.reference.appendingPathComponent("photo.jpg")
        let image = try ImageDecoder().decode(contentsOf: photo)
        #expect(image.width == 300 && image.height == 500)
        let ours = try Preprocessing().tensor(image)
        let reference = try SharedData.referenceTensor("input.f32")
        try #require(ours.count == reference.count)
        let levels = zip(ours, reference).map { abs($0 - $1) * 128 }
        let worst = levels.max()!
        let mean = levels.reduce(0, +) / Float(levels.count)
        #expect(worst <= 3, "max difference \(worst) levels, mean \(mean)")
        #expect(mean <= 0.05, "mean difference \(mean) levels")
    }

    /// DCT scaling only ever shrinks to a size that the resampler then shrinks further, so the network input
    /// must barely change. Here a 128-pixel input is made from a full decode and from a 1/2-scale decode;
    /// measured: mean 2.7 levels of 255 (libjpeg's scaled IDCT is softer than our triangle filter).
    @Test(.needsReference)
    func dctScaledDecodeStaysCloseToTheFullDecode() throws {
        let photo = SharedData.reference.appendingPathComponent("photo.jpg")
        let small = Preprocessing(resizeShorterSide: 128, cropSize: 112)
        let full = try small.tensor(try ImageDecoder().decode(contentsOf: photo))
        let scaled = try ImageDecoder(options: .init(minimumShorterSide: 128)).decode(contentsOf: photo)
        #expect(scaled.width == 150 && scaled.height == 250)
        let levels = zip(full, try small.tensor(scaled)).map { abs($0 - $1) * 128 }
        let mean = levels.reduce(0, +) / Float(levels.count)
        #expect(mean < 4, "mean difference \(mean) levels, max \(levels.max()!)")
    }

    /// Values a caller could pass that make no image or no preprocessing are typed errors, not traps.
    @Test func invalidArgumentsAreTypedErrors() throws {
        #expect(throws: ImageError.invalidArgument(detail: "5 bytes do not make a 2×1 RGB image")) {
            try RGBImage(width: 2, height: 1, pixels: [1, 2, 3, 4, 5])
        }
        let image = try RGBImage(width: 2, height: 1, pixels: [1, 2, 3, 4, 5, 6])
        #expect(throws: ImageError.invalidArgument(detail: "crop 2×1 at (1, 0) is outside a 2×1 image")) {
            try image.cropped(left: 1, top: 0, width: 2, height: 1)
        }
        #expect(throws: ImageError.invalidArgument(detail: "preprocessing: crop size 0 must be positive")) {
            try Preprocessing(resizeShorterSide: 8, cropSize: 0).tensor(image)
        }
        #expect(throws: ImageError.invalidArgument(detail: "cannot preprocess an empty image")) {
            try Preprocessing().tensor(RGBImage(width: 0, height: 0, pixels: []))
        }
    }

    /// A stretched training view resizes the photo as if it were wider (or narrower), then crops as usual: a
    /// square photo stretched by 4/3 equals the same photo first resized to 4:3.
    @Test func horizontalStretchIsAnAnisotropicResize() throws {
        var stretched = Preprocessing(resizeShorterSide: 64, cropSize: 56)
        stretched.horizontalStretch = 4.0 / 3
        #expect(stretched.resizedSize(width: 100, height: 100) == (85, 64))
        #expect(stretched.resizedSize(width: 300, height: 100) == (256, 64))
        stretched.horizontalStretch = 3.0 / 4
        #expect(stretched.resizedSize(width: 100, height: 100) == (64, 85))

        let square = try RGBImage(width: 120, height: 120, pixels: (0..<(120 * 120 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 360) })
        stretched.horizontalStretch = 4.0 / 3
        let direct = try stretched.cropped(square)
        let plain = Preprocessing(resizeShorterSide: 64, cropSize: 56)
        let size = stretched.resizedSize(width: 120, height: 120)
        let resized = try Resampler.resizedRegion(square, width: size.width, height: size.height, left: 0, top: 0,
                                                  regionWidth: size.width, regionHeight: size.height)
        #expect(try plain.cropped(resized).pixels == direct.pixels)
        #expect(try plain.cropped(square).pixels != direct.pixels)
    }
}

/// The three fits on photos that are not square, to the pixel.
@Suite struct GeometryTests {
    /// A 200×100 photo whose every pixel differs (so a shifted window shows).
    static let sharedWide = Shared { try RGBImage(width: 200, height: 100, pixels: (0..<(200 * 100 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 600) }) }
    static var wide: RGBImage { get throws { try sharedWide.value } }

    static func preprocessing(_ fit: Preprocessing.Fit) -> Preprocessing {
        var p = Preprocessing(resizeShorterSide: 64, cropSize: 56)
        p.fit = fit
        return p
    }

    @Test func padCentresTheWholePhotoBetweenBarsOfExactlyTheMean() throws {
        let p = Self.preprocessing(.pad)
        let layout = p.layout(width: 200, height: 100)
        #expect(layout.photo == (64, 32) && layout.canvas == (64, 64) && layout.offset == (0, 16))
        // The 56×56 window of the 64×64 canvas starts at (4, 4): rows 0..<12 and 44..<56 are bars.
        let tensor = try p.tensor(Self.wide)
        let plane = 56 * 56
        for c in 0..<3 {
            for y in 0..<56 {
                let row = tensor[(c * plane + y * 56)..<(c * plane + (y + 1) * 56)]
                if y < 12 || y >= 44 { #expect(row.allSatisfy { $0 == 0 }, "bar row \(y)") }
            }
        }
        // Between them: the photo resized to 64×32, columns 4..<60, exactly as the resampler makes it.
        let region = try Resampler.resizedRegion(Self.wide, width: 64, height: 32, left: 4, top: 0, regionWidth: 56, regionHeight: 32)
        let crop = try p.cropped(Self.wide)
        #expect(Array(crop.pixels[(12 * 56 * 3)..<(44 * 56 * 3)]) == region.pixels)
        #expect(crop.pixels[0..<3] == [127, 127, 127], "bars are the mean in the 8-bit crop")
        for y in 12..<44 {
            for x in 0..<56 {
                let i = y * 56 + x
                #expect(tensor[i] == (Float(crop.pixels[i * 3]) - 127) / 128)
            }
        }
        // A tall photo gets bars left and right.
        let tall = p.layout(width: 100, height: 200)
        #expect(tall.photo == (32, 64) && tall.offset == (16, 0))
    }

    /// The mirrored view is the view of the mirrored photo, also when the photo sits a pixel off centre (a
    /// 100×201 photo becomes 31×64 on the 64 square: 33 pixels of bars, 16 left and 17 right).
    @Test func padMirroredIsThePaddedMirrorImage() throws {
        let p = Self.preprocessing(.pad)
        let tall = try RGBImage(width: 100, height: 201, pixels: (0..<(100 * 201 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 / 300) })
        #expect(p.layout(width: 100, height: 201).offset == (16, 0))
        for image in [try Self.wide, tall] {
            #expect(try p.cropped(image, mirrored: true).pixels == p.cropped(image.mirrored()).pixels)
            #expect(try p.tensor(image, mirrored: true) == p.tensor(image.mirrored()))
        }
    }

    @Test func squeezeStretchesTheWholePhotoToTheSquare() throws {
        let crop = try Self.preprocessing(.squeeze).cropped(Self.wide)
        let expected = try Resampler.resizedRegion(Self.wide, width: 64, height: 64, left: 4, top: 4, regionWidth: 56, regionHeight: 56)
        #expect(crop.pixels == expected.pixels)
    }

    @Test func cropCutsTheEndsOffAsBefore() throws {
        let crop = try Self.preprocessing(.crop).cropped(Self.wide)
        // Shorter side 100 → 64, longer 200 → 128; the window starts at ((128 − 56) / 2, 4) = (36, 4).
        let expected = try Resampler.resizedRegion(Self.wide, width: 128, height: 64, left: 36, top: 4, regionWidth: 56, regionHeight: 56)
        #expect(crop.pixels == expected.pixels)
    }

    /// Where the square the network sees lies in the photo, for each fit of the 200×100 photo (64 then 56):
    /// crop keeps the middle, pad reaches above and below the photo, squeeze is wider than tall.
    @Test func theWindowMapsTheCropBackOntoThePhoto() {
        let crop = Self.preprocessing(.crop).window(width: 200, height: 100)
        #expect(crop == (56.25, 6.25, 87.5, 87.5))  // 128×64 resized, window at (36, 4), ×1.5625
        let pad = Self.preprocessing(.pad).window(width: 200, height: 100)
        #expect(pad == (12.5, -37.5, 175, 175))  // 64×32 on a 64 square at (0, 16), window at (4, 4), ×3.125
        let squeeze = Self.preprocessing(.squeeze).window(width: 200, height: 100)
        #expect(squeeze == (12.5, 6.25, 175, 87.5))  // 64×64, window at (4, 4), ×(3.125, 1.5625)
    }

    /// The shared training photos are squares: there every fit sees the same pixels, so a model that pads
    /// classifies them exactly as one that crops.
    @Test func onASquareEveryFitIsTheSame() throws {
        let square = try RGBImage(width: 90, height: 90, pixels: (0..<(90 * 90 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let tensors = try Preprocessing.Fit.allCases.map { try Self.preprocessing($0).tensor(square) }
        #expect(tensors[0] == tensors[1] && tensors[1] == tensors[2])
        let mirrored = try Preprocessing.Fit.allCases.map { try Self.preprocessing($0).tensor(square, mirrored: true) }
        #expect(mirrored[0] == mirrored[1] && mirrored[1] == mirrored[2])
    }

    /// Both views written at once (one resampling over both windows) are the two tensors made one by one, for every
    /// fit, on photos whose margins are even (the same window) and odd (windows a pixel apart), with and without bars.
    @Test(arguments: [(200, 100), (201, 100), (100, 201), (64, 64), (67, 64), (120, 119)])
    func viewsWrittenTogetherAreTheViewsOneByOne(_ size: (Int, Int)) throws {
        let (w, h) = size
        let image = try RGBImage(width: w, height: h, pixels: (0..<(w * h * 3)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 / 500) })
        for fit in Preprocessing.Fit.allCases {
            let p = Self.preprocessing(fit), n = 3 * p.cropSize * p.cropSize
            let expected = try p.tensor(image) + p.tensor(image, mirrored: true)
            var both = [Float](repeating: .nan, count: 2 * n), one = [Float](repeating: .nan, count: n)
            try both.withUnsafeMutableBufferPointer { buffer throws(ImageError) in try p.writeViews(image, mirrored: true, into: buffer) }
            try one.withUnsafeMutableBufferPointer { buffer throws(ImageError) in try p.writeViews(image, mirrored: false, into: buffer) }
            #expect(both.map(\.bitPattern) == expected.map(\.bitPattern), "\(w)×\(h) \(fit)")
            #expect(one.map(\.bitPattern) == expected[..<n].map(\.bitPattern), "\(w)×\(h) \(fit)")
        }
        var short = [Float](repeating: 0, count: 3 * 56 * 56)
        #expect(throws: ImageError.self) {
            try short.withUnsafeMutableBufferPointer { buffer throws(ImageError) in try Self.preprocessing(.crop).writeViews(image, mirrored: true, into: buffer) }
        }
    }
}
