import Foundation
import DedogNN

/// A trained head's parts on one backbone's features.
public struct BackboneHeads: Sendable {
    /// The pretrained ImageNet classifier, which also tells whether a photo shows a dog.
    public let imagenet: Linear?
    /// The trained breed classifier.
    public let breed: Linear?
    /// [breed labels × 1280] unit vectors (see `BackboneDescription.prototypes`).
    public let prototypes: [Float]?
}

/// A whole model file: one to three backbones, each with its heads, the photos users confirmed, and how their
/// answers combine.
///
/// Each backbone sees the photo at its own input size; the breed answer averages the backbones'
/// log-probabilities (each at its own temperature) and applies the model's combined temperature; the ImageNet
/// answer, which decides whether a photo shows a dog, averages their probabilities. A one-backbone model gives
/// exactly its head's calibrated softmax. The breed temperatures are those of the precision the features were
/// computed in (`breedTemperature(backbone:precision:)`): 8-bit features have their own where the file has them.
///
/// ```swift
/// let model = try Model(contentsOf: URL(fileURLWithPath: "models/dedog-breeds.safetensors"))
/// // inputs[b]: the photo prepared as backbone b's `input` says (Dedog's Classifier does this)
/// let views = try zip(model.backbones, inputs).map { network, input in try network.makeSession().features(input, batch: 1) }
/// let breeds = try model.breedProbabilities(views, precision: .int8)   // [breeds], sums to 1
/// ```
public final class Model: Sendable {
    public let specification: ModelDescription
    public let backbones: [EfficientNetLite]
    /// `heads[b]`: backbone b's heads and prototypes.
    public let heads: [BackboneHeads]
    /// The photos users confirmed (`dedog learn`), with their features in every backbone.
    public let confirmedPhotos: ConfirmedPhotos
    /// For each confirmed photo, the index of its breed label (checked at load: every photo names one).
    let confirmedClasses: [Int]
    /// Per breed label, what its prototype's cosine is multiplied by in `similarities`: 1 for trained breeds, more
    /// for taught ones, whose prototypes average a few photos (`TaughtBreed.similarityScale`).
    let similarityScales: [Float]
    /// The breed labels taught from photos (`Label.taught`), which give way in `decide`.
    let taughtBreeds: Set<Int>
    /// Where the dogs are in a photo, if the file has a detector (`DogDetector`).
    public let detector: DogDetector?
    /// The file it was read from, for messages.
    public let file: String
    /// Which ImageNet labels are the same breed as each breed label, and the rest (see `BreedCounterparts`).
    let breedCounterparts: BreedCounterparts

    /// `precision`: int8 loads only what 8-bit sessions run (backbones with activation ranges get no float layers,
    /// which saves packing them; their sessions then run int8 whatever they ask for); nil, every layer. `kernels`:
    /// the kernels the 8-bit layers are made for (`EfficientNetLite.byteKernels`), the ones its sessions will run.
    public convenience init(contentsOf url: URL, precision: Precision? = nil, kernels: KernelSet = .best) throws(ModelError) {
        try self.init(tensors: SafeTensors(contentsOf: url), precision: precision, kernels: kernels)
    }

