import Foundation

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

        public init(maxPixels: Int = 100_000_000, minimumShorterSide: Int? = nil,
                    background: RGBColor = .white, appliesEXIFOrientation: Bool = true,
                    allowsDamagedData: Bool = false) {
            self.maxPixels = maxPixels
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

    /// Reads and decodes the file at `url`.
    public func decode(contentsOf url: URL) throws(ImageError) -> RGBImage {
        let name = url.relativePath  // as the caller wrote it
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw .unreadable(file: name, reason: Self.reason(for: error, at: url))
        }
        return try decode(Array(data), name: name)
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

    private static func reason(for error: Error, at url: URL) -> String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
            if isFolder.boolValue { return "it is a folder" }
            if !FileManager.default.isReadableFile(atPath: url.path) { return "permission denied" }
            return (error as NSError).localizedDescription
        }
        return "no such file"
    }
}
