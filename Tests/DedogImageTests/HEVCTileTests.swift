import Foundation
import Testing
@_spi(Testing) import DedogImage

/// dedog's own decoding of HEICs as phones write them (a grid of HEVC tiles; `HEVCTiles`), checked against libheif's
/// decoding of the same files, which is independent of it (libheif assembles the grid and converts the colours
/// itself). The fixtures come from scripts/make-heic-grid-fixtures.
@Suite struct HEVCTileTests {
    static func decode(_ name: String, _ options: ImageDecoder.Options = .init()) throws -> RGBImage {
        try ImageDecoder(options: options).decode(contentsOf: Fixtures.url(name))
    }

    static func libheif(_ name: String) throws -> RGBImage {
        var options = ImageDecoder.Options()
        options.decodesHEVCItself = false
        return try decode(name, options)
    }

    /// Largest and mean per-channel difference of two pictures of one size.
    static func difference(_ a: RGBImage, _ b: RGBImage) -> (largest: Int, mean: Double) {
        var largest = 0, sum = 0
        for (x, y) in zip(a.pixels, b.pixels) {
            let d = abs(Int(x) - Int(y))
            largest = max(largest, d)
            sum += d
        }
        return (largest, Double(sum) / Double(max(1, a.pixels.count)))
    }

    /// `image` reduced `factor` times, each pixel the mean of its block (fewer at the right and bottom edges).
    static func reduced(_ image: RGBImage, by factor: Int) throws -> RGBImage {
        let w = (image.width + factor - 1) / factor, h = (image.height + factor - 1) / factor
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for oy in 0..<h {
            for ox in 0..<w {
                for c in 0..<3 {
                    var sum = 0, n = 0
                    for y in (oy * factor)..<min(oy * factor + factor, image.height) {
                        for x in (ox * factor)..<min(ox * factor + factor, image.width) {
                            sum += Int(image.pixels[(y * image.width + x) * 3 + c])
                            n += 1
                        }
                    }
                    out[(oy * w + ox) * 3 + c] = UInt8((sum + n / 2) / n)
                }
            }
        }
        return try RGBImage(width: w, height: h, pixels: out)
    }

    /// Full size, with every in-loop filter: libheif's pixels, to within its rounding and chroma sampling. The grid's
    /// padding is cut, the transforms applied, the colour matrix the file's (heic-grid-bt709 says BT.709 video range).
    @Test(arguments: ["heic-grid.heic", "heic-grid-rot90-mirror.heic", "heic-grid-bt709.heic", "phone-beagle-grid.heic"])
    func aGridDecodesAsLibheifDecodesIt(_ name: String) throws {
        let ours = try Self.decode(name), theirs = try Self.libheif(name)
        #expect(ours.width == theirs.width && ours.height == theirs.height)
        #expect(ours.original == nil)
        let (largest, mean) = Self.difference(ours, theirs)
        #expect(largest <= 1 && mean < 0.6, "\(name): largest \(largest), mean \(mean)")
        if name == "heic-grid-bt709.heic" {  // the same coded tiles read with another matrix: far from heic-grid's
            #expect(Self.difference(ours, try Self.decode("heic-grid.heic")).mean > 5)
        }
    }

    /// The picture itself: within lossy coding of the picture heic-grid was made from, upright.
    @Test(arguments: ["heic-grid.heic", "heic-grid-rot90-mirror.heic"])
    func aGridShowsItsPicture(_ name: String) throws {
        let image = try Self.decode(name)
        let expected = try RGBImage(width: 232, height: 150, pixels: [UInt8](Data(contentsOf: Fixtures.url("heic-grid.rgb"))))
        #expect(image.width == 232 && image.height == 150)
        let (_, mean) = Self.difference(image, expected)
        #expect(mean < 2.5, "\(name): mean difference \(mean)")
    }

