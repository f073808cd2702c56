import Foundation
import DedogNN

// The product's verdict on a photo, in one place: what the thresholds are (they live in the model file), how they
// turn a photo's probabilities into a verdict, and the decision every front end, `evaluate` and the trainer's
// checks share.

/// When a photo counts as showing no dog, and when the model is unsure. See `Classifier` for how they are used.
public struct DecisionThresholds: Codable, Sendable, Equatable {
    /// "No dog" when the ImageNet head puts less than this probability mass on dog classes.
    public var noDogBelow: Float
    /// "Unsure" when the top breed's probability is below this …
    public var unsureBelow: Float
    /// … or when it leads the second breed by less than this.
    public var unsureMargin: Float
    /// "Not one of my breeds" when the photo's features are less similar than this (cosine) to the top breed's
    /// own photos (its prototype, or one of the model's confirmed photos). Set by training, from how similar
    /// held-out photos of the model's own breeds are; nil when the model has no prototypes.
    public var otherBreedBelow: Float?
    /// With `otherBreedBelow`: the ImageNet head's word on the top breed, when it knows that breed. Nil in files
    /// written before it (their "other breed" rests on the similarity alone).
    public var breedVote: BreedVote?
    /// "A breed this model does not know" from several signals at once (`UnknownBreedRule`), for models whose rule
    /// was fitted by holding breeds out of training: the bundled ones. Where it is set, it decides alone: the
    /// similarity's threshold and the vote are not consulted. Nil in other files.
    public var unknownBreed: UnknownBreedRule?
    /// "No dog" also where the photo's features say cat (`CatRule`), whatever share the ImageNet heads put on dogs.
    /// Nil in files written before it, and in models whose backbones it was not fitted on.
    public var cat: CatRule?
    /// When the answer names no breed, the kind of dog it still is (`KindRule`), from the breeds' kinds
    /// (`Label.kind`). Nil: no kind is said.
    public var kind: KindRule?
    /// Not "no dog" for the ImageNet heads' share alone where the detector sees a dog and the breed heads are sure
    /// of its breed (`SeenDogRule`). Nil in files written before it: the heads' share decides alone.
    public var seenDog: SeenDogRule?

    public init(noDogBelow: Float = 0.5, unsureBelow: Float = 0.45, unsureMargin: Float = 0.15,
                otherBreedBelow: Float? = nil, breedVote: BreedVote? = nil, unknownBreed: UnknownBreedRule? = nil,
                cat: CatRule? = nil, kind: KindRule? = nil, seenDog: SeenDogRule? = nil) {
        self.noDogBelow = noDogBelow
        self.unsureBelow = unsureBelow
        self.unsureMargin = unsureMargin
        self.otherBreedBelow = otherBreedBelow
        self.breedVote = breedVote
        self.unknownBreed = unknownBreed
        self.cat = cat
        self.kind = kind
        self.seenDog = seenDog
    }

    /// The careful mode's thresholds: "a breed this model does not know" from the rule's `carefulBelow` instead of
    /// its `below`, for users who meet many dogs of mixed or rare breeds (a shelter, a vet), who would rather hear
    /// "a breed this model does not know" than a confident wrong breed, at the price of more right answers held
    /// back. Nil when the model has no careful point (a model without a fitted `UnknownBreedRule`).
    public var careful: DecisionThresholds? {
        guard var rule = unknownBreed, let stricter = rule.carefulBelow else { return nil }
        rule.below = stricter
        var careful = self
        careful.unknownBreed = rule
        return careful
    }
}

