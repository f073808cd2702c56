/// The eight EXIF orientations: how the stored pixels must be turned to be seen upright.
public enum EXIFOrientation: Int, Sendable, CaseIterable {
    case up = 1, mirrored = 2, down = 3, downMirrored = 4
    case leftMirrored = 5, right = 6, rightMirrored = 7, left = 8

    /// Whether the upright image has width and height swapped.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// Reads the orientation tag (0x0112) from a JPEG's APP1 Exif segment; nil if there is none or it is invalid.
    ///
    /// Every offset is bounds-checked: a hostile or damaged Exif block yields nil, never a crash.
    public static func read(fromJPEG bytes: [UInt8]) -> EXIFOrientation? {
        var pos = 2  // after SOI
        while pos + 4 <= bytes.count {
            guard bytes[pos] == 0xFF else { return nil }
            let marker = bytes[pos + 1]
            if marker == 0xFF { pos += 1; continue }  // fill byte
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan / end of image: no more headers
            let length = Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3])
            guard length >= 2, pos + 2 + length <= bytes.count else { return nil }
            if marker == 0xE1, length >= 8 {
                let start = pos + 4
                if Array(bytes[start..<start + 6]) == Array("Exif\0\0".utf8) {
                    return readTIFF(bytes[(start + 6)..<(pos + 2 + length)])
                }
            }
            pos += 2 + length
        }
        return nil
    }

    /// Reads the orientation tag from an Exif payload as WebP's EXIF chunk holds it: a TIFF header, sometimes after
    /// the "Exif\0\0" prefix that JPEG's APP1 segment uses (some writers copy it along).
    static func read(fromExifPayload bytes: [UInt8]) -> EXIFOrientation? {
        let prefix = Array("Exif\0\0".utf8)
        if bytes.count >= prefix.count, Array(bytes.prefix(prefix.count)) == prefix {
            return readTIFF(bytes[prefix.count...])
        }
        return readTIFF(bytes[...])
    }

    private static func readTIFF(_ tiff: ArraySlice<UInt8>) -> EXIFOrientation? {
        let base = tiff.startIndex
        let count = tiff.count
        guard count >= 8 else { return nil }
        let little: Bool
        switch (tiff[base], tiff[base + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ off: Int) -> Int? {
            guard off >= 0, off + 2 <= count else { return nil }
            let a = Int(tiff[base + off]), b = Int(tiff[base + off + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ off: Int) -> Int? {
            guard let lo = u16(little ? off : off + 2), let hi = u16(little ? off + 2 : off) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), let entries = u16(ifd) else { return nil }
        for i in 0..<entries {
            let entry = ifd + 2 + i * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            guard u16(entry + 2) == 3, let value = u16(entry + 8) else { return nil }  // SHORT
            return EXIFOrientation(rawValue: value)
        }
        return nil
    }

    /// Where pixel (`x`, `y`) of the picture turned upright comes from in the stored picture of `w`×`h`.
    @inline(__always)
    func source(x: Int, y: Int, width w: Int, height h: Int) -> (x: Int, y: Int) {
        switch self {
        case .up: (x, y)
        case .mirrored: (w - 1 - x, y)
        case .down: (w - 1 - x, h - 1 - y)
        case .downMirrored: (x, h - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, h - 1 - x)
        case .rightMirrored: (w - 1 - y, h - 1 - x)
        case .left: (w - 1 - y, x)
        }
    }

    /// The part of the stored picture of `w`×`h` that the rectangle `rect` of the upright picture shows.
    func source(of rect: PixelRect, width w: Int, height h: Int) -> PixelRect {
        let a = source(x: rect.x, y: rect.y, width: w, height: h)
        let b = source(x: rect.x + rect.width - 1, y: rect.y + rect.height - 1, width: w, height: h)
        return PixelRect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }

    /// `image` turned so that it is seen upright.
    public func applied(to image: RGBImage) -> RGBImage {
        if self == .up { return image }
        let w = image.width, h = image.height
        let ow = swapsAxes ? h : w, oh = swapsAxes ? w : h
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<oh {
                    for x in 0..<ow {
                        let (sx, sy) = source(x: x, y: y, width: w, height: h)
                        let s = (sy * w + sx) * 3, d = (y * ow + x) * 3
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return RGBImage(checked: ow, oh, out)
    }
}
