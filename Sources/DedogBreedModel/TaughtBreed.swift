import Foundation
import DedogNN

/// A breed taught from a few photos instead of trained: a row added to each backbone's breed head, made from the
/// photos ("imprinted"), so that the model names it from then on among its trained breeds.
///
/// On each backbone the new row is the row the trained head would give a breed whose photos' mean feature direction
/// is μ̂ (`mapped`: the head's own map from its breeds' prototypes to their rows), scaled to the mean length of the
/// head's trained rows, k. Its bias puts the new breed's logit on another photo of the breed where the trained breeds'
/// logits are on photos like theirs (the median over trained breeds c of w_c·p_c·n̄ + b_c, with p_c the breed's
/// prototype and n̄ the typical length of a photo's features): such a photo lies at a cosine ρ to μ̂, so the bias is
/// that median − k·n̄·ρ·(the mapped direction's cosine to μ̂). ρ is how alike the taught photos are, each to the mean
/// of the others (leave-one-out; 0.66 for a single photo, the typical value), moved `towardsOne` of the way to 1: the
/// full leave-one-out value named 98 % of other photos of the breed but changed 9 % of other breeds' answers; 0.3 of
/// the way to 1, 82 % and 1.3 % (Stanford Dogs breeds held out of a Lite1+Lite2 model, 3 train photos a breed, its
/// validation photos; the row then the mean's). Since a taught breed that comes first for a photo unlike its photos
/// gives way (`Model.decide`), its row can reach further: taught to a model of Stanford's 120 from 3 "real photos"
/// of breeds the ImageNet head never saw (`scripts/bench-teaching`, two draws kept for choosing), the mapped row at
/// 0.25 named 79.5 % and changed 0.6 % of other answers, 0.15 81.2 % and 0.9 %, 0.1 81.8 % and 1.2 %: 0.15 names the
/// most while changing about 1 % of other answers, which leaves room for the draw (docs/accuracy.md). The mean's row
/// at 0.25, before: 78.4 % and 1.2 %.
public enum TaughtBreed {
    /// The head row, bias and prototype of a breed taught from photos whose features on one backbone are
    /// `photos` (each its views averaged, 1280 numbers), for a head of `weight` [breeds × 1280], `bias` [breeds] and
    /// `prototypes` [breeds × 1280] (unit vectors; nil: the rows' own directions stand in for them).
    public static func row(photos: [[Float]], weight: [Float], bias: [Float],
                           prototypes: [Float]?) throws(ModelError) -> (weight: [Float], bias: Float, prototype: [Float]) {
        let width = EfficientNetLite.featureCount, breeds = bias.count
        guard !photos.isEmpty, photos.allSatisfy({ $0.count == width }), breeds > 0, weight.count == breeds * width,
              prototypes.map({ $0.count == weight.count }) ?? true else {
            throw .badInput(detail: "a taught breed needs photos of \(width) features and a head of \(breeds) rows")
        }
        let units = photos.map { Model.direction($0) }
        let mean = Model.direction(units.flatMap { $0 })
        let length = photos.map { Self.norm($0[...]) }.reduce(0, +) / Float(photos.count)
        var alike = singlePhotoLikeness
        if units.count > 1 {
            alike = units.indices.map { i in
                let others = Model.direction(units.indices.filter { $0 != i }.flatMap { units[$0] })
                return zip(units[i], others).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            }.reduce(0, +) / Float(units.count)
        }
        // Photos more alike than a breed's photos typically are (one photographer's frame, one session, a photo and
        // its own crop) say more about how they were taken than about the breed: the likeness is capped at the
        // typical value, or the row would reach few of the breed's other photos (an American Bulldog taught from
        // three framed owners' photos, likeness 0.835: top breed of 29 % of its other photos, 68 % capped;
        // scripts/experiments/taught_likeness.py, docs/accuracy.md).
        alike = min(alike, Self.singlePhotoLikeness)
        let rho = alike + towardsOne * (1 - alike)
        var lengths: [Float] = [], logits: [Float] = [], breedDirections: [Float] = []
        breedDirections.reserveCapacity(weight.count)
        for c in 0..<breeds {
            let row = weight[(c * width)..<((c + 1) * width)]
            let rowLength = Self.norm(row)
            lengths.append(rowLength)
            let prototype = prototypes.map { Array($0[(c * width)..<((c + 1) * width)]) } ?? row.map { $0 / max(rowLength, 1e-12) }
            breedDirections.append(contentsOf: prototype)
            logits.append(zip(row, prototype).reduce(Float(0)) { $0 + $1.0 * $1.1 } * length + bias[c])
        }
        var direction = try mapped(mean, weight: weight, prototypes: breedDirections, breeds: breeds)
        // The row's logit on a photo of the breed: its cosine to the mean (ρ) carried over to the mapped direction
        // (0.54–0.65 in the bundled heads, whose rows lie at 0.38–0.41 to their prototypes). A head whose map turns
        // the mean away (no trained head does) keeps the mean's own row.
        var along = zip(direction, mean).reduce(Float(0)) { $0 + $1.0 * $1.1 }
        if !(along >= Self.leastAlong) { (direction, along) = (mean, 1) }
        let k = lengths.reduce(0, +) / Float(breeds)
        let target = logits.sorted()[breeds / 2]
        return (direction.map { $0 * k }, target - k * length * rho * along, mean)
    }