/// A cat, told from a dog by a line through the photo's features: Σ_b weights[b] · f_b / |f_b| + bias, where f_b is
/// backbone b's pooled features (its views averaged); a photo that scores at least `from` is a cat, answered "no dog".
///
/// The ImageNet heads alone answered 3.9 % of pets-real's 1,000 real cats as a dog: shelter photos of cats get up to
/// half their belief on dog classes, spread thinly (a black cat: schipperke 25 %, no cat class above 10 %). Fitted by
/// `scripts/experiments/fit_cat_rule.py` (logistic regression) on those cats against the train split's dogs; `from` is
/// where 99.2 % of the cats, each scored by a rule fitted without it, are "no dog" (this rule or the heads').
/// pets-real's dogs, never fitted on, check it: 0.6 % (default) and 0.9 % (`fast`) "no dog" (docs/accuracy.md).
public struct CatRule: Codable, Sendable, Equatable {
    /// One row of `EfficientNetLite.featureCount` weights per backbone, in the model's backbone order.
    public var weights: [[Float]]
    public var bias: Float
    public var from: Float

    public init(weights: [[Float]], bias: Float, from: Float) {
        self.weights = weights
        self.bias = bias
        self.from = from
    }

    /// The score of a photo whose backbone b's features are `features[b]` ([views × width], views averaged here);
    /// nil when they do not fit the rule.
    public func score(_ features: [[Float]]) -> Float? {
        guard features.count == weights.count else { return nil }
        var total = bias
        for (x, w) in zip(features, weights) {
            guard !w.isEmpty, x.count >= w.count, x.count % w.count == 0 else { return nil }
            // The views' mean at unit length, as the similarities take it.
            let direction = Model.direction(x, width: w.count)
            guard direction.contains(where: { $0 != 0 }) else { return nil }
            total += Model.dot(direction, w, row: 0)
        }
        return total
    }

    /// The first field that does not hold, as (field, value, requirement) below `decision.cat`, for a model of
    /// `backbones` backbones of `width` features.
    func problem(backbones: Int, width: Int) -> (field: String, value: String, requirement: String)? {
        if weights.count != backbones { return ("weights", "\(weights.count) rows", "one for each of the \(backbones) backbones") }
        if let row = weights.first(where: { $0.count != width }) { return ("weights", "a row of \(row.count)", "rows of \(width) numbers") }
        if let bad = (weights.joined() + [bias, from]).first(where: { !$0.isFinite }) { return ("weights", "\(bad)", "finite numbers") }
        return nil
    }
}

/// A dog the model's detector finds and whose breed the breed heads are sure of is a dog where the ImageNet heads
/// put a little less than `noDogBelow` of their mass on dog classes: a pug chewing a tennis ball, a Boxer with a ball,
/// a Samoyed puppy in the snow (issue 70) — the ball or the snow takes some of the heads' mass, not the dog away.
/// All three signals are needed: the detector finds coyotes and the breed heads are sure of a breed for them, but
/// the heads put less of their mass on dogs for a coyote than for such a dog. Cats stay "no dog" through the cat
/// rule, asked after this one.
///
/// Chosen by `scripts/experiments/seen_dog_rule.py` on close views of the held-out part of Stanford's train split
/// (the dog filling or leaving the frame, half a dog, a head: photos of dogs the backbones never saw as they are)
/// against photos without a dog from ../shared (pets-real's cats, Stanford's parts beside every dog's box, the
/// coyotes of more-breeds-224's train and validation splits): none of those is turned into a dog, with a margin
/// (docs/accuracy.md).
public struct SeenDogRule: Codable, Sendable, Equatable {
    /// The detector's best box scores at least this (a box under the detector's own threshold is not reported: this
    /// is then that threshold) …
    public var detectorFrom: Float
    /// … the top breed's probability is at least this …
    public var breedFrom: Float
    /// … and the ImageNet heads put at least this of their mass on dog classes.
    public var dogShareFrom: Float

    public init(detectorFrom: Float, breedFrom: Float, dogShareFrom: Float) {
        (self.detectorFrom, self.breedFrom, self.dogShareFrom) = (detectorFrom, breedFrom, dogShareFrom)
    }

