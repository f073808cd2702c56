import CHeif
import Foundation

/// HEIC/HEIF and AVIF through libheif: the primary image, with the file's rotation, mirroring and crop applied
/// (in HEIF these transforms, not EXIF, say how to show it), 10- and 12-bit images reduced to 8 bits, alpha
/// composited. Grid images (how phones store 12-megapixel photos) are assembled by libheif.
struct HEIFDecoder {
    let options: ImageDecoder.Options
    let name: String
    let format: String

    func decode(_ bytes: [UInt8]) throws(ImageError) -> RGBImage {
        let boxes = HEIFBoxes(bytes)
        if let cut = boxes.cutShort {
            throw .truncated(file: name, detail: "the file ends inside its '\(cut)' box")
        }
        if boxes.hasDerivationLoop() {
            throw .corrupt(file: name, detail: "its grid or overlay images refer to each other in a loop")
        }
        // libheif allocates a grid's or an overlay's declared output before decoding a part, whatever the image
        // handle says.
        for grid in boxes.derivedSizes() {
            let (pixels, overflow) = grid.width.multipliedReportingOverflow(by: grid.height)
            guard overflow || pixels > options.maxPixels else { continue }
            throw .tooLarge(file: name, width: grid.width, height: grid.height, limit: options.maxPixels)
        }
        guard dedog_heif_load() == 1 else {
            let why = String(cString: dedog_heif_load_error())
            throw .unsupportedCoding(file: name, format: format,
                                     detail: "libheif could not be opened (\(why)); install it (Debian: apt install libheif1)")
        }
        guard let context = dedog_heif_context_alloc() else {
            throw .corrupt(file: name, detail: "libheif could not start a decoder")
        }
        defer { dedog_heif_context_free(context) }
        // libheif decodes a grid's tiles on up to this many threads per level of derived images; `hasDerivationLoop`
        // bounds the levels, so a file cannot make it start threads without end (a self-referencing grid did, until
        // thread creation failed with an exception that ended the process; found by the fuzzer).
        dedog_heif_context_set_max_decoding_threads(context, Int32(threads))
        // libheif keeps the pointer that read_from_memory_without_copy gets, so everything happens inside one closure.
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ImageError) in try decode(raw, context: context, boxes: boxes) }
        }
        return try result.get()
    }

    /// Threads for a grid's tiles, ours or libheif's.
    private var threads: Int { min(4, ProcessInfo.processInfo.activeProcessorCount) }

    private func decode(_ raw: UnsafeRawBufferPointer, context: OpaquePointer, boxes: HEIFBoxes) throws(ImageError) -> RGBImage {
        try check(dedog_heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil),
                  while: "reading the file's structure")
        var handle: OpaquePointer?
        try check(dedog_heif_context_get_primary_image_handle(context, &handle), while: "finding the primary image")
        guard let handle else { throw .corrupt(file: name, detail: "the file has no primary image") }
        defer { dedog_heif_image_handle_release(handle) }

        // Width and height after the file's transforms; checked before any pixel is decoded.
        let width = Int(dedog_heif_image_handle_get_width(handle)), height = Int(dedog_heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw .corrupt(file: name, detail: "the header declares an empty image") }
        if width * height > options.maxPixels {
            throw .tooLarge(file: name, width: width, height: height, limit: options.maxPixels)
        }

        // A phone's HEIC carries a small picture of itself: when that is large enough for what is asked, it is
        // decoded instead of the 12-megapixel grid (`original` keeps the photo's size, for a closer look).
        let thumbnail = thumbnail(of: handle, width: width, height: height)
        defer { if let thumbnail { dedog_heif_image_handle_release(thumbnail) } }
        let chosen = thumbnail ?? handle
        let alpha = dedog_heif_image_handle_has_alpha_channel(chosen) != 0
        // The photo itself, as phones store it: decoded here, tiles side by side and reduced as it is converted.
        // libheif's own reading (size after the transforms) must agree with the layout's, else libheif decodes.
        if thumbnail == nil, !alpha, options.decodesHEVCItself, let layout = HEVCLayout(boxes),
           layout.upright == PixelSize(width: width, height: height),
           let image = HEVCTiles.decode(layout, file: raw, minimumShorterSide: options.minimumShorterSide,
                                        region: options.neededRegion, maxPixels: options.maxPixels, threads: threads) {
            return image
        }
        let premultiplied = alpha && dedog_heif_image_handle_is_premultiplied_alpha(chosen) != 0
        guard let decoding = dedog_heif_decoding_options_alloc() else {
            throw .corrupt(file: name, detail: "libheif could not start a decoder")
        }
        defer { dedog_heif_decoding_options_free(decoding) }
        decoding.pointee.ignore_transformations = 0
        decoding.pointee.convert_hdr_to_8bit = 1
        // Not strict: libheif's strict mode also refuses harmless warnings (colour primaries it does not know, which
        // heif-convert and browsers show), and in 1.15 it leaks the decoded picture when it does. Damaged coded data
        // still fails (the decoder plugin reports it), and truncation is caught by the box walk above.
        decoding.pointee.strict_decoding = 0

        var decoded: OpaquePointer?
        try check(dedog_heif_decode_image(chosen, &decoded, heif_colorspace_RGB,
                                    alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, decoding),
                  while: "decoding the picture")
        guard let decoded else { throw .corrupt(file: name, detail: "libheif returned no picture") }
        defer { dedog_heif_image_release(decoded) }

        let outWidth = Int(dedog_heif_image_get_width(decoded, heif_channel_interleaved))
        let outHeight = Int(dedog_heif_image_get_height(decoded, heif_channel_interleaved))
        var stride: Int32 = 0
        guard outWidth > 0, outHeight > 0, outWidth * outHeight <= options.maxPixels,
              dedog_heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved) == 8,
              let plane = dedog_heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride) else {
            throw .corrupt(file: name, detail: "libheif returned a picture of an unexpected shape")
        }
        let channels = alpha ? 4 : 3
        let rowBytes = outWidth * channels
        guard Int(stride) >= rowBytes else { throw .corrupt(file: name, detail: "libheif returned a short row") }
        var pixels = [UInt8](repeating: 0, count: outHeight * rowBytes)
        pixels.withUnsafeMutableBytes { dst in
            for y in 0..<outHeight {
                dst.baseAddress!.advanced(by: y * rowBytes)
                    .copyMemory(from: plane.advanced(by: y * Int(stride)), byteCount: rowBytes)
            }
        }
        if alpha {
            Compositing.rgb(fromRGBA: &pixels, width: outWidth, height: outHeight, background: options.background,
                            premultiplied: premultiplied)
        }
        var image = RGBImage(checked: outWidth, outHeight, pixels)
        if thumbnail != nil { image.original = PixelSize(width: width, height: height) }
        return image
    }

    /// The smallest of the image's thumbnails whose shorter side is at least `options.minimumShorterSide`, or whose
    /// longer side is at least `options.sufficientLongerSide`, and whose shape is the photo's (`width`×`height`, after the transforms, within 1 %: a thumbnail stored without the
    /// photo's rotation is not used); nil when there is none or no size was asked for. The caller releases it.
    private func thumbnail(of handle: OpaquePointer, width: Int, height: Int) -> OpaquePointer? {
        let shorter = options.minimumShorterSide, longer = options.sufficientLongerSide
        guard shorter != nil || longer != nil else { return nil }
        let count = Int(dedog_heif_image_handle_get_number_of_thumbnails(handle))
        guard (1...16).contains(count) else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(dedog_heif_image_handle_get_list_of_thumbnail_IDs(handle, &ids, Int32(count)))
        let shape = Double(width) / Double(height)
        var best: (handle: OpaquePointer, pixels: Int)?
        for id in ids.prefix(min(listed, count)) {
            var found: OpaquePointer?
            guard dedog_heif_image_handle_get_thumbnail(handle, id, &found).code == heif_error_Ok, let found else { continue }
            let w = Int(dedog_heif_image_handle_get_width(found)), h = Int(dedog_heif_image_handle_get_height(found))
            let large = shorter.map { min(w, h) >= $0 } == true || longer.map { max(w, h) >= $0 } == true
            let fits = w > 0 && h > 0 && large && w < width
                && abs(Double(w) / Double(h) - shape) <= 0.01 * shape
            if fits, best.map({ w * h < $0.pixels }) ?? true {
                if let previous = best { dedog_heif_image_handle_release(previous.handle) }
                best = (found, w * h)
            } else {
                dedog_heif_image_handle_release(found)
            }
        }
        return best?.handle
    }

    private func check(_ error: heif_error, while doing: String) throws(ImageError) {
        guard error.code != heif_error_Ok else { return }
        let message = (error.message.map { String(cString: $0) } ?? "no message")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let detail = "libheif, \(doing): \(message)"
        switch (error.code, error.subcode) {
        case (_, heif_suberror_End_of_data):
            throw .truncated(file: name, detail: detail)
        case (heif_error_Unsupported_feature, _), (heif_error_Unsupported_filetype, _):
            throw .unsupportedCoding(file: name, format: format, detail: message)
        case (_, heif_suberror_Security_limit_exceeded):
            throw .corrupt(file: name, detail: "it declares sizes beyond libheif's safety limits: \(message)")
        default:
            throw .corrupt(file: name, detail: detail)
        }
    }
}
