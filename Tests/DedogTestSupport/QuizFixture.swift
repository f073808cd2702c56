import Foundation

/// A folder of photos to make a quiz from, out of the repository's own test photos: folders named after breeds
/// (one of them holding a photo of another breed: the folder's name wins), photos at the top for the model to
/// answer, and a noise picture with no dog that must be left out.
public enum QuizFixture {
    /// Files under the folder, by the answer they must get: "beagle/…" and "čivava/…" from their folder names,
    /// top-level ones from the model (the noise picture: left out).
    public static let layout: [(path: String, source: String)] = [
        ("beagle/beagle.jpg", "datasets/samples/beagle.jpg"),
        ("beagle/beagle.webp", "datasets/samples/beagle.webp"),
        ("čivava/not-really.avif", "datasets/samples/beagle.avif"),
        ("mine.heic", "datasets/samples/beagle.heic"),
        ("noise.png", "Tests/DedogImageTests/Fixtures/png-rgb8.png"),
    ]

    /// A new folder laid out as `layout`; the caller removes it.
    public static func make() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-quiz-photos-\(UUID().uuidString)")
        for (path, source) in layout {
            let target = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent(source), to: target)
        }
        return root
    }
}