    /// Whether a photo whose detector's best box scores `detectorScore` (nil: none, or no detector), whose top
    /// breed has probability `top` and whose ImageNet heads put `dogShare` on dogs shows a dog.
    public func seesDog(detectorScore: Float?, top: Float, dogShare: Float) -> Bool {
        guard let score = detectorScore else { return false }
        return score >= detectorFrom && top >= breedFrom && dogShare >= dogShareFrom
    }

    /// The first field that does not hold, as (field, value, requirement) below `decision.seenDog`.
    func problem() -> (field: String, value: String, requirement: String)? {
        for (field, value) in [("detectorFrom", detectorFrom), ("breedFrom", breedFrom), ("dogShareFrom", dogShareFrom)]
            where !(value.isFinite && value > 0 && value <= 1) {
            return (field, "\(value)", "above 0, at most 1")
        }
        return nil
    }
}

/// What a photo that shows no dog looks like instead, as a person would say it: a cat when the cat rule said so,
/// else the kind the ImageNet heads believe most, their classes that are not dogs added up by kind (one fish at 16 %
/// among a noise picture's hundred small things is not "another animal").
public enum LooksLike: String, Codable, Sendable, CaseIterable {
    /// A house cat or a big cat.
    case cat
    /// Another animal: a wolf, a fox, a bird, a horse …
    case animal
    /// Anything else: a thing, a place, food.
    case other

    /// The kind of the ImageNet class with WordNet id `key` (a dog class's key may go on with its folder name).
    /// ImageNet-1k's classes are sorted by WordNet id, and its animals come first, before "abacus" (n02666196); its
    /// cats run from "tabby" (n02123045) to "cheetah" (n02130308).
    public init(imagenetKey key: String) {
        let id = key.prefix(9)
        self = id >= "n02123045" && id <= "n02130308" ? .cat : id < "n02666196" ? .animal : .other
    }

    /// The kind of `labels`' classes that are not dogs with the most of `probabilities` added up.
    public static func mostLikely(_ labels: [Label], _ probabilities: [Float]) -> LooksLike {
        var mass: [LooksLike: Float] = [:]
        for (label, p) in zip(labels, probabilities) where !label.isDog { mass[LooksLike(imagenetKey: label.key), default: 0] += p }
        return allCases.max { (mass[$0] ?? 0) < (mass[$1] ?? 0) } ?? .other
    }
}

/// A dog that is none of the model's breeds, told by a logistic score over what the decision sees of a photo:
/// Σ weights[i] · (signal[i] − mean[i]) / scale[i] + bias; a photo that scores below `below` is another breed.
/// The signals (`Signal`): the top breed's probability and its lead on the second, how like the top breed's
/// prototype the photo is, and how strongly the breed heads answer at all (the log-sum-exp of their logits).
///
/// Fitted by `scripts/experiments/unknown_breeds.py` on models trained with breeds held out (20 Stanford Dogs breeds
/// and some of the 13 new ones, or the 13 new ones alone): their validation photos of the breeds they know against
/// the held-out breeds' training photos, never a test split. `below` is where the rule takes at most 3 % of the right
/// answers (top breed right) of the final model's own validation photos restored to their true proportions
/// (docs/accuracy.md has the trade-off). `carefulBelow`, the careful mode's threshold (`DecisionThresholds.careful`),
/// is where the held-out breeds' photos, each fold scored by a rule fitted on the others, are named confidently at
/// most a quarter of the time; it takes more of the right answers (`dedog classify --help` says how many).
public struct UnknownBreedRule: Codable, Sendable, Equatable {
    public enum Signal: String, Codable, Sendable, CaseIterable {
        /// The top breed's probability.
        case p1
        /// The top breed's lead on the second.
        case margin
        /// The cosine between the photo's features and the top breed's prototype (the similarity).
        case cosine
        /// The log-sum-exp of each breed head's logits, averaged over the backbones.
        case energy
    }

    public var signals: [Signal]
    public var mean: [Float]
    public var scale: [Float]
    public var weights: [Float]
    public var bias: Float
    public var below: Float
    /// The careful mode's `below`, at least `below`; nil: the model has no careful mode.
    public var carefulBelow: Float?

