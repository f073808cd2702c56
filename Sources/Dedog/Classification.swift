import DedogBreedModel

/// What the classifier concludes about a photo (the model's verdict rules: `DedogBreedModel/Verdict.swift`).
public typealias Verdict = DedogBreedModel.Verdict
/// One ranked breed (or class) with its probability.
public typealias Prediction = DedogBreedModel.Prediction
/// What a photo without a dog looks like instead: a cat, another animal, something else.
public typealias LooksLike = DedogBreedModel.LooksLike
/// The kind of dog said when no breed is (see `Classification.kind`).
public typealias DogKind = DedogBreedModel.DogKind
/// A breed's kind: its FCI group and section.
public typealias BreedKind = DedogBreedModel.BreedKind

/// The answer for one photo: the model's decision (`Decision`), where the dog is, and an answer per dog when
/// there are two.
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
    /// For `noDog`: what the photo looks like instead (nil when the model cannot tell).
    public var looksLike: LooksLike? = nil
    /// For `otherBreed` and `unsure`: the kind of dog (FCI group or section), where the model is sure of that much;
    /// `name(_:in:)` says it in words.
    public var kind: DogKind? = nil
    /// Where in the photo the network saw the top breed, when the classifier looked (see `Dedog.Classifier`).
    public var location: DogLocation? = nil
    /// When the detector finds two or more dogs (each crop a dog): an answer for each (its verdict, breeds and box),
    /// beside this answer for the whole photo; empty otherwise.
    public var dogs: [Classification] = []

    public init(verdict: Verdict, breeds: [Prediction], dogProbability: Float?, similarity: Float? = nil,
                               lookalikes: [Prediction] = [], looksLike: LooksLike? = nil, location: DogLocation? = nil,
                               dogs: [Classification] = []) {
        self.verdict = verdict
        self.breeds = breeds
        self.dogProbability = dogProbability
        self.similarity = similarity
        self.lookalikes = lookalikes
        self.looksLike = looksLike
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
    /// The answer comes with a second look at the box: the box was small, so the answer averages the whole photo's
    /// view and a zoomed view of it; or the whole photo held the dog back as a breed the model does not know, and
    /// the box looked at on its own named the breed.
    public var zoomed: Bool

    public init(x: Int, y: Int, width: Int, height: Int, zoomed: Bool) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.zoomed = zoomed
    }
}

extension Classification {
    /// The answer `decision` gives, before the classifier has looked for the dog.
    init(_ decision: Decision) {
        self.init(verdict: decision.verdict, breeds: decision.breeds, dogProbability: decision.dogProbability,
                  similarity: decision.similarity, lookalikes: decision.lookalikes, looksLike: decision.looksLike)
        kind = decision.kind
    }
}
