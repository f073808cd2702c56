import Foundation

/// One ranked class with its probability (0…1).
public struct Prediction: Sendable, Equatable, Codable {
    /// Stable key: the Stanford Dogs folder for breeds (e.g. `n02099601-golden_retriever`), else a WordNet id.
    public var key: String
    public var name: String
    public var probability: Float
    /// The catalogue id of the breed, when the model's label names one (see `Label.breed`).
    public var breed: String? = nil

    public init(key: String, name: String, probability: Float, breed: String? = nil) {
        self.key = key
        self.name = name
        self.probability = probability
        self.breed = breed
    }
}

/// The answer for one photo.
public struct Classification: Sendable, Equatable {
    public var verdict: Verdict
    /// The top-k breeds, most likely first. Probabilities are conditional on the photo showing a dog.
    public var breeds: [Prediction]
    /// Probability that the photo shows a dog at all (the ImageNet head's mass on dog classes); nil when the
    /// model has no ImageNet head to judge it.
    public var dogProbability: Float?
    /// How like the top breed's own photos this photo is (cosine of features, see `Model.similarities`); nil when
    /// the model has no prototypes.
    public var similarity: Float? = nil
    /// For `noDog`: the most likely non-dog ImageNet classes ("tabby cat", "teddy bear"), most likely first.
    public var lookalikes: [Prediction]
    /// Where in the photo the network saw the top breed, when the classifier looked (see `Dedog.Classifier`).
    public var location: DogLocation? = nil
    /// When the photo shows two dogs of different breeds: an answer for each (its verdict, breeds and box),
    /// beside this answer for the whole photo; empty otherwise.
    public var dogs: [Classification] = []

    @_spi(Testing) public init(verdict: Verdict, breeds: [Prediction], dogProbability: Float?, similarity: Float? = nil,
                               lookalikes: [Prediction] = [], location: DogLocation? = nil, dogs: [Classification] = []) {
        self.verdict = verdict
        self.breeds = breeds
        self.dogProbability = dogProbability
        self.similarity = similarity
        self.lookalikes = lookalikes
        self.location = location
        self.dogs = dogs
    }
}

/// Where the network saw the dog: a box in the photo's pixel coordinates (after its EXIF orientation), and
/// whether the answer also comes from a second, closer look at that box.
public struct DogLocation: Sendable, Equatable, Codable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    /// The box was small, so the answer averages the whole photo's view and a zoomed view of the box.
    public var zoomed: Bool

    public init(x: Int, y: Int, width: Int, height: Int, zoomed: Bool) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.zoomed = zoomed
    }
}

extension Model {
    /// The one decision every front end, `evaluate` and the trainer's checks share: the verdict (no dog, unsure,
    /// another breed, dog) and the `top` breeds for one photo, from each backbone's pooled features
    /// (`features[b]`: backbone b's views, [views × 1280], computed at `precision`, whose temperatures apply).
    ///
    /// - **No dog**: the ImageNet heads put less than `thresholds.noDogBelow` of their mass on the dog classes.
    ///   Breeds are still ranked, but the verdict says no dog.
    /// - **Breeds**: the breed heads' calibrated probabilities (`breedProbabilities`) when the model has them;
    ///   otherwise the ImageNet probabilities of the dog classes, renormalised over the dog classes.
    /// - **Another breed**: the photo is less like the top breed's own photos than `thresholds.otherBreedBelow`,
    ///   unless the ImageNet head, where it knows the top breed, says otherwise (`thresholds.breedVote`).
    /// - **Unsure**: the top breed is below `thresholds.unsureBelow`, or leads the second by less than
    ///   `thresholds.unsureMargin`.
    public func decide(features: [[Float]], top: Int, thresholds: DecisionThresholds,
                       precision: Precision) throws(ModelError) -> Classification {
        let imagenet = try imagenetProbabilities(features)
        let breedProbabilities = try breedProbabilities(features, precision: precision)
        let similarities = try similarities(features)
        var dogProbability: Float? = nil
        var lookalikes: [Prediction] = []
        if let imagenet, let labels = imagenetLabels {
            dogProbability = labels.dogProbability(imagenet)
            lookalikes = Self.ranked(labels, imagenet, top: 3) { !$0.isDog }
        }
        // At least two ranked, whatever `top` is: the verdict weighs the second breed.
        var breeds: [Prediction]
        if let breedProbabilities, let labels = breedLabels {
            breeds = Self.ranked(labels, breedProbabilities, top: max(top, 2)) { _ in true }
        } else {
            let mass = max(dogProbability ?? 1, .leastNormalMagnitude)
            breeds = Self.ranked(imagenetLabels ?? [], imagenet ?? [], top: max(top, 2)) { $0.isDog }
            for i in breeds.indices { breeds[i].probability /= mass }
        }
        let topIndex = breeds.first.flatMap { first in breedLabels?.firstIndex { $0.key == first.key } }
        let similarity = topIndex.flatMap { i in similarities.map { $0[i] } }
        // Only weighed where the model can say "another breed" and has the vote.
        let shares = thresholds.breedVote == nil || thresholds.otherBreedBelow == nil ? nil
            : topIndex.flatMap { i in imagenet.flatMap { imagenetShares($0, dogProbability: dogProbability ?? 0, breed: i) } }
        let verdict = thresholds.verdict(dogProbability: dogProbability, top: breeds.first?.probability ?? 0,
                                         second: breeds.count > 1 ? breeds[1].probability : 0, similarity: similarity,
                                         imagenet: shares)
        return Classification(verdict: verdict, breeds: Array(breeds.prefix(max(0, top))), dogProbability: dogProbability,
                              similarity: similarity, lookalikes: verdict == .noDog ? lookalikes : [])
    }

    /// What the ImageNet head's `probabilities` say of breed label `breed` (see `ImageNetShares`), as shares of
    /// `dogProbability`, their mass on dog classes (`Label.dogProbability`); nil when the head has no label for that
    /// breed or puts no mass on dogs.
    @_spi(Testing) public func imagenetShares(_ probabilities: [Float], dogProbability: Float, breed: Int) -> ImageNetShares? {
        let counterparts = breedCounterparts.imagenet[breed]
        guard !counterparts.isEmpty, probabilities.count == imagenetLabels?.count, dogProbability > 0 else { return nil }
        let top = counterparts.reduce(Float(0)) { $0 + probabilities[$1] }
        let elsewhere = breedCounterparts.elsewhere.reduce(Float(0)) { max($0, probabilities[$1]) }
        return ImageNetShares(topBreed: top / dogProbability, elsewhere: elsewhere / dogProbability)
    }

    /// The `top` most probable labels that pass `include`, ties broken by label order (stable).
    static func ranked(_ labels: [Label], _ probabilities: [Float], top: Int, where include: (Label) -> Bool) -> [Prediction] {
        labels.indices.filter { include(labels[$0]) && $0 < probabilities.count }
            .sorted { probabilities[$0] != probabilities[$1] ? probabilities[$0] > probabilities[$1] : $0 < $1 }
            .prefix(max(0, top))
            .map { Prediction(key: labels[$0].key, name: labels[$0].name, probability: probabilities[$0], breed: labels[$0].breed) }
    }
}