    public init(signals: [Signal], mean: [Float], scale: [Float], weights: [Float], bias: Float, below: Float,
                carefulBelow: Float? = nil) {
        self.signals = signals
        self.mean = mean
        self.scale = scale
        self.weights = weights
        self.bias = bias
        self.below = below
        self.carefulBelow = carefulBelow
    }

    /// The score of a photo whose signals are `value(signal)`; nil when one is unknown (a model without
    /// prototypes has no cosine).
    public func score(_ value: (Signal) -> Float?) -> Float? {
        var total = bias
        for (i, signal) in signals.enumerated() {
            guard let v = value(signal) else { return nil }
            total += weights[i] * (v - mean[i]) / scale[i]
        }
        return total
    }

    /// The first field that does not hold, as (field, value, requirement) below `decision.unknownBreed`.
    func problem() -> (field: String, value: String, requirement: String)? {
        let n = signals.count
        if n == 0 { return ("signals", "empty", "at least one signal") }
        for (name, list) in [("mean", mean), ("scale", scale), ("weights", weights)] where list.count != n {
            return (name, "\(list.count) numbers", "one for each of the \(n) signals")
        }
        if let bad = (mean + weights + [bias, below]).first(where: { !$0.isFinite }) { return ("weights", "\(bad)", "finite numbers") }
        if let bad = scale.first(where: { !($0.isFinite && $0 > 0) }) { return ("scale", "\(bad)", "positive finite numbers") }
        if let careful = carefulBelow, !(careful.isFinite && careful >= below) {
            return ("carefulBelow", "\(careful)", "a finite number no lower than below (\(below))")
        }
        return nil
    }
}

/// The kind of dog a breed is, as the breed catalogue groups breeds: its FCI group (1 to 10) and, where the FCI
/// divides the group, its section (the catalogue's English name, which the catalogue translates).
public struct BreedKind: Codable, Sendable, Hashable {
    public var group: Int
    public var section: String?

    public init(group: Int, section: String? = nil) {
        self.group = group
        self.section = section
    }
}

/// A kind of dog said of a photo whose breed is not named, and how much of the breed probabilities its breeds
/// share (`KindRule`). `kind.section` is nil when only the group is said.
public struct DogKind: Codable, Sendable, Equatable {
    public var kind: BreedKind
    public var probability: Float

    public init(kind: BreedKind, probability: Float) {
        self.kind = kind
        self.probability = probability
    }
}

/// The kind of dog, when the answer names no breed ("a breed this model does not know", "unsure"): the breed
/// probabilities added up by the breeds' kinds (`Label.kind`; a breed without one adds to none). A section whose
/// breeds together reach `sectionFrom` is said; else a group whose breeds reach `groupFrom`; else nothing.
///
/// Fitted by `scripts/experiments/kind_of_dog.py` on the fold models of the unknown-breed rule: their answers for
/// photos of the breeds they were trained without, whose kinds the catalogue gives; each threshold is the lowest at
/// which the kind said is right at least 80 % of the time, each fold scored by thresholds chosen on the others
/// (docs/accuracy.md).
public struct KindRule: Codable, Sendable, Equatable {
    public var groupFrom: Float
    /// Nil: sections are never said.
    public var sectionFrom: Float?

    public init(groupFrom: Float, sectionFrom: Float? = nil) {
        self.groupFrom = groupFrom
        self.sectionFrom = sectionFrom
    }

