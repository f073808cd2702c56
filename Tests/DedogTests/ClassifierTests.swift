@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTestSupport
import Foundation
import Testing

@Suite struct ClassifierTests {
    static let lite0 = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")
    static var classifier: Classifier {
        get throws { try Classifier(modelURL: lite0) }
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

    /// The bundled breed models see the whole photo (issue 24): every backbone pads; they carry the activation
    /// ranges of 8-bit inference, the rule of "a breed this model does not know", the cat rule of "no dog" (issue
    /// 50) and the two-scale dog detector of the first backbone (issue 60), so the files are format 9; and
    /// the sample beagle is still a beagle through them, in 8 bits and in floats, with nearly the same confidence.
    @Test(arguments: ["dedog-breeds", "dedog-breeds-fast"])
    func bundledBreedModelsPad(_ name: String) throws {
        let url = SharedData.packageRoot.appendingPathComponent("models/\(name).safetensors")
        let model = try Model(contentsOf: url)
        #expect(model.backbones.allSatisfy { $0.input.fit == .pad })
        #expect(model.specification.formatVersion == ModelDescription.currentVersion)
        #expect(model.detector?.description.backbone == 0)
        #expect(model.detector?.description.architecture == model.specification.backbones[0].architecture)
        #expect(model.specification.decision.unknownBreed != nil)
        #expect(model.specification.decision.cat?.weights.count == model.backbones.count)
        #expect(model.backbones.allSatisfy { $0.precisions == [.fp32, .int8] })
        let photo = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        let result = try Classifier(modelURL: url, configuration: .init(precision: .int8)).classify(contentsOf: photo, top: 3)
        #expect(result.verdict == .dog && result.breeds.first?.key == "n02088364-beagle")
        let floats = try Classifier(modelURL: url, configuration: .init(precision: .fp32)).classify(contentsOf: photo, top: 3)
        #expect(floats.verdict == .dog && floats.breeds.first?.key == "n02088364-beagle")
        let (a, b) = (try #require(result.breeds.first?.probability), try #require(floats.breeds.first?.probability))
        #expect(abs(a - b) < 0.05, "int8 \(a), fp32 \(b)")
    }

    /// A phone's HEIC, a browser's AVIF and a web page's WebP of the same photo name the same breed, with nearly
    /// the same confidence (each is a lossy re-encoding of the JPEG, so not exactly the same).
    @Test(arguments: ["heic", "avif", "webp"])
    func everyFormatNamesTheSameBreedAsItsJPEG(_ format: String) throws {
        let samples = SharedData.packageRoot.appendingPathComponent("datasets/samples")
        let jpeg = try Self.classifier.classify(contentsOf: samples.appendingPathComponent("beagle.jpg"), top: 3)
        let other = try Self.classifier.classify(contentsOf: samples.appendingPathComponent("beagle.\(format)"), top: 3)
        #expect(other.verdict == jpeg.verdict)
        #expect(other.breeds.first?.key == jpeg.breeds.first?.key)
        #expect(Set(other.breeds.map(\.key)) == Set(jpeg.breeds.map(\.key)))
        let drift = abs(other.breeds[0].probability - jpeg.breeds[0].probability)
        #expect(drift < 0.05, "\(format): top probability moved by \(drift)")
    }

    @Test(.needsReference) func referencePhotoIsAGoldenRetriever() throws {
        let result = try Self.classifier.classify(contentsOf: SharedData.reference.appendingPathComponent("photo.jpg"))
        #expect(result.verdict == .dog)
        #expect(result.breeds.first?.name == "golden retriever")
        // PyTorch: p(golden retriever) = 0.9193 of all 1000 classes; ours is renormalised over dog classes.
        #expect(result.breeds.first!.probability > 0.9193)
    }

    /// The verdict does not depend on how many breeds are shown: with a lead threshold the beagle's lead over
    /// the second breed misses (but its probability alone would pass), one breed shown is as unsure as three.
    @Test func theVerdictDoesNotDependOnHowManyBreedsAreShown() throws {
        let url = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")
        let beagle = try ImageDecoder().decode(contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"))
        let plain = try Classifier(modelURL: url).classify(beagle, top: 3)
        let first = plain.breeds[0].probability, second = plain.breeds[1].probability
        var configuration = ClassifierConfiguration()
        configuration.decision = DecisionThresholds(noDogBelow: 0, unsureBelow: 0, unsureMargin: first - second / 2)
        let strict = try Classifier(modelURL: url, configuration: configuration)
        #expect(try strict.classify(beagle, top: 3).verdict == .unsure)
        let one = try strict.classify(beagle, top: 1)
        #expect(one.verdict == .unsure)
        #expect(one.breeds.count == 1)
    }

    /// Every bundled model, with its own no-dog threshold (the breed models' are below 50 %), finds no dog in a
    /// blank image and names non-dog classes instead.
    @Test(arguments: ["efficientnet-lite0-imagenet", "dedog-breeds", "dedog-breeds-fast"])
    func aBlankImageShowsNoDog(_ model: String) throws {
        let grey = try RGBImage(width: 300, height: 200, pixels: [UInt8](repeating: 128, count: 300 * 200 * 3))
        let classifier = try Classifier(modelURL: SharedData.packageRoot.appendingPathComponent("models/\(model).safetensors"))
        let result = try classifier.classify(grey)
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
        #expect(throws: ClassifierError.model(.unreadable(file: "/nonexistent.safetensors", reason: "no such file"))) {
            try Classifier(modelURL: URL(fileURLWithPath: "/nonexistent.safetensors"))
        }
    }

    /// The verdict follows the model's thresholds: the same photo, certain under the bundled thresholds, is
    /// "unsure" when the model demands more than its top breed has, or a wider lead than it has.
    @Test func unsureFollowsTheThresholds() throws {
        let photo = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        let sure = try Self.classifier.classify(contentsOf: photo, top: 2)
        #expect(sure.verdict == .dog)
        let top = sure.breeds[0].probability, lead = top - sure.breeds[1].probability
        for decision in [DecisionThresholds(unsureBelow: min(1, top + 0.01), unsureMargin: 0),
                         DecisionThresholds(unsureBelow: 0, unsureMargin: min(1, lead + 0.01))] {
            let classifier = try Classifier(modelURL: Self.lite0, configuration: .overriding(decision: decision))
            let result = try classifier.classify(contentsOf: photo, top: 2)
            #expect(result.verdict == .unsure, "\(decision)")
            #expect(result.breeds.map(\.key) == sure.breeds.map(\.key))  // the ranking itself does not change
        }
        let relaxed = try Classifier(modelURL: Self.lite0, configuration: .overriding(
            decision: DecisionThresholds(unsureBelow: top - 0.01, unsureMargin: lead - 0.01)))
        #expect(try relaxed.classify(contentsOf: photo, top: 2).verdict == .dog)
    }

    /// A model that averages each photo with its mirror image gives, through the public API, the average of the
    /// two passes' logits: the photo and its mirror image score the same, and differ from the photo alone. The
    /// photo is the beagle's left two thirds, so that its mirror image is unlike it (on the whole, nearly
    /// symmetric photo the two passes agree to within 1e-4).
    @Test func mirrorAveragedClassification() throws {
        let whole = try ImageDecoder().decode(contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg"))
        let photo = try whole.cropped(left: 0, top: 0, width: whole.width * 2 / 3, height: whole.height)
        let fast = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")
        let averaging = try Classifier(modelURL: fast)
        #expect(averaging.averagesMirror == [true])
        let both = try averaging.classify(photo, top: 5), mirrored = try averaging.classify(photo.mirrored(), top: 5)
        #expect(both.breeds.map(\.key) == mirrored.breeds.map(\.key))
        for (a, b) in zip(both.breeds, mirrored.breeds) { #expect(abs(a.probability - b.probability) < 1e-5) }
        let single = try Classifier(modelURL: fast, configuration: .overriding(averagesMirror: [false])).classify(photo, top: 5)
        #expect(single.breeds.first?.key == "n02088364-beagle")
        #expect(zip(single.breeds, both.breeds).contains { abs($0.probability - $1.probability) > 1e-4 })
    }
}
