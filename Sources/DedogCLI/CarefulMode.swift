import Dedog

/// `--careful`, as `classify` and `tag` offer it.
enum CarefulMode {
    /// What `--careful` does and costs, with the bundled models' figures (docs/accuracy.md, "Careful mode").
    static let help = "Careful mode, for shelters, vets and others who meet many dogs of mixed or rare breeds: a breed "
        + "is named only where few dogs of other breeds would be. With the default model, dogs of breeds it does not "
        + "know are named confidently 25 % of the time instead of 43 %, and 13 % of the right answers are held back "
        + "(\"a breed this model does not know\" or \"unsure\") instead of 5 % (fast: 25 % instead of 45 %, 18 % of "
        + "the right answers instead of 7 %; measured on breeds held out of training, docs/accuracy.md)."

    /// `classifier`, in careful mode when `careful` asks for it; a model without one is refused, naming the flag.
    static func classifier(_ classifier: Classifier, careful: Bool) throws(ClassifierError) -> Classifier {
        careful ? try classifier.carefulMode() : classifier
    }
}