    /// The kind said for breed `probabilities` of breeds of `kinds` (one a label, in order), leaving out the labels
    /// in `excluded` (the others' probabilities renormalised); nil when no kind reaches its threshold.
    public func kind(_ probabilities: [Float], kinds: [BreedKind?], excluding excluded: Set<Int> = []) -> DogKind? {
        let included = zip(probabilities.indices, probabilities).filter { !excluded.contains($0.0) }
        let total = included.reduce(Float(0)) { $0 + $1.1 }
        guard total > 0 else { return nil }
        var groups: [Int: Float] = [:], sections: [BreedKind: Float] = [:]
        for (i, p) in included where i < kinds.count {
            guard let kind = kinds[i] else { continue }
            groups[kind.group, default: 0] += p / total
            if kind.section != nil { sections[kind, default: 0] += p / total }
        }
        // The most probable, ties broken by group and section so that the answer never depends on hashing.
        func best<K>(_ masses: [K: Float], order: (K, K) -> Bool) -> (K, Float)? {
            masses.max { $0.value != $1.value ? $0.value < $1.value : order($1.key, $0.key) }.map { ($0.key, $0.value) }
        }
        if let from = sectionFrom,
           let (section, p) = best(sections, order: { ($0.group, $0.section ?? "") < ($1.group, $1.section ?? "") }), p >= from {
            return DogKind(kind: section, probability: p)
        }
        if let (group, p) = best(groups, order: <), p >= groupFrom {
            return DogKind(kind: BreedKind(group: group), probability: p)
        }
        return nil
    }

    /// The first field that does not hold, as (field, value, requirement) below `decision.kind`.
    func problem() -> (field: String, value: String, requirement: String)? {
        for (field, value) in [("groupFrom", groupFrom), ("sectionFrom", sectionFrom)] {
            if let value, !(value.isFinite && (0...1).contains(value)) { return (field, "\(value)", "between 0 and 1") }
        }
        return nil
    }
}

/// The pretrained ImageNet head's word on whether a photo shows one of the model's breeds. A model trained on a
/// few photos a breed judges "another breed" by similarity to those few photos, which real photos taken
/// otherwise fall short of; the ImageNet head has seen about a thousand photos of each of 118 breeds. Where it
/// knows the top breed (`Label.imagenetKeys`), it overrules the similarity both ways:
/// - a photo to whose top breed it gives at least `agreesFrom` of its dog mass is not another breed;
/// - a photo to whose top breed it gives less than `disagreesBelow` while it gives at least `elsewhereFrom` to
///   one dog class outside the model's breeds is another breed.
///
/// Chosen on made-up "real photo" check sets from the Stanford Dogs train split (4-breed models from 3, 10 and
/// 30 framed, recoloured, blurred and recompressed photos a breed, checked on 20 other photos of each and 10 of
/// each of 16 other breeds; docs/training.md "Photos taken elsewhere").
public struct BreedVote: Codable, Sendable, Equatable {
    public var agreesFrom: Float
    public var disagreesBelow: Float
    public var elsewhereFrom: Float

    public init(agreesFrom: Float = 0.1, disagreesBelow: Float = 0.05, elsewhereFrom: Float = 0.5) {
        self.agreesFrom = agreesFrom
        self.disagreesBelow = disagreesBelow
        self.elsewhereFrom = elsewhereFrom
    }
}

/// What the ImageNet head says of one photo's breed, as shares of its dog mass: on the top breed (its labels for
/// that breed together), and on the one dog class outside the model's breeds it believes most.
public struct ImageNetShares: Sendable, Equatable {
    public var topBreed: Float
    public var elsewhere: Float

    public init(topBreed: Float, elsewhere: Float) {
        self.topBreed = topBreed
        self.elsewhere = elsewhere
    }
}

/// What the classifier concludes about a photo.
public enum Verdict: String, Sendable, Codable {
    /// A dog, and the top breed is clearly ahead.
    case dog
    /// Probably a dog, but the top breeds are too close (or too weak) to name one.
    case unsure
    /// The photo probably shows no dog.
    case noDog
    /// A dog, but none of the breeds the model knows: it looks less like any of them than their own photos do.
    case otherBreed
}