    /// Builds every backbone, strictly: each needs all its tensors under its prefix, and the file may hold nothing else.
    public init(tensors: SafeTensors, precision: Precision? = nil, kernels: KernelSet = .best) throws(ModelError) {
        let contents = try ModelFile.read(tensors, precision: precision, kernels: kernels)
        specification = contents.description
        backbones = contents.networks
        heads = contents.heads
        confirmedPhotos = contents.confirmedPhotos
        detector = contents.detector
        let labels = contents.description.backbones.first?.breedHead?.labels ?? []
        let row = Dictionary(labels.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        confirmedClasses = confirmedPhotos.photos.compactMap { row[$0.label] }
        similarityScales = labels.map { [confirmedPhotos] label in
            label.taught == nil ? 1 : TaughtBreed.similarityScale(photos: confirmedPhotos.photos.filter { $0.label == label.key }.count)
        }
        taughtBreeds = Set(labels.indices.filter { labels[$0].taught != nil })
        file = tensors.file
        breedCounterparts = BreedCounterparts(breeds: labels,
                                              imagenet: contents.description.backbones.first?.imagenetHead?.labels ?? [])
    }

    /// The breed head's labels (the same for every backbone), if the model has breed heads.
    public var breedLabels: [Label]? { specification.backbones.first?.breedHead?.labels }
    /// The ImageNet head's labels, if the model has ImageNet heads.
    public var imagenetLabels: [Label]? { specification.backbones.first?.imagenetHead?.labels }
    /// The temperature applied to the averaged breed log-probabilities of features computed at `precision`: at
    /// int8, the 8-bit one where the file has it (`ModelDescription.int8CombinedTemperature`).
    public func combinedTemperature(for precision: Precision) -> Float { specification.combinedTemperature(for: precision) }

    /// Backbone b's breed-head temperature for features computed at `precision`: at int8, the 8-bit one where the
    /// file has it (`BackboneDescription.int8BreedTemperature`; a backbone without ranges runs in floats anyway).
    public func breedTemperature(backbone b: Int, precision: Precision) -> Float {
        specification.backbones[b].breedTemperature(for: precision)
    }

    /// The breed heads' combined scores for one photo, before the combined temperature: the mean over backbones
    /// of log softmax(logits / temperature), each backbone's logits averaged over its views.
    /// `features[b]` holds backbone b's views of the photo, [views × 1280], computed at `precision`. Nil without
    /// breed heads.
    /// Confirmed photos (`dedog learn`) add `confirmedWeight` · Σ exp(`confirmedSharpness` · (cos − 1)) to their
    /// breed's score, over the confirmed photos of that breed: a photo nearly the same as a confirmed one moves
    /// strongly, a merely similar one a little, others not at all.
    public func breedScores(_ features: [[Float]], precision: Precision) throws(ModelError) -> [Float]? {
        guard var scores = try combined(features, head: \.breed, temperature: { breedTemperature(backbone: $0, precision: precision) },
                                        combine: { logProbabilities in
            let n = Float(logProbabilities.count)
            return (0..<logProbabilities[0].count).map { i in logProbabilities.reduce(0) { $0 + $1[i] } / n }
        }) else { return nil }
        for (b, x) in features.enumerated() where !confirmedClasses.isEmpty {
            let direction = Self.direction(x), stored = confirmedPhotos.features[b]
            for (j, c) in confirmedClasses.enumerated() {
                let cosine = Self.dot(direction, stored, row: j)
                scores[c] += Self.confirmedWeight * Foundation.exp(Self.confirmedSharpness * (cosine - 1)) / Float(backbones.count)
            }
        }
        return scores
    }

    /// How strongly the breed heads answer a photo at all: the log-sum-exp of each backbone's logits (its views
    /// averaged), averaged over the backbones; nil without breed heads. A photo of a breed the heads were not
    /// trained on tends to excite them less (`UnknownBreedRule.Signal.energy`). The rows in `excluded` are left out.
    public func breedEnergy(_ features: [[Float]], excluding excluded: Set<Int> = []) throws(ModelError) -> Float? {
        guard features.count == backbones.count else {
            throw .badInput(detail: "features of \(features.count) backbones for a model of \(backbones.count)")
        }
        var total: Float = 0
        for (b, x) in features.enumerated() {
            guard let linear = heads[b].breed else { return nil }
            let views = x.count / linear.inputs
            guard views >= 1, x.count == views * linear.inputs else {
                throw .badInput(detail: "\(x.count) features are not whole views of \(linear.inputs)")
            }
            var logits = try linear.averaged(x, views: views)
            if !excluded.isEmpty { logits = logits.indices.filter { !excluded.contains($0) }.map { logits[$0] } }
            let top = logits.max() ?? 0
            total += Foundation.log(logits.reduce(Float(0)) { $0 + Foundation.exp($1 - top) }) + top
        }
        return total / Float(backbones.count)
    }

    /// How strongly a confirmed photo pulls photos like it to its breed (see `breedScores`).
    /// Chosen on Stanford Dogs train photos only (a Lite0 model trained on 60 photos per breed, confirmed and
    /// checked photos from the other 40; grid w ∈ {2, 4}, k ∈ {3, 5}): with 10 confirmed photos of each of its 3
    /// weakest breeds, their other photos went from 61 % to 82 % right and the other breeds' from 87.2 % to 85.6 %.
    /// Stronger settings gained more on the learned breeds and cost the others up to 8 points.
    public static let confirmedWeight: Float = 2
    public static let confirmedSharpness: Float = 5

    /// Per breed, how like that breed's own photos this photo is: the cosine between the photo's features and
    /// the breed's prototype (a taught breed's scaled to what a trained breed's prototype would give, see
    /// `TaughtBreed.similarityScale`) or its nearest confirmed photo, whichever is closer, averaged over backbones.
    /// Nil when the model has no prototypes.
    public func similarities(_ features: [[Float]]) throws(ModelError) -> [Float]? {
        guard features.count == backbones.count else {
            throw .badInput(detail: "features of \(features.count) backbones for a model of \(backbones.count)")
        }
        guard let labels = breedLabels, heads.allSatisfy({ $0.prototypes != nil }) else { return nil }
        var similarity = [Float](repeating: 0, count: labels.count)
        for (b, x) in features.enumerated() {
            guard let prototypes = heads[b].prototypes, x.count % EfficientNetLite.featureCount == 0, !x.isEmpty else {
                throw .badInput(detail: "\(x.count) features are not whole views of \(EfficientNetLite.featureCount)")
            }
            let direction = Self.direction(x)
            var best = (0..<labels.count).map { c in
                let cosine = Self.dot(direction, prototypes, row: c)
                return similarityScales[c] == 1 ? cosine : min(1, cosine * similarityScales[c])
            }
            for (j, c) in confirmedClasses.enumerated() {
                best[c] = max(best[c], Self.dot(direction, confirmedPhotos.features[b], row: j))
            }
            for c in best.indices { similarity[c] += best[c] / Float(backbones.count) }
        }
        return similarity
    }

    /// The unit vector along the mean of `views` [views × 1280] (zeros when the mean is zero).
    public static func direction(_ views: [Float]) -> [Float] {
        direction(views, width: EfficientNetLite.featureCount)
    }

    /// The unit vector along the mean of `views` [views × width] (zeros when the mean is zero).
    public static func direction(_ views: [Float], width: Int) -> [Float] {
        var mean = [Float](repeating: 0, count: width)
        for (i, v) in views.enumerated() { mean[i % width] += v }
        let norm = mean.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? mean.map { $0 / norm } : mean
    }

    static func dot(_ a: [Float], _ matrix: [Float], row: Int) -> Float {
        let width = a.count
        var sum: Float = 0
        for k in 0..<width { sum += a[k] * matrix[row * width + k] }
        return sum
    }

    /// The calibrated breed probabilities for one photo (see `breedScores`).
    public func breedProbabilities(_ features: [[Float]], precision: Precision) throws(ModelError) -> [Float]? {
        try breedScores(features, precision: precision).map { Self.softmax($0, temperature: combinedTemperature(for: precision)) }
    }

    /// The ImageNet probabilities for one photo: each backbone's calibrated softmax, averaged. Nil without
    /// ImageNet heads.
    public func imagenetProbabilities(_ features: [[Float]]) throws(ModelError) -> [Float]? {
        try combined(features, head: \.imagenet, temperature: { specification.backbones[$0].imagenetHead?.temperature ?? 1 }) { logProbabilities in
            let n = Float(logProbabilities.count)
            return (0..<logProbabilities[0].count).map { i in logProbabilities.reduce(0) { $0 + Foundation.exp($1[i]) } / n }
        }
    }

    private func combined(_ features: [[Float]], head: KeyPath<BackboneHeads, Linear?>, temperature: (Int) -> Float,
                          combine: ([[Float]]) -> [Float]) throws(ModelError) -> [Float]? {
        guard features.count == backbones.count else {
            throw .badInput(detail: "features of \(features.count) backbones for a model of \(backbones.count)")
        }
        var logProbabilities: [[Float]] = []
        for (b, x) in features.enumerated() {
            guard let linear = heads[b][keyPath: head] else { return nil }
            let views = x.count / linear.inputs
            guard views >= 1, x.count == views * linear.inputs else {
                throw .badInput(detail: "\(x.count) features are not whole views of \(linear.inputs)")
            }
            logProbabilities.append(Self.logSoftmax(try linear.averaged(x, views: views), temperature: temperature(b)))
        }
        return combine(logProbabilities)
    }

    public static func softmax(_ logits: [Float], temperature: Float = 1) -> [Float] {
        Softmax.probabilities(logits, temperature: temperature)
    }

    public static func logSoftmax(_ logits: [Float], temperature: Float = 1) -> [Float] {
        Softmax.logProbabilities(logits, temperature: temperature)
    }
}

extension Collection where Element == Label {
    /// For each of these breed labels, the indices of the ImageNet head's `labels` of the same breed: dog classes
    /// whose key is the label's own or one of its `imagenetKeys`. Empty for a breed the ImageNet head does not know.
    public func imagenetCounterparts(in labels: [Label]) -> [[Int]] {
        var index: [String: Int] = [:]
        for (i, label) in labels.enumerated() where label.isDog { index[label.key] = index[label.key] ?? i }
        return map { breed in Array(Set(([breed.key] + (breed.imagenetKeys ?? [])).compactMap { index[$0] })).sorted() }
    }
}

/// Indices into the ImageNet head's labels: for each breed label, those of the same breed
/// (`imagenetCounterparts`); and the dog classes that are none of the model's breeds.
struct BreedCounterparts: Sendable {
    let imagenet: [[Int]]
    let elsewhere: [Int]

    init(breeds: [Label], imagenet labels: [Label]) {
        imagenet = breeds.imagenetCounterparts(in: labels)
        let claimed = Set(imagenet.joined())
        elsewhere = labels.indices.filter { labels[$0].isDog && !claimed.contains($0) }
    }
}
