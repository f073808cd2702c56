import Foundation
import DedogImage
import DedogBreedModel

/// A cheap first look at a photo, before the model's full look: most photos of a library show no dog, and the full
/// look (two backbones, each photo and its mirror image, the detector, a second look at a small dog) costs as much on
/// them as on a photo with one. The first look runs the fast model's Lite0 once, on the photo as decoded for the full
/// look (JPEG's DCT scaling and a HEIC's thumbnail make that a few hundred pixels, not 12 megapixels): the ImageNet
/// head's share on dogs, and the dog detector's best box. Only a photo that may show a dog by either goes on.
///
/// The thresholds are chosen to lose no dog the full look finds (`scripts/bench-library`, docs/performance.md):
/// low, so that a dog hidden in a large scene, which the full look finds by zooming in on the detector's box, passes
/// on the detector's word.
public final class FirstLook: Sendable {
    /// What the first look saw of a photo.
    public struct Signals: Sendable, Equatable, Codable {
        /// The ImageNet head's mass on dog classes.
        public var dogShare: Float
        /// The detector's best box's score (0 when it has none).
        public var detector: Float
    }

    /// From when a photo may show a dog.
    public struct Thresholds: Sendable, Equatable {
        public var dogShareFrom: Float
        public var detectorFrom: Float

        public init(dogShareFrom: Float, detectorFrom: Float) {
            self.dogShareFrom = dogShareFrom
            self.detectorFrom = detectorFrom
        }

        /// Chosen on ../shared's photos (docs/performance.md, "A first look"): of 3,672 photos of dogs the full look
        /// finds (pets-real's dogs, amateur-pets, a tenth of Stanford's train and half its test split, restored),
        /// every one passes, all but one by the detector alone (its lowest: 0.166, that photo's dog share 0.55);
        /// 21 % of pets-real's cats and 53 % of Stanford's parts beside the dogs' boxes pass.
        public static let standard = Thresholds(dogShareFrom: 0.2, detectorFrom: 0.15)
    }

    let classifier: Classifier
    public let thresholds: Thresholds

    /// The first look of the fast model at `modelURL` (nil: the bundled `fast`), with `configuration`'s kernels,
    /// precision and threads.
    public init(modelURL: URL? = nil, configuration: ClassifierConfiguration, thresholds: Thresholds = .standard) throws(ClassifierError) {
        var configuration = configuration
        configuration.averagesMirror = [false]
        configuration.zoom = nil
        configuration.separatesDogs = false
        let url: URL
        if let modelURL { url = modelURL } else { url = try ModelLocator.url(ofBundled: "fast") }
        classifier = try Classifier(modelURL: url, configuration: configuration)
        self.thresholds = thresholds
    }

    /// Whether the first look saves time before `full`'s look: not when `full` runs only the first look's own
    /// backbone (the fast model: its full look is the same network on the photo and its mirror image, and the
    /// first look made a library's first run 0.86 to 1.12 times as fast, `scripts/bench-library`).
    public func pays(before full: Classifier) -> Bool {
        let own = Set(classifier.model.backbones.map(\.backbone.architecture))
        return full.model.backbones.contains { !own.contains($0.backbone.architecture) }
    }

    /// What the first look sees of `image`.
    public func signals(_ image: RGBImage) throws(ClassifierError) -> Signals {
        let seen = try classifier.views(of: image, maps: true)
        let answer = try classifier.decide(features: seen.features, top: 1)
        var best: Float = 0
        if let detector = classifier.model.detector, let pyramid = seen.pyramid {
            do {
                best = try detector.candidates(pyramid, minimumScore: 0.01).map(\.score).max() ?? 0
            } catch {
                throw .model(error)
            }
        }
        return Signals(dogShare: answer.dogProbability ?? 1, detector: best)
    }

    /// Whether a photo of `signals` may show a dog: then the full look decides.
    public func mayShowDog(_ signals: Signals) -> Bool {
        signals.dogShare >= thresholds.dogShareFrom || signals.detector >= thresholds.detectorFrom
    }
}
