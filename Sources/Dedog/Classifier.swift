import Foundation
import DedogImage
import DedogNN

/// Image in, ranked breeds out.
///
/// ```swift
/// let classifier = try Classifier(modelURL: nil, threads: 2)   // the bundled model
/// let result = try classifier.classify(contentsOf: URL(fileURLWithPath: "rex.jpg"), top: 3)
/// print(result.verdict, result.breeds.first?.name ?? "-")
/// ```
///
/// How the decisions are made:
/// - **No dog**: the ImageNet head's softmax puts less than `decision.noDogBelow` (default 0.5) of its mass on
///   the 121 dog classes. Breeds are still ranked, but the verdict says no dog.
/// - **Breeds**: from the trained breed head when the model has one (softmax of logits / temperature);
///   otherwise the ImageNet probabilities of the dog classes, renormalised to sum to 1.
/// - **Unsure**: the top breed's probability is below `decision.unsureBelow` (default 0.45), or it leads the
///   second by less than `decision.unsureMargin` (default 0.15).
/// The thresholds live in the model file, so a retrained model carries its own.
public final class Classifier {
    public let modelURL: URL
    public let network: EfficientNetLite
    public let session: InferenceSession
    public var decoderOptions: ImageDecoder.Options
    /// When a photo counts as no dog or unsure; the model file's thresholds unless changed.
    public var decision: DecisionThresholds
    /// Whether each photo is also classified mirrored and the two averaged; the model file's choice unless changed.
    public var averagesMirror: Bool

    public convenience init(modelURL: URL? = nil, threads: Int = 1) throws(ClassifierError) {
        let url: URL
        if let modelURL { url = modelURL } else { url = try ModelLocator.defaultModel() }
        let network: EfficientNetLite
        do {
            network = try EfficientNetLite(contentsOf: url)
        } catch {
            throw .model(error)
        }
        try self.init(network: network, modelURL: url, threads: threads)
    }

    /// A classifier for a network already loaded (from `modelURL`, which it only reports).
    public init(network: EfficientNetLite, modelURL: URL, threads: Int = 1) throws(ClassifierError) {
        self.network = network
        self.modelURL = modelURL
        do {
            session = network.makeSession(threads: threads, kernels: try KernelSet.fromEnvironment())
        } catch {
            throw .model(error)
        }
        // Decode large JPEGs only as far as the resize needs (DCT scaling).
        decoderOptions = ImageDecoder.Options(minimumShorterSide: network.model.preprocessing.resizeShorterSide)
        decision = network.model.decision
        averagesMirror = network.model.averagesMirror ?? false
    }

    public var model: ModelDescription { network.model }

    /// Every label the model can name (the breed head's, or the dog classes of the ImageNet head).
    public var breedLabels: [Label] {
        model.breedHead?.labels ?? model.imagenetHead?.labels.filter(\.isDog) ?? []
    }

    public func classify(contentsOf url: URL, top: Int = 3) throws(ClassifierError) -> Classification {
        let image: RGBImage
        do {
            image = try ImageDecoder(options: decoderOptions).decode(contentsOf: url)
        } catch {
            throw .image(error)
        }
        return try classify(image, top: top)
    }

    public func classify(_ image: RGBImage, top: Int = 3) throws(ClassifierError) -> Classification {
        guard image.width > 0, image.height > 0 else { throw .image(.empty(file: "the image")) }
        let p = model.preprocessing
        let input: [Float]
        do {
            input = try p.tensor(image) + (averagesMirror ? p.tensor(image, mirrored: true) : [])
        } catch {
            throw .image(error)
        }
        let features: [Float]
        do {
            features = try session.features(input, batch: averagesMirror ? 2 : 1, height: p.cropSize, width: p.cropSize)
        } catch {
            throw .model(error)
        }
        return try decide(features: features, top: top)
    }

    /// The verdict and ranking for one image's pooled features (or several views of it, whose logits are averaged).
    public func decide(features: [Float], top: Int) throws(ClassifierError) -> Classification {
        let thresholds = decision
        var dogProbability: Float? = nil
        var lookalikes: [Prediction] = []
        var imagenetProbabilities: [Float] = []
        if let head = network.imagenetHead, let description = model.imagenetHead {
            imagenetProbabilities = Self.softmax(try logits(head, features), temperature: description.temperature ?? 1)
            let labels = description.labels
            dogProbability = zip(labels, imagenetProbabilities).filter { $0.0.isDog }.map(\.1).reduce(0, +)
            lookalikes = Self.ranked(labels, imagenetProbabilities, top: 3) { !$0.isDog }
        }

        var breeds: [Prediction]
        if let head = network.breedHead, let description = model.breedHead {
            let p = Self.softmax(try logits(head, features), temperature: description.temperature ?? 1)
            breeds = Self.ranked(description.labels, p, top: top) { _ in true }
        } else {
            let labels = model.imagenetHead?.labels ?? []
            let mass = max(dogProbability ?? 1, .leastNormalMagnitude)
            breeds = Self.ranked(labels, imagenetProbabilities, top: top) { $0.isDog }
            for i in breeds.indices { breeds[i].probability /= mass }
        }

        let first = breeds.first?.probability ?? 0
        let second = breeds.count > 1 ? breeds[1].probability : 0
        let verdict: Verdict
        if let dog = dogProbability, dog < thresholds.noDogBelow {
            verdict = .noDog
        } else if first < thresholds.unsureBelow || first - second < thresholds.unsureMargin {
            verdict = .unsure
        } else {
            verdict = .dog
        }
        return Classification(verdict: verdict, breeds: breeds, dogProbability: dogProbability,
                              lookalikes: verdict == .noDog ? lookalikes : [])
    }

    /// The head's logits for one image's views, averaged.
    private func logits(_ head: Linear, _ features: [Float]) throws(ClassifierError) -> [Float] {
        do {
            return try head.averaged(features, views: max(1, features.count / head.inputs))
        } catch {
            throw .model(error)
        }
    }

    static func softmax(_ logits: [Float], temperature: Float) -> [Float] {
        let scaled = logits.map { $0 / temperature }
        let top = scaled.max() ?? 0
        let e = scaled.map { Foundation.exp($0 - top) }
        let sum = e.reduce(0, +)
        return e.map { $0 / sum }
    }

    /// The `top` most probable labels that pass `include`, ties broken by label order (stable).
    static func ranked(_ labels: [Label], _ probabilities: [Float], top: Int, where include: (Label) -> Bool) -> [Prediction] {
        labels.indices.filter { include(labels[$0]) }
            .sorted { probabilities[$0] != probabilities[$1] ? probabilities[$0] > probabilities[$1] : $0 < $1 }
            .prefix(max(0, top))
            .map { Prediction(key: labels[$0].key, name: labels[$0].name, probability: probabilities[$0]) }
    }
}
