import Foundation
import DedogFiles

/// The API's OpenAPI 3 document (`Resources/openapi.json`), served at `/openapi.json`: installed in
/// `share/dedog/`, or beside a binary built by SwiftPM in its resource bundle. Kept as bytes, not `Data`: a `Data`
/// held until the process ends is reported as leaked by LeakSanitizer, which does not follow the pointer to its
/// storage (Swift keeps `Data`'s representation case in that pointer's spare bits).
public enum OpenAPIDocument {
    static func locations() -> [URL] {
        [InstalledData.sharedFolder.appendingPathComponent("openapi.json"),
         InstalledData.binaryFolder.appendingPathComponent("dedog_DedogServer.resources/openapi.json")]
    }

    public static func load() throws(ServerError) -> [UInt8] {
        let candidates = locations()
        for url in candidates {
            if let bytes = try? FileReader.read(url.path, limit: 4 << 20) { return bytes }
        }
        throw .missingResource(name: "openapi.json", searched: candidates.map(\.path))
    }
}
