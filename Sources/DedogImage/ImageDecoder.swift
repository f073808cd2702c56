import Foundation
import DedogFiles

/// The container formats dedog reads, detected from the first bytes of the data.
public enum ImageFormat: String, Sendable {
    case jpeg, png

    /// The format whose signature starts `bytes`, or nil.
    public static func detect<C: Collection>(_ bytes: C) -> ImageFormat? where C.Element == UInt8 {
        let head = Array(bytes.prefix(8))
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        return nil
    }
}

/// Decodes JPEG and PNG files or bytes into upright 8-bit RGB images.
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
        /// Transparent pixels are composited onto this colour.
        public var background: RGBColor = .white
        /// Rotate/flip JPEGs as their EXIF orientation tag says, so that phone photos come out upright.
        public var appliesEXIFOrientation = true
        /// Accept truncated or slightly damaged JPEG data (libjpeg-turbo fills the missing part with grey).
        /// Off by default: such data is reported as an error.
        public var allowsDamagedData = false

        public init(maxPixels: Int = 100_000_000, maxFileBytes: Int = 512 << 20, minimumShorterSide: Int? = nil,
                    background: RGBColor = .white, appliesEXIFOrientation: Bool = true,
                    allowsDamagedData: Bool = false) {
            self.maxPixels = maxPixels
            self.maxFileBytes = maxFileBytes
            self.minimumShorterSide = minimumShorterSide
            self.background = background
            self.appliesEXIFOrientation = appliesEXIFOrientation
            self.allowsDamagedData = allowsDamagedData
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

    /// Decodes in-memory bytes; `name` labels the data in errors.
    public func decode(_ bytes: [UInt8], name: String = "<memory>") throws(ImageError) -> RGBImage {
        if bytes.isEmpty { throw .empty(file: name) }
        switch ImageFormat.detect(bytes) {
        case .jpeg?:
            return try JPEGDecoder(options: options, name: name).decode(bytes)
        case .png?:
            return try PNGDecoder(options: options, name: name).decode(bytes)
        case nil:
            throw .unsupportedFormat(file: name)
        }
    }
}
