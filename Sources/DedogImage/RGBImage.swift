/// A width and height in pixels.
public struct PixelSize: Sendable, Equatable, Codable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// A rectangle of a picture, in its pixels.
public struct PixelRect: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Whether `other` lies wholly inside this rectangle.
    public func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }
}

/// An 8-bit RGB image, rows top to bottom, pixels interleaved as R, G, B.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]
    /// The size of the photo this was decoded from, upright, when the decoder made it smaller (a large JPEG at
    /// a DCT scale, `ImageDecoder.Options.minimumShorterSide`); nil when the image is the photo's own size.
    /// Coordinates in this image times `original.width / width` are the photo's.
    public var original: PixelSize? = nil

    public init(width: Int, height: Int, pixels: [UInt8]) throws(ImageError) {
        guard width >= 0, height >= 0, pixels.count == width * height * 3 else {
            throw .invalidArgument(detail: "\(pixels.count) bytes do not make a \(width)×\(height) RGB image")
        }
        self.init(checked: width, height, pixels)
    }

    /// For the decoders and operations here, whose sizes are right by construction.
    init(checked width: Int, _ height: Int, _ pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at column `x`, row `y`.
    public subscript(x x: Int, y y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }

    /// The image mirrored left to right.
    public func mirrored() -> RGBImage {
        let (width, height) = (self.width, self.height)
        let out = pixels.withUnsafeBufferPointer { src in
            [UInt8](unsafeUninitializedCapacity: src.count) { dst, n in
                for y in 0..<height {
                    for x in 0..<width {
                        let s = (y * width + x) * 3, d = (y * width + width - 1 - x) * 3
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
                n = src.count
            }
        }
        return RGBImage(checked: width, height, out)
    }

    /// The `width`×`height` region whose top-left corner is (`left`, `top`).
    public func cropped(left: Int, top: Int, width w: Int, height h: Int) throws(ImageError) -> RGBImage {
        guard left >= 0, top >= 0, w >= 0, h >= 0, left + w <= width, top + h <= height else {
            throw .invalidArgument(detail: "crop \(w)×\(h) at (\(left), \(top)) is outside a \(width)×\(height) image")
        }
        var out = [UInt8](repeating: 0, count: w * h * 3)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let s = ((top + y) * width + left) * 3
                    let d = y * w * 3
                    for i in 0..<(w * 3) { dst[d + i] = src[s + i] }
                }
            }
        }
        return RGBImage(checked: w, h, out)
    }
}

/// An opaque 8-bit colour, used as the background that transparent pixels are composited on.
public struct RGBColor: Sendable, Equatable, Codable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(r: UInt8, g: UInt8, b: UInt8) { self.r = r; self.g = g; self.b = b }
    public static let white = RGBColor(r: 255, g: 255, b: 255)
}
