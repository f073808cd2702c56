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
    public let model: Model
    /// One inference session per backbone of the model.
    public let sessions: [InferenceSession]
    public var decoderOptions: ImageDecoder.Options
    /// When a photo counts as no dog or unsure; the model file's thresholds unless changed.
    public var decision: DecisionThresholds
    /// Per backbone, whether each photo is also run mirrored and the two averaged; the model file's choice unless
    /// changed.
    public var averagesMirror: [Bool]

    /// The model in `modelURL`, or the default one (`ModelLocator.model(nil)`).
    public convenience init(modelURL: URL? = nil, threads: Int = 1) throws(ClassifierError) {
        let url: URL
        if let modelURL { url = modelURL } else { url = try ModelLocator.model(nil) }
        let model: Model
        do {
            model = try Model(contentsOf: url)
        } catch {
            throw .model(error)
        }
        try self.init(model: model, modelURL: url, threads: threads)
    }

    /// A classifier for a model already loaded (from `modelURL`, which it only reports).
    public init(model: Model, modelURL: URL, threads: Int = 1) throws(ClassifierError) {
        self.model = model
        self.modelURL = modelURL
        do {
            let kernels = try KernelSet.fromEnvironment()
            sessions = model.backbones.map { $0.makeSession(threads: threads, kernels: kernels) }
        } catch {
            throw .model(error)
        }
        // Decode large JPEGs only as far as the largest resize needs (DCT scaling).
        decoderOptions = ImageDecoder.Options(minimumShorterSide: model.backbones.map(\.preprocessing.resizeShorterSide).max())
        decision = model.specification.decision
        averagesMirror = model.backbones.map { $0.specification.averagesMirror ?? false }
    }

    /// Every label the model can name (the breed head's, or the dog classes of the ImageNet head).
    public var breedLabels: [Label] {
        model.breedLabels ?? model.imagenetLabels?.filter(\.isDog) ?? []
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
        try decide(features: features(of: image), top: top)
    }

    /// Each backbone's pooled features of the views classify runs, [views × 1280] per backbone.
    public func features(of image: RGBImage) throws(ClassifierError) -> [[Float]] {
        guard image.width > 0, image.height > 0 else { throw .image(.empty(file: "the image")) }
        var features: [[Float]] = []
        for (b, network) in model.backbones.enumerated() {
            let input: (tensor: [Float], views: Int)
            do {
                input = try network.input(for: image, mirrored: b < averagesMirror.count && averagesMirror[b])
            } catch {
                throw .image(error)
            }
            do {
                features.append(try sessions[b].features(input.tensor, batch: input.views))
            } catch {
                throw .model(error)
            }
        }
        return features
    }

    /// The verdict and ranking for one image from each backbone's pooled features (`features[b]`: that backbone's
    /// views, [views × 1280]; logits are averaged over views, then the backbones combined as `Model` says).
    public func decide(features: [[Float]], top: Int) throws(ClassifierError) -> Classification {
        let imagenet: [Float]?, breedProbabilities: [Float]?, similarities: [Float]?
        do {
            imagenet = try model.imagenetProbabilities(features)
            breedProbabilities = try model.breedProbabilities(features)
            similarities = try model.similarities(features)
        } catch {
            throw .model(error)
        }
        var dogProbability: Float? = nil
        var lookalikes: [Prediction] = []
        if let imagenet, let labels = model.imagenetLabels {
            dogProbability = labels.dogProbability(imagenet)
            lookalikes = Self.ranked(labels, imagenet, top: 3) { !$0.isDog }
        }

        var breeds: [Prediction]
        if let breedProbabilities, let labels = model.breedLabels {
            breeds = Self.ranked(labels, breedProbabilities, top: top) { _ in true }
        } else {
            let mass = max(dogProbability ?? 1, .leastNormalMagnitude)
            breeds = Self.ranked(model.imagenetLabels ?? [], imagenet ?? [], top: top) { $0.isDog }
            for i in breeds.indices { breeds[i].probability /= mass }
        }

        let topIndex = breeds.first.flatMap { top in model.breedLabels?.firstIndex { $0.key == top.key } }
        let similarity = topIndex.flatMap { i in similarities.map { $0[i] } }
        let verdict = decision.verdict(dogProbability: dogProbability, top: breeds.first?.probability ?? 0,
                                       second: breeds.count > 1 ? breeds[1].probability : 0, similarity: similarity)
        return Classification(verdict: verdict, breeds: breeds, dogProbability: dogProbability, similarity: similarity,
                              lookalikes: verdict == .noDog ? lookalikes : [])
    }

    /// The `top` most probable labels that pass `include`, ties broken by label order (stable).
    static func ranked(_ labels: [Label], _ probabilities: [Float], top: Int, where include: (Label) -> Bool) -> [Prediction] {
        labels.indices.filter { include(labels[$0]) && $0 < probabilities.count }
            .sorted { probabilities[$0] != probabilities[$1] ? probabilities[$0] > probabilities[$1] : $0 < $1 }
            .prefix(max(0, top))
            .map { Prediction(key: labels[$0].key, name: labels[$0].name, probability: probabilities[$0], breed: labels[$0].breed) }
    }
}
