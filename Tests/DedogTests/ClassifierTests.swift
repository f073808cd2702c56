import Foundation
import Testing
import DedogImage
import DedogTestSupport
import Dedog

@Suite struct ClassifierTests {
    /// A classifier (and its session) per test: sessions are not shared between threads.
    static var classifier: Classifier {
        try! Classifier(modelURL: SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors"))
    }

    /// The tinygrad-style model test: one real dog photo in, the right breed out.
    @Test func bundledBeagleIsABeagle() throws {
        let result = try Self.classifier.classify(
            contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"), top: 3)
        #expect(result.verdict == .dog)
        #expect(result.breeds.first?.key == "n02088364-beagle")
        #expect(result.breeds.count == 3)
        #expect((result.dogProbability ?? 0) > 0.9)
    }

    @Test(.needsReference) func referencePhotoIsAGoldenRetriever() throws {
        let result = try Self.classifier.classify(contentsOf: SharedData.reference.appendingPathComponent("photo.jpg"))
        #expect(result.verdict == .dog)
        #expect(result.breeds.first?.name == "golden retriever")
        // PyTorch: p(golden retriever) = 0.9193 of all 1000 classes; ours is renormalised over dog classes.
        #expect(result.breeds.first!.probability > 0.9193)
    }

    @Test func aBlankImageShowsNoDog() {
        let grey = RGBImage(width: 300, height: 200, pixels: [UInt8](repeating: 128, count: 300 * 200 * 3))
        let result = Self.classifier.classify(grey)
        #expect(result.verdict == .noDog)
        #expect(!result.lookalikes.isEmpty)
        #expect(result.lookalikes.allSatisfy { !$0.key.contains("-") })  // no breed among the lookalikes
    }

    @Test func breedProbabilitiesAreRankedAndNormalised() throws {
        let result = try Self.classifier.classify(
            contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"), top: 121)
        #expect(result.breeds.count == 121)
        #expect(zip(result.breeds, result.breeds.dropFirst()).allSatisfy { $0.probability >= $1.probability })
        #expect(abs(result.breeds.map(\.probability).reduce(0, +) - 1) < 1e-3)
    }

    @Test func unreadablePhotoIsATypedError() {
        #expect(throws: ClassifierError.image(.unreadable(file: "/nonexistent.jpg", reason: "no such file"))) {
            try Self.classifier.classify(contentsOf: URL(fileURLWithPath: "/nonexistent.jpg"))
        }
    }

    @Test func missingModelIsATypedError() {
        #expect(throws: ClassifierError.self) { try Classifier(modelURL: URL(fileURLWithPath: "/nonexistent.safetensors")) }
    }
}
