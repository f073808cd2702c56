import Foundation
import DedogFiles

/// The web page's files (`Resources/web`: HTML, CSS, JavaScript modules, an icon), read once at start from
/// `share/dedog/web` or SwiftPM's resource bundle beside the binary and kept in memory. Only the files found
/// there are served, by exact name, so no request path ever reaches the file system.
public struct WebAssets: Sendable {
    public struct Asset: Sendable {
        public let bytes: [UInt8]
        public let contentType: String
        /// A strong validator of the content, for `If-None-Match`.
        public let etag: String
    }

    public let files: [String: Asset]

    static let types = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
                        "css": "text/css; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
                        "json": "application/json; charset=utf-8", "webmanifest": "application/manifest+json"]
    static let maxFiles = 64
    static let maxFileBytes = 1 << 20

    public static func locations() -> [URL] {
        [InstalledData.sharedFolder.appendingPathComponent("web"),
         InstalledData.binaryFolder.appendingPathComponent("dedog_DedogServer.resources/web")]
    }

    /// The first folder of `locations` that holds `index.html`.
    public static func load(from candidates: [URL] = locations()) throws(ServerError) -> WebAssets {
        for folder in candidates where FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.html").path) {
            var files: [String: Asset] = [:]
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted().prefix(maxFiles) {
                guard let type = types[(name as NSString).pathExtension.lowercased()],
                      let bytes = try? FileReader.read(folder.appendingPathComponent(name).path, limit: maxFileBytes) else { continue }
                files[name] = Asset(bytes: bytes, contentType: type, etag: "\"\(Self.fnv(bytes))\"")
            }
            return WebAssets(files: files)
        }
        throw .missingResource(name: "web/index.html", searched: candidates.map(\.path))
    }

    private static func fnv(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16)
    }
}