extension DecisionThresholds {
    /// The verdict for a photo whose dog probability is `dogProbability` (nil when the model cannot judge it) and
    /// whose two most probable breeds have `top` and `second`; `similarity` is how like its own photos the top
    /// breed the photo is (nil when the model cannot tell), `imagenet` what the ImageNet head says of the top
    /// breed (nil when it does not know it; see `BreedVote`), `unknownScore` the photo's `UnknownBreedRule` score,
    /// `topNonDog` the ImageNet head's probability of its most likely class that is not a dog (nil: not known),
    /// `catScore` the photo's `CatRule` score (nil: not known), `detectorScore` the model's detector's best box in
    /// the photo (nil: none found, or not looked for), `trainedTop` the trained breeds' top probability as before
    /// any breed was taught (nil: none taught), which the seen-dog rule weighs where it is higher than `top`.
    public func verdict(dogProbability: Float?, top: Float, second: Float, similarity: Float? = nil,
                        imagenet: ImageNetShares? = nil, unknownScore: Float? = nil, topNonDog: Float? = nil,
                        catScore: Float? = nil, detectorScore: Float? = nil, trainedTop: Float? = nil) -> Verdict {
        if let dog = dogProbability, showsNoDog(dogProbability: dog, topNonDog: topNonDog),
           !(seenDog?.seesDog(detectorScore: detectorScore, top: max(top, trainedTop ?? 0), dogShare: dog) ?? false) { return .noDog }
        if seesCat(catScore) { return .noDog }
        if let rule = unknownBreed {
            // The fitted rule stands in for the similarity and the vote: it was fitted and measured alone.
            if let score = unknownScore, score < rule.below { return .otherBreed }
        } else if let below = otherBreedBelow {
            var other = similarity.map { $0 < below } ?? false
            if let vote = breedVote, let imagenet {
                if imagenet.topBreed >= vote.agreesFrom {
                    other = false
                } else if imagenet.topBreed < vote.disagreesBelow && imagenet.elsewhere >= vote.elsewhereFrom {
                    other = true
                }
            }
            if other { return .otherBreed }
        }
        if top < unsureBelow || top - second < unsureMargin { return .unsure }
        return .dog
    }

    /// Whether the cat rule, where the model has one, calls a photo of `catScore` a cat.
    public func seesCat(_ catScore: Float?) -> Bool {
        guard let rule = cat, let score = catScore else { return false }
        return score >= rule.from
    }

    /// Whether a photo whose ImageNet heads put `dogProbability` on dogs and `topNonDog` on their most likely class
    /// that is not a dog (nil: not known) is answered "no dog": under `noDogBelow`, unless `seesNothingElse`.
    public func showsNoDog(dogProbability dog: Float, topNonDog: Float?) -> Bool {
        dog < noDogBelow && !Self.seesNothingElse(dog: dog, topNonDog: topNonDog, below: noDogBelow)
    }

    /// A photo under the "no dog" threshold is still a dog when its dog probability is at least half the threshold
    /// and the ImageNet head sees nothing else in it: no class that is not a dog above `nothingElseBelow`. Dogs of
    /// breeds the ImageNet head never saw (Shar Pei, Shiba Inu, the hairless breeds) get a flat belief, their dog
    /// classes' share low and no other class standing out; coyotes, cats or a floor get a class of their own. On
    /// the bundled default's validation photos, 12 of the 19 dogs under its threshold are such (3 of 14 for `fast`),
    /// and none of 103 coyotes nor of 1,200 textures without a dog (`DedogBench check-sets`, `no-dog-texture`), whose
    /// least such class was 0.033 within that band (docs/accuracy.md).
    static func seesNothingElse(dog: Float, topNonDog: Float?, below threshold: Float) -> Bool {
        guard let other = topNonDog else { return false }
        return dog >= threshold * nothingElseFloor && other < nothingElseBelow
    }

    /// Below this share of the threshold "no dog" stands whatever else is seen.
    static let nothingElseFloor: Float = 0.5
    /// The largest probability of a class that is not a dog at which the ImageNet head "sees nothing else".
    static let nothingElseBelow: Float = 0.03
}

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

