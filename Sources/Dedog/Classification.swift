import DedogNN

/// One ranked class with its probability (0…1).
public struct Prediction: Sendable, Equatable, Codable {
    /// Stable key: the Stanford Dogs folder for breeds (e.g. `n02099601-golden_retriever`), else a WordNet id.
    public var key: String
    public var name: String
    public var probability: Float
    /// The catalogue id of the breed, when the model's label names one (see `Label.breed`).
    public var breed: String? = nil
}

/// The result for one photo.
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
}
