import DedogImage
import Foundation
import Testing

/// A stretched square given back its true proportions (`Proportions.restored`), then prepared as classify prepares a
/// photo (padded), checked against the original photo and against layout arithmetic done here, independently.
@Suite struct ProportionsTests {
    /// A 300 × 200 photo: a smooth gradient with a dark disc of radius 60 at (150, 100).
    static func original() throws -> RGBImage {
        let w = 300, h = 200
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let inDisc = (x - 150) * (x - 150) + (y - 100) * (y - 100) <= 60 * 60
                let i = (y * w + x) * 3
                pixels[i] = inDisc ? 20 : UInt8(120 + x * 100 / w)
                pixels[i + 1] = inDisc ? 30 : UInt8(100 + y * 100 / h)
                pixels[i + 2] = inDisc ? 40 : 180
            }
        }
        return try RGBImage(width: w, height: h, pixels: pixels)
    }

    /// The photo squashed to a 224 square as a data set would store it, by sampling the nearest pixel (not the
    /// resampler under test).
    static func stretched(_ image: RGBImage, side: Int = 224) throws -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: side * side * 3)
        for y in 0..<side {
            for x in 0..<side {
                let p = image[x: (2 * x + 1) * image.width / (2 * side), y: (2 * y + 1) * image.height / (2 * side)]
                (pixels[(y * side + x) * 3], pixels[(y * side + x) * 3 + 1], pixels[(y * side + x) * 3 + 2]) = (p.r, p.g, p.b)
            }
        }
        return try RGBImage(width: side, height: side, pixels: pixels)
    }

    /// The disc's width and height in `image`: the extent of its dark pixels.
    static func discExtent(_ image: RGBImage) -> (width: Int, height: Int) {
        var xs: [Int] = [], ys: [Int] = []
        for y in 0..<image.height {
            for x in 0..<image.width where image[x: x, y: y].r < 70 {
                xs.append(x)
                ys.append(y)
            }
        }
        return ((xs.max() ?? 0) - (xs.min() ?? 0) + 1, (ys.max() ?? 0) - (ys.min() ?? 0) + 1)
    }

    @Test func theStretchIsUndone() throws {
        let original = try Self.original(), square = try Self.stretched(original)
        let squashed = Self.discExtent(square)
        #expect(squashed.width < squashed.height - 20, "the square squashes the disc: \(squashed)")
        let restored = try Proportions.restored(square, to: PixelSize(width: 300, height: 200))
        #expect(restored.width == 300 && restored.height == 200)
        let disc = Self.discExtent(restored)
        #expect(abs(disc.width - 121) <= 3 && abs(disc.height - 121) <= 3, "a disc again: \(disc)")
        let difference = zip(restored.pixels, original.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        #expect(Double(difference) / Double(original.pixels.count) < 4, "close to the photo it came from")
    }

    /// Prepared as classify prepares a photo: padded to the network's square. The bars lie where the arithmetic says
    /// (the longer side 300 → 256, the shorter 200 → ⌊256 · 200 / 300⌋ = 170, centred: 43 rows above; the 224 crop
    /// starts 16 rows down, so rows 0–26 and 197–223 of the crop are bars, exactly 0 after normalising), and the
    /// photo between them is the original photo's own preparation, give or take the detail the square lost.
    @Test func theRestoredPhotoIsPreparedAsTheOriginalWouldBe() throws {
        let original = try Self.original()
        let restored = try Proportions.restored(try Self.stretched(original), to: PixelSize(width: 300, height: 200))
        var preparation = Preprocessing(resizeShorterSide: 256, cropSize: 224)
        preparation.fit = .pad
        let tensor = try preparation.tensor(restored), expected = try preparation.tensor(original)
        let plane = 224 * 224
        for channel in 0..<3 {
            for row in Array(0...26) + Array(197...223) {
                let values = tensor[(channel * plane + row * 224)..<(channel * plane + (row + 1) * 224)]
                #expect(values.allSatisfy { $0 == 0 }, "row \(row) of channel \(channel) is a bar")
            }
            for row in [27, 196] {
                let values = tensor[(channel * plane + row * 224)..<(channel * plane + (row + 1) * 224)]
                #expect(values.contains { $0 != 0 }, "row \(row) of channel \(channel) is photo")
            }
        }
        let difference = zip(tensor, expected).reduce(Float(0)) { $0 + abs($1.0 - $1.1) } / Float(tensor.count)
        #expect(difference < 0.03, "within 4 levels of 255 on average of the original's preparation: \(difference)")
        // Prepared without restoring, the square fills the crop and the disc stays squashed: what training on the
        // shared squares taught.
        let unrestored = try preparation.tensor(try Self.stretched(original))
        #expect(unrestored[0..<224].contains { $0 != 0 }, "a square has no bars")
    }

    @Test func aPhotoOfItsOwnSizeIsLeftAsItIs() throws {
        let original = try Self.original()
        #expect(try Proportions.restored(original, to: PixelSize(width: 300, height: 200)) == original)
        #expect(throws: ImageError.self) { try Proportions.restored(original, to: PixelSize(width: 0, height: 200)) }
    }
}