/// What the model concludes about one photo: its verdict, its breeds ranked, and what the verdict was made of.
public struct Decision: Sendable, Equatable {
    public var verdict: Verdict
    /// The top-k breeds, most likely first. Probabilities are conditional on the photo showing a dog.
    public var breeds: [Prediction]
    /// Probability that the photo shows a dog at all (the ImageNet head's mass on dog classes); nil when the
    /// model has no ImageNet head to judge it.
    public var dogProbability: Float?
    /// How like the top breed's own photos this photo is (cosine of features, see `Model.similarities`); nil when
    /// the model has no prototypes.
    public var similarity: Float?
    /// For `noDog`: the most likely non-dog ImageNet classes ("tabby cat", "teddy bear"), most likely first.
    public var lookalikes: [Prediction]
    /// For `noDog`: what the photo looks like instead (nil when the model cannot tell: no ImageNet head).
    public var looksLike: LooksLike?
    /// For `otherBreed` and `unsure`: the kind of dog, where the model is sure of that much (`KindRule`).
    public var kind: DogKind?

    public init(verdict: Verdict, breeds: [Prediction], dogProbability: Float?, similarity: Float? = nil,
                lookalikes: [Prediction] = [], looksLike: LooksLike? = nil, kind: DogKind? = nil) {
        self.verdict = verdict
        self.breeds = breeds
        self.dogProbability = dogProbability
        self.similarity = similarity
        self.lookalikes = lookalikes
        self.looksLike = looksLike
        self.kind = kind
    }
}

