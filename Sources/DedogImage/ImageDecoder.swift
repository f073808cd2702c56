import Foundation
import DedogFiles

/// The container formats dedog reads, detected from the first bytes of the data.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, heic, avif, webp

    /// The formats by the names users know, for messages and help: "JPEG, PNG, HEIC, AVIF or WebP".
    public static let readable: String = {
        let names = allCases.map(\.displayName)
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }()

    /// How messages name the format.
    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        case .avif: "AVIF"
        case .webp: "WebP"
        }
    }

    /// HEIF brands whose pictures are HEVC-coded (HEIC) or AV1-coded (AVIF). `mif1`/`msf1` are the generic HEIF
    /// brands; libheif reads whichever coding the file holds.
    private static let heicBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs",
                                                  "mif1", "msf1", "mif2"]
    private static let avifBrands: Set<String> = ["avif", "avis"]

    /// The format whose signature starts `bytes`, or nil. Needs the first 12 bytes (ISO media and RIFF put their
    /// type at offset 8).
    public static func detect<C: Collection>(_ bytes: C) -> ImageFormat? where C.Element == UInt8 {
        let head = Array(bytes.prefix(12))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head.count >= 8, Array(head[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        guard head.count == 12 else { return nil }
        if Array(head[0..<4]) == Array("RIFF".utf8), Array(head[8..<12]) == Array("WEBP".utf8) { return .webp }
        if Array(head[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if avifBrands.contains(brand) { return .avif }
            if heicBrands.contains(brand) { return .heic }
        }
        return nil
    }
}

extension ImageFormat {
    /// What unsupported bytes look like, for the error message ("a HEIC/HEIF photo"), or nil.
    static func recognise(_ bytes: [UInt8]) -> String? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let sig = Array(text.utf8)
            return bytes.count >= offset + sig.count && Array(bytes[offset..<(offset + sig.count)]) == sig
        }
        if starts("ftyp", at: 4), bytes.count >= 12 { return "a video or other ISO media file" }
        if starts("RIFF") { return "a RIFF file (audio or video)" }
        if starts("GIF87a") || starts("GIF89a") { return "a GIF image" }
        if starts("BM"), bytes.count >= 26 { return "a BMP image" }
        if starts("II*\u{0}") || starts("MM\u{0}*") { return "a TIFF (or camera raw) image" }
        if starts("%PDF") { return "a PDF document" }
        if starts("PK\u{3}\u{4}") { return "a ZIP archive" }
        if starts("\u{7F}ELF") { return "a program" }
        if starts("\u{0}\u{0}\u{0}\u{C}jP  ") { return "a JPEG 2000 image" }
        let sample = Array(bytes.prefix(512))
        if !sample.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }),
           String(validating: sample, as: UTF8.self) != nil {
            return "text"
        }
        return nil
    }

    /// Why bytes that `recognise` describes (or not) cannot be read, in the user's words.
    static func whyUnsupported(_ looksLike: String?) -> String {
        guard let looksLike else {
            return "not a \(ImageFormat.readable) image (checked by content, not by extension)"
        }
        if looksLike.hasSuffix("image") || looksLike.hasSuffix("photo") {
            return "this is \(looksLike), which dedog does not read; convert it to JPEG or PNG first"
        }
        return "not a \(ImageFormat.readable) image; it looks like \(looksLike)"
    }
}

