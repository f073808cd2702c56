import CJPEGScan
import CTurboJPEG

/// JPEG through libjpeg-turbo's TurboJPEG API: baseline, progressive, greyscale, CMYK/YCCK.
///
/// libjpeg warns about many things. Some are harmless: extraneous bytes before a marker (which some cameras and
/// editors write), an unknown JFIF revision; browsers show such files and so does dedog. Others mean the picture is
/// damaged or cut short; dedog refuses those unless the caller allows damaged data. TurboJPEG gives only the first
/// warning's text, so when it warns, `CJPEGScan` reads the entropy-coded data again with libjpeg's own error manager
/// and counts each warning by its code.
struct JPEGDecoder {
    /// As TurboJPEG's TJFLAG_LIMITSCANS: a progressive file with more scans is built to use up time.
    static let maxScans: Int32 = 500

    let options: ImageDecoder.Options
    let name: String

    func decode(_ bytes: [UInt8]) throws(ImageError) -> RGBImage {
        guard let handle = tjInitDecompress() else {
            throw .corrupt(file: name, detail: "libjpeg-turbo could not start a decoder")
        }
        defer { tjDestroy(handle) }

        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let headerStatus = bytes.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
        }
        // TurboJPEG also returns -1 for a header it read whole but warned about (extraneous bytes, say).
        var warned = false
        if headerStatus != 0 {
            guard tjGetErrorCode(handle) == TJERR_WARNING.rawValue else { throw failure(handle, bytes: bytes) }
            warned = true
        }
        guard width > 0, height > 0 else {
            let detail = "the header declares an empty image"
            throw Self.hasEndMarker(bytes) ? .corrupt(file: name, detail: detail) : .truncated(file: name, detail: detail)
        }
        if Int(width) * Int(height) > options.maxPixels {
            throw .tooLarge(file: name, width: Int(width), height: Int(height), limit: options.maxPixels)
        }

        let scale = scalingFactor(width: Int(width), height: Int(height))
        let outWidth = Int((Int64(width) * Int64(scale.num) + Int64(scale.denom) - 1) / Int64(scale.denom))
        let outHeight = Int((Int64(height) * Int64(scale.num) + Int64(scale.denom) - 1) / Int64(scale.denom))

        let isCMYK = colorspace == TJCS_CMYK.rawValue || colorspace == TJCS_YCCK.rawValue
        let channels = isCMYK ? 4 : 3
        let format = isCMYK ? TJPF_CMYK : TJPF_RGB
        // LIMITSCANS refuses progressive files with absurd scan counts (a CPU bomb).
        let strict = TJFLAG_LIMITSCANS | TJFLAG_STOPONWARNING, tolerant = TJFLAG_LIMITSCANS

        var buffer = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
        func decompress(_ flags: Int32) -> Int32 {
            bytes.withUnsafeBufferPointer { src in
                buffer.withUnsafeMutableBufferPointer { dst in
                    tjDecompress2(handle, src.baseAddress, UInt(bytes.count), dst.baseAddress,
                                  Int32(outWidth), 0, Int32(outHeight), format.rawValue, flags)
                }
            }
        }
        func warnedOnly() -> Bool { tjGetErrorCode(handle) == TJERR_WARNING.rawValue }
        // A warning, in the header or the data, is harmless or damage; only libjpeg's codes tell which.
        var stopsOnWarning = !options.allowsDamagedData
        if warned && stopsOnWarning {
            try refuseDamage(bytes)
            stopsOnWarning = false
        }
        if decompress(stopsOnWarning ? strict : tolerant) != 0 {
            guard warnedOnly() else { throw failure(handle, bytes: bytes) }
            if stopsOnWarning {
                try refuseDamage(bytes)
                if decompress(tolerant) != 0, !warnedOnly() { throw failure(handle, bytes: bytes) }
            }
        }

        var image = isCMYK ? Self.rgb(fromInvertedCMYK: buffer, width: outWidth, height: outHeight)
                           : RGBImage(checked: outWidth, outHeight, buffer)
        var original = PixelSize(width: Int(width), height: Int(height))
        if options.appliesEXIFOrientation, let orientation = EXIFOrientation.read(fromJPEG: bytes) {
            image = orientation.applied(to: image)
            if orientation.swapsAxes { original = PixelSize(width: original.height, height: original.width) }
        }
        if scale.num != scale.denom { image.original = original }
        return image
    }

    /// The smallest libjpeg-turbo scaling factor whose output keeps the shorter side ≥ the requested size.
    private func scalingFactor(width: Int, height: Int) -> tjscalingfactor {
        let full = tjscalingfactor(num: 1, denom: 1)
        guard let wanted = options.minimumShorterSide, wanted > 0 else { return full }
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return full }
        let shorter = min(width, height)
        var best = full
        for i in 0..<Int(count) {
            let f = factors[i]
            guard f.num <= f.denom else { continue }  // never upscale in the decoder
            let scaled = (shorter * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
            if scaled >= wanted, f.num * best.denom < best.num * f.denom { best = f }
        }
        return best
    }

    /// Adobe-style CMYK JPEGs (all that Photoshop and Pillow write) store inverted ink values.
    private static func rgb(fromInvertedCMYK cmyk: [UInt8], width: Int, height: Int) -> RGBImage {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            let k = UInt32(cmyk[i * 4 + 3])
            for c in 0..<3 {
                rgb[i * 3 + c] = UInt8((UInt32(cmyk[i * 4 + c]) * k + 127) / 255)
            }
        }
        return RGBImage(checked: width, height, rgb)
    }

    /// Throws if libjpeg's warnings about `bytes` include any that mean damage or truncation.
    private func refuseDamage(_ bytes: [UInt8]) throws(ImageError) {
        var report = dedog_jpeg_scan_report()
        bytes.withUnsafeBufferPointer { dedog_jpeg_scan($0.baseAddress, $0.count, Self.maxScans, &report) }
        let message = withUnsafeBytes(of: report.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if report.truncated > 0 || (report.failed != 0 && !Self.hasEndMarker(bytes)) {
            throw .truncated(file: name, detail: message)
        }
        if report.damaged > 0 || report.failed != 0 { throw .corrupt(file: name, detail: message) }
    }

    private func failure(_ handle: tjhandle, bytes: [UInt8]) -> ImageError {
        let message = String(cString: tjGetErrorStr2(handle))
        // libjpeg reports running out of data as "Premature end of JPEG file" (or a missing EOI marker).
        let lowered = message.lowercased()
        if lowered.contains("premature end") || lowered.contains("insufficient data") || !Self.hasEndMarker(bytes) {
            return .truncated(file: name, detail: message)
        }
        return .corrupt(file: name, detail: message)
    }

    private static func hasEndMarker(_ bytes: [UInt8]) -> Bool {
        // Some encoders pad after EOI; look at the last few bytes.
        let tail = bytes.suffix(64)
        var previous: UInt8 = 0
        for b in tail {
            if previous == 0xFF && b == 0xD9 { return true }
            previous = b
        }
        return false
    }
}
