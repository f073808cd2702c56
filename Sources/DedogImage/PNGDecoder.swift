import CPNG

/// PNG through libpng's simplified `png_image_*` API: 1–16-bit grey, grey+alpha, palette, RGB, RGBA.
struct PNGDecoder {
    let options: ImageDecoder.Options
    let name: String

    func decode(_ bytes: [UInt8]) throws(ImageError) -> RGBImage {
        // libpng keeps the pointer that begin_read gets until the image is freed, so reading begins, finishes and
        // frees inside one closure over the bytes.
        let result = bytes.withUnsafeBufferPointer { buffer in Result { () throws(ImageError) in try decode(buffer) } }
        return try result.get()
    }

    private func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(ImageError) -> RGBImage {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }

        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else { throw failure(image) }
        let width = Int(image.width), height = Int(image.height)
        if width * height > options.maxPixels {
            throw .tooLarge(file: name, width: width, height: height, limit: options.maxPixels)
        }

        // 16-bit files without gamma information are sRGB-encoded in practice; libpng would otherwise take them
        // as linear light and brighten them when reducing to 8 bits.
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        image.format = CPNG_FORMAT_RGBA  // 8-bit sRGB, straight (non-premultiplied) alpha
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        let finished = rgba.withUnsafeMutableBufferPointer {
            png_image_finish_read(&image, nil, $0.baseAddress, Int32(width * 4), nil)
        }
        guard finished != 0 else { throw failure(image) }
        Compositing.rgb(fromRGBA: &rgba, width: width, height: height, background: options.background)
        return RGBImage(checked: width, height, rgba)
    }

    private func failure(_ image: png_image) -> ImageError {
        let message = withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let lowered = message.lowercased()
        if lowered.contains("read beyond end") || lowered.contains("not enough") || lowered.contains("truncated")
            || lowered.contains("unexpected end") {
            return .truncated(file: name, detail: message)
        }
        return .corrupt(file: name, detail: message.isEmpty ? "libpng could not read it" : message)
    }
}