    /// The direction the trained head would give a breed whose photos' mean direction is `mean` (Qiao et al.,
    /// "Few-shot image recognition by predicting parameters from activations", CVPR 2018): the linear map M that
    /// takes the trained breeds' prototypes p_c to their rows w_c (M p_c ≈ w_c), fitted by ridge regression shrunk
    /// towards s·I (s the mean w_c·p_c): M = (WᵀP + λsI)(PᵀP + λI)⁻¹, λ = `mapRidge` · Σ|p_c|² / 1280. A trained
    /// row is not its breed's mean: it turns away from what the breed shares with its neighbours (a terrier's row
    /// from what all terriers look like); the mean of three photos does not, and the row made from it alone named
    /// other breeds' photos as the taught one. Computed through the breeds' own C×C system (M μ = Wᵀ(P v) + λ s v,
    /// v = (μ − Pᵀ(PPᵀ + λI)⁻¹ P μ) / λ), never the 1280×1280 one. On `scripts/bench-teaching`'s choosing draws
    /// (`scripts/experiments/teaching_levers.py`, the top breed only): the taught breeds' other photos 84.7 → 86.6 %,
    /// other breeds' top breed unchanged 96.8 → 99.4 % (docs/accuracy.md).
    @_spi(Testing) public static func mapped(_ mean: [Float], weight: [Float], prototypes p: [Float], breeds n: Int,
                                             ridge: Double = mapRidge) throws(ModelError) -> [Float] {
        let width = mean.count
        let mu = mean.map(Double.init)
        func row(_ m: [Float], _ c: Int) -> ArraySlice<Float> { m[(c * width)..<((c + 1) * width)] }
        func dot(_ a: [Double], _ b: [Double]) -> Double { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        let rows = (0..<n).map { row(p, $0).map(Double.init) }
        let s = (0..<n).reduce(0) { $0 + dot(row(weight, $1).map(Double.init), rows[$1]) } / Double(n)
        // PPᵀ, whose diagonal sums to Σ|p_c|², then (PPᵀ + λI) a = P μ and v = (μ − Pᵀ a) / λ.
        var gram = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                let g = dot(rows[i], rows[j])
                gram[i * n + j] = g
                gram[j * n + i] = g
            }
        }
        let lambda = ridge * (0..<n).reduce(0) { $0 + gram[$1 * n + $1] } / Double(width)
        for i in 0..<n { gram[i * n + i] += lambda }
        guard lambda > 0, let a = Self.solvePositiveDefinite(gram, rows.map { dot($0, mu) }) else {
            throw .badInput(detail: "a taught breed needs a head whose prototypes are not all zero")
        }
        var v = mu
        for c in 0..<n { for k in 0..<width { v[k] -= rows[c][k] * a[c] } }
        v = v.map { $0 / lambda }
        var out = v.map { lambda * s * $0 }
        for c in 0..<n {
            let coefficient = dot(rows[c], v)
            for (k, w) in row(weight, c).enumerated() { out[k] += Double(w) * coefficient }
        }
        return Model.direction(out.map(Float.init))
    }

    /// x with A x = b for a symmetric positive definite A [n × n] (Cholesky); nil where A is not.
    static func solvePositiveDefinite(_ a: [Double], _ b: [Double]) -> [Double]? {
        let n = b.count
        var l = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var sum = a[i * n + j]
                for k in 0..<j { sum -= l[i * n + k] * l[j * n + k] }
                if i == j {
                    guard sum > 0 else { return nil }
                    l[i * n + i] = sum.squareRoot()
                } else {
                    l[i * n + j] = sum / l[j * n + j]
                }
            }
        }
        var y = b
        for i in 0..<n {
            for k in 0..<i { y[i] -= l[i * n + k] * y[k] }
            y[i] /= l[i * n + i]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for k in (i + 1)..<n { y[i] -= l[k * n + i] * y[k] }
            y[i] /= l[i * n + i]
        }
        return y
    }

    /// What a taught breed's prototype cosine is multiplied by, so that its photos are as alike to it as a trained
    /// breed's photos are to theirs, for the threshold of "a breed this model does not know" (which was set on
    /// trained breeds). A trained prototype averages a hundred photos or more; a taught one, `n`. If a breed's
    /// photos lie at a cosine `a` to the breed's true direction and otherwise apart, a new photo lies at `a` to the
    /// mean of many, but at a² / √(a² + (1 − a²)/n) to the mean of n: with a = `trainedLikeness`, 0.68 for three
    /// photos instead of 0.76. Without this, "a breed this model does not know" took 18 % of a taught breed's
    /// other photos whose top breed was right (227 of 1,286 in `scripts/bench-teaching`).
    public static func similarityScale(photos n: Int) -> Float {
        let a2 = trainedLikeness * trainedLikeness
        return (a2 + (1 - a2) / Float(max(1, n))).squareRoot() / trainedLikeness
    }

    /// The typical cosine of a photo to its own trained breed's prototype: the median similarity of 240 photos of
    /// Stanford breeds (made-up "real photos", `scripts/experiments/make_teaching_sets.py`) in a model of Stanford's
    /// 120 breeds was 0.756. It agrees with `singlePhotoLikeness` (0.66, measured apart): three photos each at 0.756 to
    /// their breed's direction are at 0.64 to the mean of the other two.
    @_spi(Testing) public static let trainedLikeness: Float = 0.756

    /// How far the leave-one-out likeness is moved towards 1 (see the type's comment).
    static let towardsOne: Float = 0.15
    /// The ridge of the map from a breed's mean to its row, in units of the prototypes' mean squared length per
    /// feature (`mapped`): 0.3 reached more of the taught breeds' photos and changed more of others', 3 and 10 fewer
    /// of both (`scripts/experiments/teaching_levers.py --ridge`, the choosing draws).
    @_spi(Testing) public static let mapRidge: Double = 1
    /// The least cosine between the mapped direction and the photos' mean that is taken (`row`).
    static let leastAlong: Float = 0.2
    /// The typical leave-one-out likeness of three photos of a breed, for a breed taught from one.
    static let singlePhotoLikeness: Float = 0.66

    static func norm(_ x: ArraySlice<Float>) -> Float {
        x.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
    }
}