    /// Asked for a smaller picture, the tiles come out reduced by a whole factor that keeps twice the asked shorter
    /// side (libheif alone cannot reduce: these sizes show the picture is dedog's), each pixel the mean of its block,
    /// deblocking and SAO skipped; `original` keeps the photo's size, turned as the picture is.
    @Test func aGridIsReducedAsItIsConverted() throws {
        let beagle = try Self.decode("phone-beagle-grid.heic", .init(minimumShorterSide: 150))
        #expect(beagle.width == 384 && beagle.height == 384)  // 768 / 2: twice 150 fits 2 times, not 3
        #expect(beagle.original == PixelSize(width: 768, height: 768))
        let expected = try Self.reduced(Self.libheif("phone-beagle-grid.heic"), by: 2)
        let (largest, mean) = Self.difference(beagle, expected)
        #expect(mean < 1 && largest <= 12, "largest \(largest), mean \(mean)")

        // Stored 150×232 and turned: reduced before it is turned, the same picture as the upright file's.
        let turned = try Self.decode("heic-grid-rot90-mirror.heic", .init(minimumShorterSide: 37))
        let upright = try Self.decode("heic-grid.heic", .init(minimumShorterSide: 37))
        #expect(upright.width == 116 && upright.height == 75 && upright.original == PixelSize(width: 232, height: 150))
        #expect(turned.width == 116 && turned.height == 75 && turned.original == PixelSize(width: 232, height: 150))
        let (_, drift) = Self.difference(turned, upright)
        #expect(drift < 0.5, "mean difference \(drift)")
    }

    /// Asked for one rectangle of the photo, only the tiles under it are decoded: the rectangle's pixels are the
    /// whole decode's, a tile far from it stays black. In the turned file the rectangle is found in the stored
    /// picture through its transforms.
    @Test(arguments: ["phone-beagle-grid.heic", "heic-grid-rot90-mirror.heic"])
    func onlyTheTilesUnderTheNeededRegionAreDecoded(_ name: String) throws {
        let whole = try Self.decode(name)
        var options = ImageDecoder.Options()
        let region = PixelRect(x: whole.width / 8, y: whole.height / 8, width: whole.width / 4, height: whole.height / 5)
        options.neededRegion = region
        let part = try Self.decode(name, options)
        #expect(part.width == whole.width && part.height == whole.height)
        func pixels(_ image: RGBImage, _ r: PixelRect) -> [UInt8] {
            var out: [UInt8] = []
            for y in r.y..<(r.y + r.height) {
                let start = (y * image.width + r.x) * 3
                out += image.pixels[start..<(start + r.width * 3)]
            }
            return out
        }
        #expect(pixels(part, region) == pixels(whole, region))
        let far = PixelRect(x: whole.width - 8, y: whole.height - 8, width: 8, height: 8)
        #expect(pixels(part, far).allSatisfy { $0 == 0 })
        #expect(!pixels(whole, far).allSatisfy { $0 == 0 })
    }

    /// A phone's photo with a thumbnail that shows another picture (phone-thumbnail-differs: an empty field, and a
    /// thumbnail with a beagle at its left): the thumbnail is decoded when it is large enough, the photo when it is
    /// not; which one came out is told by the pixels where the thumbnail has its dog.
    @Test func theThumbnailOrThePhotoIsReadAsAsked() throws {
        func dogPixels(_ image: RGBImage) -> Double {  // how far the thumbnail's dog area is from the field's colours
            var sum = 0.0, n = 0.0
            let (x0, x1) = (image.width * 30 / 320, image.width * 120 / 320), (y0, y1) = (image.height * 80 / 240, image.height * 170 / 240)
            for y in y0..<y1 {
                for x in x0..<x1 {
                    let p = (y * image.width + x) * 3
                    sum += abs(Double(image.pixels[p + 1]) - 125)  // the field's green is 110-150
                    n += 1
                }
            }
            return sum / n
        }
        let thumbnail = try Self.decode("phone-thumbnail-differs.heic", .init(sufficientLongerSide: 318))
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
        #expect(thumbnail.original == PixelSize(width: 1024, height: 768))
        let photo = try Self.decode("phone-thumbnail-differs.heic", .init(minimumShorterSide: 334))
        #expect(photo.width == 1024 && photo.height == 768 && photo.original == nil)
        #expect(dogPixels(thumbnail) > 25, "\(dogPixels(thumbnail))")
        #expect(dogPixels(photo) < 20, "\(dogPixels(photo))")
    }
}
