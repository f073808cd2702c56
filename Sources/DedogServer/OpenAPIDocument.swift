import Foundation
import DedogFiles

/// The API's OpenAPI 3 document (`Resources/openapi.json`), served at `/openapi.json`: installed in
/// `share/dedog/`, or beside a binary built by SwiftPM in its resource bundle.
public enum OpenAPIDocument {
    static func locations() -> [URL] {
        [InstalledData.sharedFolder.appendingPathComponent("openapi.json"),
         InstalledData.binaryFolder.appendingPathComponent("dedog_DedogServer.resources/openapi.json")]
    }

    public static func load() throws(ServerError) -> Data {
        let candidates = locations()
        for url in candidates {
            if let data = try? FileReader.read(url.path, limit: 4 << 20) { return Data(data) }
        }
        throw .missingResource(name: "openapi.json", searched: candidates.map(\.path))
    }
}
