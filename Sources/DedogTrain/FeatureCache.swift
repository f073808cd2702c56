import Foundation
import DedogFiles
import DedogImage
import DedogNN
import DedogBreedModel

/// Backbone features on disk, one small file per image and view, keyed by the image's content hash under a
/// folder named by the backbone's fingerprint (its weights and preprocessing), so that a second run over the
/// same photos skips the network, and a different backbone never reads stale features.
///
/// Each entry is written to a temporary file and renamed into place, so a killed run leaves either a whole entry
/// or none. Each ends with a checksum of its key, view and values: an entry of the wrong size, with a wrong
/// checksum (a damaged disk, a stray write) or with non-finite values is treated as absent and rewritten.
public struct FeatureCache: Sendable {
    public let folder: URL
    public let width: Int
    /// Bumped when the entry layout changes; older entries then live in another folder and are never read.
    public static let formatVersion = 2
    private static let checksumBytes = 32

    /// The default location: `$XDG_CACHE_HOME/dedog/features`, else `~/.cache/dedog/features` (`environment` is the
    /// front end's: the library reads none).
    public static func defaultRoot(environment env: [String: String]) -> URL {
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("dedog/features")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/dedog/features")
    }

    public init(root: URL, backboneFingerprint: String, width: Int) throws(TrainError) {
        folder = root.appendingPathComponent("\(backboneFingerprint)-v\(Self.formatVersion)")
        self.width = width
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .cache(path: folder.path, reason: "cannot create the folder")
        }
    }

    private func url(_ key: String, view: FeatureView) -> URL {
        folder.appendingPathComponent(String(key.prefix(2))).appendingPathComponent("\(key)-\(view.rawValue).f32")
    }

    /// The cached features, or nil when absent or damaged.
    public func load(_ key: String, view: FeatureView) -> [Float]? {
        let size = width * 4 + Self.checksumBytes
        guard let bytes = try? FileReader.read(url(key, view: view).path, limit: size), bytes.count == size,
              bytes.suffix(Self.checksumBytes).elementsEqual(checksum(key, view, bytes.prefix(width * 4)).utf8)
        else { return nil }
        let values = bytes.withUnsafeBytes { raw in
            (0..<width).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        return values.allSatisfy(\.isFinite) ? values : nil
    }

    public func store(_ values: [Float], key: String, view: FeatureView) throws(TrainError) {
        guard values.count == width else {
            throw .cache(path: folder.path, reason: "\(values.count) features given for an entry of \(width)")
        }
        let target = url(key, view: view)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * 4 + Self.checksumBytes)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        bytes += checksum(key, view, bytes).utf8
        do {
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .cache(path: target.deletingLastPathComponent().path, reason: "cannot create the folder")
        }
        do {
            try AtomicFile.write(bytes, to: target.path, durable: false)
        } catch {
            throw .cache(path: target.path, reason: error.description)
        }
    }

    private func checksum<C: Collection>(_ key: String, _ view: FeatureView, _ values: C) -> String where C.Element == UInt8 {
        var hash = ContentHash()
        hash.update("\(key)-\(view.rawValue)")
        hash.update(values)
        return hash.hex
    }
}

/// Which transformation of an image a feature vector was computed from.
public enum FeatureView: String, Sendable, CaseIterable {
    /// The image as classify sees it: shorter side resized, centre crop.
    case center
    /// The same, mirrored left to right (augmentation and test-time averaging).
    case mirrored
    /// A wider view: the shorter side resized to the crop size, so the crop keeps the whole shorter side.
    case wide
    /// A closer view: the shorter side resized 1.15× larger than for `center` before the same crop.
    case zoomed
    /// The photo 33 % wider (widths × 4/3) before the usual resize and crop.
    case stretchedWide
    /// The photo 25 % narrower (widths × 3/4) before the usual resize and crop.
    case stretchedNarrow

    /// The preprocessing that makes this view from the network's input description.
    public func preprocessing(from input: InputDescription) -> Preprocessing {
        var p = Preprocessing(input)
        let base = p
        switch self {
        case .center, .mirrored: break
        case .wide: p.resizeShorterSide = base.cropSize
        case .zoomed: p.resizeShorterSide = Int((Double(base.resizeShorterSide) * 1.15).rounded())
        case .stretchedWide: p.horizontalStretch = 4.0 / 3
        case .stretchedNarrow: p.horizontalStretch = 3.0 / 4
        }
        return p
    }

    public var isMirrored: Bool { self == .mirrored }
}

