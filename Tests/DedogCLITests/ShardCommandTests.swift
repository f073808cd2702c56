import DedogTestSupport
import Foundation
import Testing

/// `classify --shard K/N`: N runs over the same paths classify every photo exactly once between them, as a
/// Kubernetes Indexed Job's pods would.
@Suite struct ShardCommandTests {
    @Test func shardsTogetherClassifyEveryPhotoOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-shards-\(getpid())")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("more"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        var all: [String] = []
        for i in 0..<10 {
            let name = (i % 2 == 0 ? "" : "more/") + "dog-\(i).jpg"
            try FileManager.default.copyItem(at: photo, to: dir.appendingPathComponent(name))
            all.append(dir.appendingPathComponent(name).path)
        }
        var seen: [String] = []
        for k in 0..<3 {
            let r = try CLI.run(["classify", "--json", "--model", "fast", "--shard", "\(k)/3", dir.path])
            #expect(r.status == 0, "\(r.stderr)")
            let files = r.stdout.split(separator: "\n").compactMap { line -> String? in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["file"] as? String
            }
            #expect(!files.isEmpty || r.stderr.contains("fell in part \(k)/3"))
            seen += files
        }
        #expect(seen.sorted() == all.sorted())
        let wrong = try CLI.run(["classify", "--shard", "3/3", dir.path])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("--shard"))
    }
}