/// Decodes JPEG, PNG, HEIC/HEIF, AVIF and WebP files or bytes into upright 8-bit RGB images.
///
/// ```swift
/// let decoder = ImageDecoder(options: .init(minimumShorterSide: 256))
/// let image = try decoder.decode(contentsOf: URL(fileURLWithPath: "dog.jpg"))
/// ```
public struct ImageDecoder: Sendable {
    public struct Options: Sendable, Equatable {
        /// Images whose header declares more pixels than this are refused before any allocation.
        public var maxPixels: Int = 100_000_000
        /// Files larger than this are refused before reading (a 100-megapixel PNG of 16-bit RGBA, uncompressed,
        /// is 800 MB; real photos are a few MB).
        public var maxFileBytes: Int = 512 << 20
        /// If set, large JPEGs are decoded at the smallest DCT scale (1/8 … 1) whose shorter side is still
        /// at least this many pixels, so that a 12-megapixel photo is not fully decoded to make a 224-pixel input.
        public var minimumShorterSide: Int? = nil
        /// If set, a picture whose longer side is at least this many pixels is enough (the photo is padded to a
        /// square of that side, so its longer side is all that counts): a HEIF's own thumbnail is decoded instead
        /// of the photo when it has that much. JPEG's DCT scale keeps to `minimumShorterSide`.
        public var sufficientLongerSide: Int? = nil
        /// Whether a HEIC photo as phones write it (a grid of HEVC tiles, or one HEVC picture, 8-bit 4:2:0, no alpha)
        /// is decoded by dedog's own tile decoder (`HEVCTiles`: tiles side by side, reduced as it is converted)
        /// instead of by libheif whole; off only to compare the two.
        @_spi(Testing) public var decodesHEVCItself = true
        /// If set, only this rectangle of the photo (upright, in the photo's own pixels) is needed: a HEIC grid that
        /// dedog decodes itself decodes only the tiles under it, and the rest of the picture comes out black. The
        /// picture keeps the photo's size (reduced as asked), so the rectangle is cut from it as from the whole.
        public var neededRegion: PixelRect? = nil
        /// Transparent pixels are composited onto this colour.
        public var background: RGBColor = .white
        /// Rotate/flip JPEGs and WebPs as their EXIF orientation tag says, so that phone photos come out upright.
        /// (HEIF files carry their own rotation and mirroring, which are always applied.)
        public var appliesEXIFOrientation = true
        /// Accept truncated or damaged JPEG data (libjpeg-turbo fills what is missing with grey).
        /// Off by default: such data is reported as an error. Harmless JPEG warnings never are (see `JPEGDecoder`).
        public var allowsDamagedData = false

        public init(maxPixels: Int = 100_000_000, maxFileBytes: Int = 512 << 20, minimumShorterSide: Int? = nil,
                    background: RGBColor = .white, appliesEXIFOrientation: Bool = true,
                    allowsDamagedData: Bool = false, sufficientLongerSide: Int? = nil) {
            self.maxPixels = maxPixels
            self.maxFileBytes = maxFileBytes
            self.minimumShorterSide = minimumShorterSide
            self.background = background
            self.appliesEXIFOrientation = appliesEXIFOrientation
            self.allowsDamagedData = allowsDamagedData
            self.sufficientLongerSide = sufficientLongerSide
        }
    }

    public var options: Options

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Reads and decodes the file at `url` (a regular file of at most `options.maxFileBytes`).
    public func decode(contentsOf url: URL) throws(ImageError) -> RGBImage {
        try decode(read(url), name: url.relativePath)  // named as the caller wrote it
    }

    /// The bytes of the image file at `url`, with the same checks as `decode(contentsOf:)`.
    public func read(_ url: URL) throws(ImageError) -> [UInt8] {
        do {
            return try FileReader.read(url.path, limit: options.maxFileBytes)
        } catch {
            throw .unreadable(file: url.relativePath, reason: error.description)
        }
    }

    /// Decodes in-memory bytes (at most `options.maxFileBytes`, as a file would be); `name` labels the data in
    /// errors.
    public func decode(_ bytes: [UInt8], name: String = "<memory>") throws(ImageError) -> RGBImage {
        if bytes.isEmpty { throw .empty(file: name) }
        guard bytes.count <= options.maxFileBytes else {
            throw .tooManyBytes(file: name, bytes: bytes.count, limit: options.maxFileBytes)
        }
        guard let format = ImageFormat.detect(bytes) else {
            throw .unsupportedFormat(file: name, looksLike: ImageFormat.recognise(bytes))
        }
        switch format {
        case .jpeg: return try JPEGDecoder(options: options, name: name).decode(bytes)
        case .png: return try PNGDecoder(options: options, name: name).decode(bytes)
        case .heic, .avif: return try HEIFDecoder(options: options, name: name, format: format.displayName).decode(bytes)
        case .webp: return try WebPDecoder(options: options, name: name).decode(bytes)
        }
    }
}