extension Model {
    /// The one decision every front end, `evaluate` and the trainer's checks share: the verdict (no dog, unsure,
    /// another breed, dog) and the `top` breeds for one photo, from each backbone's pooled features
    /// (`features[b]`: backbone b's views, [views × 1280], computed at `precision`, whose temperatures apply).
    ///
    /// - **No dog**: the ImageNet heads put less than `thresholds.noDogBelow` of their mass on the dog classes, and
    ///   see something else (`DecisionThresholds.seesNothingElse`), unless the detector found a dog whose breed the
    ///   breed heads are sure of (`thresholds.seenDog`, with `detectorScore`: the detector's best box, nil where none
    ///   was found or it was not run); or the cat rule (`thresholds.cat`) sees a cat.
    ///   Breeds are still ranked, but the verdict says no dog, and what the photo looks like instead (`LooksLike`).
    /// - **Breeds**: the breed heads' calibrated probabilities (`breedProbabilities`) when the model has them;
    ///   otherwise the ImageNet probabilities of the dog classes, renormalised over the dog classes.
    /// - **Another breed**: the photo scores below the model's `UnknownBreedRule` where it has one; otherwise it is
    ///   less like the top breed's own photos than `thresholds.otherBreedBelow`, unless the ImageNet head, where it
    ///   knows the top breed, says otherwise (`thresholds.breedVote`).
    /// - **Unsure**: the top breed is below `thresholds.unsureBelow`, or leads the second by less than
    ///   `thresholds.unsureMargin`.
    /// - **Taught breeds** (`Label.taught`) are named only for photos like their own: where one comes first and the
    ///   verdict is "another breed", the decision is made again without the taught breeds (the answer the model gave
    ///   before they were taught). A row imprinted from a few photos has no trained boundary; unlike photos it wins
    ///   are mostly other breeds' (`scripts/bench-teaching`, docs/training.md).
    public func decide(features: [[Float]], top: Int, thresholds: DecisionThresholds,
                       precision: Precision, detectorScore: Float? = nil) throws(ModelError) -> Decision {
        let imagenet = try imagenetProbabilities(features)
        let breedProbabilities = try breedProbabilities(features, precision: precision)
        let similarities = try similarities(features)
        let catScore = thresholds.cat?.score(features)
        var dogProbability: Float? = nil
        var lookalikes: [Prediction] = []
        if let imagenet, let labels = imagenetLabels {
            dogProbability = labels.dogProbability(imagenet)
            lookalikes = Self.ranked(labels, imagenet, top: 3) { !$0.isDog }
        }
        // The trained breeds' share of the breed heads' mass: their probabilities as before any breed was taught are
        // theirs over it.
        let trainedMass = taughtBreeds.isEmpty ? nil : breedProbabilities.map { p in
            p.indices.reduce(Float(0)) { taughtBreeds.contains($1) ? $0 : $0 + p[$1] }
        }
        // Taught breeds give way (below): then the decision is made among the trained breeds alone.
        func judge(withoutTaught: Bool) throws(ModelError) -> (decision: Decision, topIndex: Int?) {
            let excluded: Set<Int> = withoutTaught ? taughtBreeds : []
            // At least two ranked, whatever `top` is: the verdict weighs the second breed.
            var breeds: [Prediction]
            if let breedProbabilities, let labels = breedLabels {
                breeds = Self.ranked(labels, breedProbabilities, top: max(top, 2)) { !withoutTaught || $0.taught == nil }
                if withoutTaught, let mass = trainedMass, mass > 0 {
                    // Renormalised over the trained breeds: their probabilities as before any breed was taught.
                    for i in breeds.indices { breeds[i].probability /= mass }
                }
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
            let p1 = breeds.first?.probability ?? 0, p2 = breeds.count > 1 ? breeds[1].probability : 0
            // Whether a dog is seen is not for a taught breed to change: a taught lookalike (an American Bulldog
            // beside the Boxer) splits the top breed's probability, and the seen-dog rule, fitted on the trained
            // breeds, then turned a Boxer it had kept into "no dog". It weighs the trained breeds' top as before any
            // breed was taught too.
            let trainedTop = withoutTaught ? nil : breedProbabilities.flatMap { p -> Float? in
                guard let mass = trainedMass, mass > 0 else { return nil }
                return p.indices.reduce(Float(0)) { taughtBreeds.contains($1) ? $0 : max($0, p[$1]) } / mass
            }
            let unknownScore = try thresholds.unknownBreed.flatMap { rule throws(ModelError) in
                let energy = try breedEnergy(features, excluding: excluded)
                return rule.score { signal in
                    switch signal {
                    case .p1: p1
                    case .margin: p1 - p2
                    case .cosine: similarity
                    case .energy: energy
                    }
                }
            }
            let verdict = thresholds.verdict(dogProbability: dogProbability, top: p1, second: p2, similarity: similarity,
                                             imagenet: shares, unknownScore: unknownScore, topNonDog: lookalikes.first?.probability,
                                             catScore: catScore, detectorScore: detectorScore, trainedTop: trainedTop)
            let noDog = verdict == .noDog
            let looksLike: LooksLike? = !noDog ? nil : thresholds.seesCat(catScore) ? .cat
                : imagenet.flatMap { p in imagenetLabels.map { LooksLike.mostLikely($0, p) } }
            let kind = verdict != .otherBreed && verdict != .unsure ? nil
                : thresholds.kind.flatMap { rule in
                    breedProbabilities.flatMap { p in breedLabels.flatMap { rule.kind(p, kinds: $0.map(\.kind), excluding: excluded) } }
                }
            return (Decision(verdict: verdict, breeds: Array(breeds.prefix(max(0, top))), dogProbability: dogProbability,
                             similarity: similarity, lookalikes: noDog ? lookalikes : [], looksLike: looksLike, kind: kind), topIndex)
        }
        let (decision, topIndex) = try judge(withoutTaught: false)
        // A taught breed is named only for photos like its own: where it comes first but the photo is not like its
        // photos, the answer is the model's without its taught breeds, as it was before they were taught.
        guard decision.verdict == .otherBreed, let topIndex, taughtBreeds.contains(topIndex),
              taughtBreeds.count < breedLabels?.count ?? 0 else {
            return decision
        }
        return try judge(withoutTaught: true).decision
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
