import CWebP

/// WebP through libwebp: lossy and lossless, with or without alpha; animations give their first frame.
/// The EXIF chunk's orientation is applied, as browsers do.
struct WebPDecoder {
    let options: ImageDecoder.Options
    let name: String

    func decode(_ bytes: [UInt8]) throws(ImageError) -> RGBImage {
        var features = WebPBitstreamFeatures()
        let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw failure(status, while: "reading the header") }
        let width = Int(features.width), height = Int(features.height)
        guard width > 0, height > 0 else { throw .corrupt(file: name, detail: "the header declares an empty image") }
        if width * height > options.maxPixels {
            throw .tooLarge(file: name, width: width, height: height, limit: options.maxPixels)
        }

        var image = features.has_animation != 0
            ? try firstFrame(bytes, width: width, height: height)
            : try still(bytes, width: width, height: height, alpha: features.has_alpha != 0)
        if options.appliesEXIFOrientation, let orientation = Self.orientation(bytes) {
            image = orientation.applied(to: image)
        }
        return image
    }

    /// A still picture decoded straight into our buffer: RGB, or RGBA composited in place when it has alpha.
    private func still(_ bytes: [UInt8], width: Int, height: Int, alpha: Bool) throws(ImageError) -> RGBImage {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw .corrupt(file: name, detail: "libwebp could not start a decoder (version mismatch)")
        }
        let channels = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let status = bytes.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                config.output.colorspace = alpha ? MODE_RGBA : MODE_RGB
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = dst.baseAddress
                config.output.u.RGBA.stride = Int32(width * channels)
                config.output.u.RGBA.size = dst.count
                let status = WebPDecode(src.baseAddress, src.count, &config)
                WebPFreeDecBuffer(&config.output)  // external memory stays ours; this frees only libwebp's state
                return status
            }
        }
        guard status == VP8_STATUS_OK else { throw failure(status, while: "decoding the picture") }
        if alpha {
            Compositing.rgb(fromRGBA: &pixels, width: width, height: height, background: options.background)
        }
        return RGBImage(checked: width, height, pixels)
    }

    /// The first frame of an animation, as its full canvas (frames may cover only part of it).
    private func firstFrame(_ bytes: [UInt8], width: Int, height: Int) throws(ImageError) -> RGBImage {
        var animOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
            throw .corrupt(file: name, detail: "libwebp could not start an animation decoder (version mismatch)")
        }
        animOptions.color_mode = MODE_RGBA
        let result = bytes.withUnsafeBufferPointer { src -> Result<[UInt8], ImageError> in
            var data = WebPData(bytes: src.baseAddress, size: src.count)
            guard let decoder = WebPAnimDecoderNew(&data, &animOptions) else {
                return .failure(.corrupt(file: name, detail: "the animation's chunks are damaged or incomplete"))
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0, Int(info.canvas_width) == width,
                  Int(info.canvas_height) == height else {
                return .failure(.corrupt(file: name, detail: "the animation's canvas disagrees with its header"))
            }
            var frame: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
                return .failure(.truncated(file: name, detail: "the first frame could not be decoded"))
            }
            return .success(Array(UnsafeBufferPointer(start: frame, count: width * height * 4)))
        }
        var pixels = try result.get()
        Compositing.rgb(fromRGBA: &pixels, width: width, height: height, background: options.background)
        return RGBImage(checked: width, height, pixels)
    }

    /// The orientation in the file's EXIF chunk, if it has one (only the extended VP8X layout carries metadata).
    static func orientation(_ bytes: [UInt8]) -> EXIFOrientation? {
        bytes.withUnsafeBufferPointer { src -> EXIFOrientation? in
            var data = WebPData(bytes: src.baseAddress, size: src.count)
            guard let demux = WebPDemux(&data) else { return nil }
            defer { WebPDemuxDelete(demux) }
            guard WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & EXIF_FLAG.rawValue != 0 else { return nil }
            var chunk = WebPChunkIterator()
            guard WebPDemuxGetChunk(demux, "EXIF", 1, &chunk) != 0 else { return nil }
            defer { WebPDemuxReleaseChunkIterator(&chunk) }
            guard let start = chunk.chunk.bytes else { return nil }
            return EXIFOrientation.read(fromExifPayload: Array(UnsafeBufferPointer(start: start, count: chunk.chunk.size)))
        }
    }

    private func failure(_ status: VP8StatusCode, while doing: String) -> ImageError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA:
            return .truncated(file: name, detail: "libwebp ran out of data while \(doing)")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            return .unsupportedCoding(file: name, format: "WebP", detail: "libwebp does not support a feature it uses")
        case VP8_STATUS_OUT_OF_MEMORY:
            return .corrupt(file: name, detail: "libwebp ran out of memory while \(doing)")
        default:
            return .corrupt(file: name, detail: "libwebp found invalid data while \(doing) (status \(status.rawValue))")
        }
    }
}