extension ModelFile {
    /// One backbone's breed head as written by `replacingBreedHeads`.
    public struct Head: Sendable {
        public var weight: [Float]
        public var bias: [Float]
        public var prototypes: [Float]?

        public init(weight: [Float], bias: [Float], prototypes: [Float]?) {
            self.weight = weight
            self.bias = bias
            self.prototypes = prototypes
        }
    }

    /// Each backbone's breed head, prototypes included, as stored in `file` (widened to floats).
    public static func breedHeads(of file: SafeTensors, model: ModelDescription) throws(ModelError) -> [Head] {
        let width = EfficientNetLite.featureCount
        var heads: [Head] = []
        for backbone in model.backbones {
            guard let head = backbone.breedHead else {
                throw .invalidMetadata(file: file.file, detail: "the model has no breed head of its own")
            }
            let n = head.labels.count
            heads.append(Head(weight: try file.floats(head.weight, shape: [n, width]), bias: try file.floats(head.bias, shape: [n]),
                              prototypes: try backbone.prototypes.map { name throws(ModelError) in try file.floats(name, shape: [n, width]) }))
        }
        return heads
    }

    /// Writes `file` again with `model` as its description (whose breed heads' labels match `heads`), each
    /// backbone's breed head and prototypes replaced by `heads[b]`, and its confirmed photos by `photos`; every
    /// other tensor is copied as stored. Atomic, and loaded back first, as `write` does.
    public static func replacingBreedHeads(of file: SafeTensors, model: ModelDescription, heads: [Head],
                                           confirmedPhotos photos: ConfirmedPhotos, to url: URL) throws(ModelError) {
        guard heads.count == model.backbones.count, photos.backboneCount == model.backbones.count else {
            throw .invalidMetadata(file: url.path, detail: "heads of \(heads.count) backbones given for a model of \(model.backbones.count)")
        }
        var model = model
        let replaced = Set(model.backbones.flatMap { b in
            [b.breedHead?.weight, b.breedHead?.bias, b.prototypes, b.confirmedPhotos].compactMap { $0 }
        })
        var tensors: [Tensor] = file.entries.keys.sorted().filter { !replaced.contains($0) }.compactMap { name in
            file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) }
        }
        model.confirmedPhotos = photos.isEmpty ? nil : photos.photos
        let width = EfficientNetLite.featureCount
        for (b, head) in heads.enumerated() {
            let prefix = model.backbones[b].tensorPrefix
            guard var description = model.backbones[b].breedHead else {
                throw .invalidMetadata(file: url.path, detail: "backbone \(b) of the model to write has no breed head")
            }
            let n = description.labels.count
            guard head.weight.count == n * width, head.bias.count == n, head.prototypes.map({ $0.count == n * width }) ?? true else {
                throw .labelCountMismatch(file: url.path, head: "breed", labels: n, outputs: head.bias.count)
            }
            description.weight = prefix + breedWeight
            description.bias = prefix + breedBias
            model.backbones[b].breedHead = description
            tensors.append((description.weight, "F32", [n, width], raw(head.weight)))
            tensors.append((description.bias, "F32", [n], raw(head.bias)))
            model.backbones[b].prototypes = nil
            if let prototypes = head.prototypes {
                model.backbones[b].prototypes = prefix + Self.prototypes
                tensors.append((prefix + Self.prototypes, "F32", [n, width], raw(prototypes)))
            }
            model.backbones[b].confirmedPhotos = nil
            if !photos.isEmpty { tensors.append(confirmedPhotoTensor(photos, backbone: b, in: &model)) }
        }
        try write(model, tensors: tensors, to: url)
    }
}

