/// RGBA pixels over an opaque background, as every decoder with alpha hands them to dedog.
enum Compositing {
    /// Composites `width × height` RGBA pixels onto `background`, rounded to nearest, and packs them as RGB in place,
    /// so that a large image needs 4 bytes a pixel at the peak rather than 7 (each RGB pixel is written at or before
    /// the RGBA one it reads). `premultiplied` says whether colour values already carry their alpha.
    static func rgb(fromRGBA pixels: inout [UInt8], width: Int, height: Int, background: RGBColor,
                    premultiplied: Bool = false) {
        let bg = [UInt32(background.r), UInt32(background.g), UInt32(background.b)]
        pixels.withUnsafeMutableBufferPointer { p in
            for i in 0..<(width * height) {
                let a = UInt32(p[i * 4 + 3])
                for c in 0..<3 {
                    let colour = UInt32(p[i * 4 + c])
                    let v = (premultiplied ? colour * 255 : colour * a) + bg[c] * (255 - a)
                    p[i * 3 + c] = UInt8(min(255, (v + 127) / 255))
                }
            }
        }
        pixels.removeLast(width * height)
    }
}
