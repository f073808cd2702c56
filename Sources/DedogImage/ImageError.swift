import DedogFiles

/// Everything that can go wrong between a file and its pixels.
///
/// Every case names the file (or the label the caller gave to in-memory bytes), and its
/// description says what is wrong and what to do about it.
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read (missing, a folder, no permission, I/O error).
    case unreadable(file: String, reason: String)
    /// The file has no bytes at all.
    case empty(file: String)
    /// The bytes are none of the formats dedog reads; `looksLike` names what they seem to be, if known ("a HEIC/HEIF photo").
    case unsupportedFormat(file: String, looksLike: String?)
    /// The file is of a format dedog reads, but uses a coding or feature its decoder cannot handle (a HEIF image
    /// coded with JPEG 2000, say).
    case unsupportedCoding(file: String, format: String, detail: String)
    /// The header declares more pixels than the configured limit; nothing was allocated.
    case tooLarge(file: String, width: Int, height: Int, limit: Int)
    /// In-memory bytes (a body received over the network) are more than the file limit; nothing was decoded.
    case tooManyBytes(file: String, bytes: Int, limit: Int)
    /// The data ends before the image does.
    case truncated(file: String, detail: String)
    /// The data is damaged or not a valid image of its format.
    case corrupt(file: String, detail: String)
    /// A caller of the library passed values that do not make an image or a preprocessing (sizes, counts).
    case invalidArgument(detail: String)

    public var description: String {
        switch self {
        case let .unreadable(file, reason):
            return "\(file): cannot read the file (\(reason))."
        case let .empty(file):
            return "\(file): the file is empty (0 bytes); it holds no image."
        case let .unsupportedFormat(file, looksLike):
            return "\(file): \(ImageFormat.whyUnsupported(looksLike))."
        case let .unsupportedCoding(file, format, detail):
            return "\(file): this \(format) file is coded in a way dedog's decoder cannot read (\(detail)); "
                + "convert it to JPEG or PNG first."
        case let .tooLarge(file, width, height, limit):
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            return "\(file): image is \(width)×\(height) = \(overflow ? "over 9.2e18" : String(pixels)) pixels, "
                + "over the limit of \(limit)."
        case let .tooManyBytes(file, bytes, limit):
            return "\(file): \(FileError.tooLarge(bytes: bytes, limit: limit).description)."
        case let .truncated(file, detail):
            return "\(file): the image data is truncated (\(detail)); the file is incomplete — copy it again."
        case let .invalidArgument(detail):
            return "invalid image operation: \(detail)"
        case let .corrupt(file, detail):
            return "\(file): the image data is damaged (\(detail))."
        }
    }
}
