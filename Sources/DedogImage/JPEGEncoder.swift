import CTurboJPEG

/// Writes RGB pixels as a baseline JPEG (libjpeg-turbo), for the small photo copies a quiz file carries.
public enum JPEGEncoder {
    /// `image` as JPEG bytes at `quality` (1–100), 4:2:0 chroma.
    public static func encode(_ image: RGBImage, quality: Int = 80) throws(ImageError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .invalidArgument(detail: "JPEG quality \(quality) is not 1–100") }
        guard let handle = tjInitCompress() else { throw .invalidArgument(detail: "libjpeg-turbo could not start a compressor") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(handle, pixels.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(TJPF_RGB.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality), 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            let reason = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
            throw .invalidArgument(detail: "JPEG encoding failed: \(reason)")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// `image` scaled down (never up) so that its longer side is at most `longSide`, as JPEG.
    public static func thumbnail(_ image: RGBImage, longSide: Int, quality: Int = 80) throws(ImageError) -> [UInt8] {
        let long = max(image.width, image.height)
        guard long > longSide else { return try encode(image, quality: quality) }
        let scale = Double(longSide) / Double(long)
        let w = max(1, Int((Double(image.width) * scale).rounded())), h = max(1, Int((Double(image.height) * scale).rounded()))
        return try encode(Resampler.resized(image, width: w, height: h), quality: quality)
    }
}