extension TaughtBreed {
    /// Writes the model in `file` (described by `stored`) again as `model` says: its trained breeds' rows as stored,
    /// in `model`'s order, and a row made anew for each of its taught breeds (`Label.taught`) from that breed's
    /// photos among `confirmed` (the file keeps their features as directions; their length is the label's
    /// `featureLength`). Taught rows are made against the trained rows alone, so a breed taught again from the
    /// same photos gets the same row. Atomic, as `ModelFile.replacingBreedHeads`.
    public static func write(_ file: SafeTensors, stored: ModelDescription, as model: ModelDescription,
                             confirmed: ConfirmedPhotos, to url: URL) throws(ModelError) {
        let width = EfficientNetLite.featureCount
        let storedHeads = try ModelFile.breedHeads(of: file, model: stored)
        guard model.backbones.count == stored.backbones.count, confirmed.backboneCount == stored.backbones.count else {
            throw .badInput(detail: "a model of \(model.backbones.count) backbones written over one of \(stored.backbones.count)")
        }
        var heads: [ModelFile.Head] = []
        for (b, old) in storedHeads.enumerated() {
            let storedLabels = stored.backbones[b].breedHead?.labels ?? []
            let wanted = model.backbones[b].breedHead?.labels ?? []
            let rows = { (source: [Float], i: Int) in source[(i * width)..<((i + 1) * width)] }
            // The trained rows, which taught rows are measured against.
            let trained = storedLabels.indices.filter { storedLabels[$0].taught == nil }
            let trainedWeight = trained.flatMap { rows(old.weight, $0) }, trainedBias = trained.map { old.bias[$0] }
            let trainedPrototypes = old.prototypes.map { p in trained.flatMap { rows(p, $0) } }
            var head = ModelFile.Head(weight: [], bias: [], prototypes: old.prototypes == nil ? nil : [])
            for label in wanted {
                if let taught = label.taught {
                    let photos = confirmed.photos.indices.filter { confirmed.photos[$0].label == label.key }
                        .map { confirmed.features(of: $0, backbone: b).map { $0 * taught.featureLength } }
                    guard !photos.isEmpty else {
                        throw .badInput(detail: "the taught breed \"\(label.name)\" has no confirmed photos to be made from")
                    }
                    let row = try Self.row(photos: photos, weight: trainedWeight, bias: trainedBias, prototypes: trainedPrototypes)
                    head.weight += row.weight
                    head.bias.append(row.bias)
                    head.prototypes? += row.prototype
                } else {
                    guard let i = storedLabels.firstIndex(where: { $0.key == label.key && $0.taught == nil }) else {
                        throw .badInput(detail: "the breed \"\(label.name)\" is neither trained in the model nor taught")
                    }
                    head.weight += rows(old.weight, i)
                    head.bias.append(old.bias[i])
                    if let p = old.prototypes { head.prototypes? += rows(p, i) }
                }
            }
            heads.append(head)
        }
        try ModelFile.replacingBreedHeads(of: file, model: model, heads: heads, confirmedPhotos: confirmed, to: url)
    }

    /// The mean length of each backbone's features of `photos` (`photos[p][b]`: photo p's features on backbone b,
    /// its views one after another), each photo's views averaged first, as the head sees them.
    public static func featureLengths(_ photos: [[[Float]]], backbones: Int) -> [Float] {
        let width = EfficientNetLite.featureCount
        return (0..<backbones).map { b in
            let lengths = photos.map { views in
                let n = max(1, views[b].count / width)
                return Self.norm((0..<width).map { k in (0..<n).reduce(Float(0)) { $0 + views[b][$1 * width + k] } / Float(n) }[...])
            }
            return lengths.reduce(0, +) / Float(max(1, lengths.count))
        }
    }
}
