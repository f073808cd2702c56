import Foundation
import DedogFiles
import DedogNN

/// Where the dogs are: a small head on one backbone's last feature maps (frozen, the ones classify computes
/// anyway), in the manner of CenterNet (Zhou et al., "Objects as Points", 2019). Every cell of the grid (8×8 to
/// 10×10 over the network's square) goes through the same two layers, 1280 features → `hidden` (ReLU) → 5:
///
/// - a **centre score** (a logit): whether a dog's centre falls in this cell;
/// - the centre's **offset** from the cell's middle, in cells (x, then y);
/// - the dog's **width and height**, as logarithms of their share of the square.
///
/// A dog is a cell whose score is the highest of its 3×3 neighbours and at least `threshold` — or at least
/// `apartThreshold` when its box stands apart from every dog's found before it (a second dog beside the first is
/// scored lower than a part of one dog, and lies elsewhere); boxes of one dog
/// found from two cells are merged by non-maximum suppression: a box is dropped when it overlaps a better one by
/// more than `overlap` (intersection over union) or lies inside it by more than `inside` of its area. Trained by `DedogTrain.DetectorTraining`.
public struct DetectorDescription: Codable, Sendable, Equatable {
    /// The backbone whose head feature maps it reads (its view that is not mirrored).
    public var backbone: Int
    /// The hidden layer's width.
    public var hidden: Int
    /// Its tensors: `<prefix>hidden.weight` [hidden × 1280], `.bias`, `<prefix>output.weight` [5 × hidden], `.bias`.
    public var tensorPrefix: String
    /// The centre score (a probability) from which a dog is reported.
    public var threshold: Float
    /// The lower score from which a box apart from every better one (`apart`) is a dog too.
    public var apartThreshold: Float
    /// Boxes overlapping a higher-scoring one by more than this (intersection over union) are the same dog…
    public var overlap: Float
    /// …and so are boxes with more than this share of their area inside a higher-scoring one. Of the one-dog
    /// validation photos' second boxes, most were a part of the dog (IoU 0.3–0.6 with the first box, 0.7–1 of
    /// them inside it); in Stanford Dogs' photos of several dogs, 4 % of pairs overlap by more than 0.4.
    public var inside: Float

    public init(backbone: Int, hidden: Int, tensorPrefix: String = "detector.", threshold: Float, apartThreshold: Float? = nil,
                overlap: Float = DetectorDescription.standardOverlap, inside: Float = DetectorDescription.standardInside) {
        self.inside = inside
        self.backbone = backbone
        self.hidden = hidden
        self.tensorPrefix = tensorPrefix
        self.threshold = threshold
        self.apartThreshold = apartThreshold ?? threshold
        self.overlap = overlap
    }

    public static let standardOverlap: Float = 0.4, standardInside: Float = 0.7

    /// Apart: overlapping by at most 0.2 (IoU), and at most half of either box inside the other.
    public static func apart(_ a: Detection, _ b: Detection) -> Bool {
        a.overlap(b) <= 0.2 && a.share(inside: b) <= 0.5 && b.share(inside: a) <= 0.5
    }

    /// The four tensor names, in file order.
    public var tensorNames: [String] {
        ["hidden.weight", "hidden.bias", "output.weight", "output.bias"].map { tensorPrefix + $0 }
    }

    /// The first field that does not hold for a model of `backbones` backbones, as (field, value, requirement).
    func problem(backbones: Int) -> (field: String, value: String, requirement: String)? {
        if !(0..<backbones).contains(backbone) { return ("backbone", "\(backbone)", "one of the model's \(backbones) backbones") }
        if !(1...4096).contains(hidden) { return ("hidden", "\(hidden)", "1 to 4096") }
        if tensorPrefix.isEmpty { return ("tensorPrefix", "empty", "a non-empty prefix") }
        if !(threshold.isFinite && threshold > 0 && threshold < 1) { return ("threshold", "\(threshold)", "between 0 and 1") }
        if !(apartThreshold.isFinite && apartThreshold > 0 && apartThreshold <= threshold) {
            return ("apartThreshold", "\(apartThreshold)", "above 0, at most the threshold")
        }
        if !(overlap.isFinite && overlap > 0 && overlap <= 1) { return ("overlap", "\(overlap)", "above 0, at most 1") }
        if !(inside.isFinite && inside > 0 && inside <= 1) { return ("inside", "\(inside)", "above 0, at most 1") }
        return nil
    }

    init?(quickly value: JSONValue) {
        guard let o = value.object, let backbone = o["backbone"]?.int, let hidden = o["hidden"]?.int,
              let prefix = o["tensorPrefix"]?.string, let threshold = o["threshold"]?.float, let apart = o["apartThreshold"]?.float,
              let overlap = o["overlap"]?.float, let inside = o["inside"]?.float else { return nil }
        self.init(backbone: backbone, hidden: hidden, tensorPrefix: prefix, threshold: threshold, apartThreshold: apart,
                  overlap: overlap, inside: inside)
    }
}

/// One dog found: its box in the backbone's square (0…1 of its side, x to the right, y down) and its score.
public struct Detection: Sendable, Equatable {
    public var x0, y0, x1, y1: Double
    public var score: Float

    public init(x0: Double, y0: Double, x1: Double, y1: Double, score: Float) {
        (self.x0, self.y0, self.x1, self.y1, self.score) = (x0, y0, x1, y1, score)
    }

    public var area: Double { max(0, x1 - x0) * max(0, y1 - y0) }

    /// The area this box shares with `other`.
    func intersection(_ other: Detection) -> Double {
        let w = min(x1, other.x1) - max(x0, other.x0), h = min(y1, other.y1) - max(y0, other.y0)
        return w > 0 && h > 0 ? w * h : 0
    }

    /// Intersection over union with `other`.
    public func overlap(_ other: Detection) -> Double {
        let inter = intersection(other)
        return inter > 0 ? inter / (area + other.area - inter) : 0
    }

    /// The share of this box's area inside `other`.
    public func share(inside other: Detection) -> Double {
        area > 0 ? intersection(other) / area : 0
    }
}

/// The detector's layers and how its outputs become boxes (see `DetectorDescription`).
public struct DogDetector: Sendable {
    public let description: DetectorDescription
    let hiddenLayer: Linear
    let outputLayer: Linear

    /// Values per cell the head gives: centre logit, x and y offsets, log width, log height.
    public static let outputs = 5

    public init(_ description: DetectorDescription, hiddenWeight: [Float], hiddenBias: [Float],
                outputWeight: [Float], outputBias: [Float]) throws(ModelError) {
        self.description = description
        hiddenLayer = try Linear(inputs: EfficientNetLite.featureCount, outputs: description.hidden, weight: hiddenWeight, bias: hiddenBias)
        outputLayer = try Linear(inputs: description.hidden, outputs: Self.outputs, weight: outputWeight, bias: outputBias)
    }

    /// The raw outputs of every cell of image `image` of `maps`, [cell × 5], cells in row order.
    public func cellOutputs(_ maps: FeatureMaps, image: Int = 0) throws(ModelError) -> [Float] {
        let width = EfficientNetLite.featureCount, cells = maps.cells
        guard maps.values.count >= (image + 1) * cells * width else {
            throw .badInput(detail: "feature maps hold no image \(image)")
        }
        var hidden = try hiddenLayer(Array(maps.values[(image * cells * width)..<((image + 1) * cells * width)]), batch: cells)
        for i in hidden.indices where hidden[i] < 0 { hidden[i] = 0 }
        return try outputLayer(hidden, batch: cells)
    }

    /// The dogs in image `image` of `maps`, best first: those scoring at least the threshold, and those scoring at
    /// least `apartThreshold` apart from every better one.
    public func detect(_ maps: FeatureMaps, image: Int = 0) throws(ModelError) -> [Detection] {
        Self.dogs(try candidates(maps, image: image, minimumScore: description.apartThreshold),
                  threshold: description.threshold, apartThreshold: description.apartThreshold)
    }

    /// Every box scoring at least `minimumScore` after non-maximum suppression, best first: candidates, e.g. to
    /// rank for average precision.
    public func candidates(_ maps: FeatureMaps, image: Int = 0, minimumScore: Float) throws(ModelError) -> [Detection] {
        Self.decode(try cellOutputs(maps, image: image), rows: maps.rows, columns: maps.columns,
                    minimumScore: minimumScore, overlap: Double(description.overlap), inside: Double(description.inside))
    }

    /// Of `candidates` (best first), those at or above `threshold`, and those at or above `apartThreshold` apart
    /// from every dog kept before them.
    public static func dogs(_ candidates: [Detection], threshold: Float, apartThreshold: Float) -> [Detection] {
        var kept: [Detection] = []
        for d in candidates where d.score >= threshold || (d.score >= apartThreshold && kept.allSatisfy { DetectorDescription.apart($0, d) }) {
            kept.append(d)
        }
        return kept
    }

    static func sigmoid(_ x: Float) -> Float { 1 / (1 + Foundation.exp(-x)) }

    /// Boxes from a grid's outputs: the cells whose score is the highest of their 3×3 neighbours and at least
    /// `minimumScore`, best first, those overlapping a better one by more than `overlap` or lying inside it by more
    /// than `inside` dropped.
    public static func decode(_ out: [Float], rows: Int, columns: Int, minimumScore: Float, overlap: Double,
                              inside: Double) -> [Detection] {
        guard out.count == rows * columns * outputs else { return [] }
        let score = (0..<(rows * columns)).map { sigmoid(out[$0 * outputs]) }
        var found: [Detection] = []
        for r in 0..<rows {
            for c in 0..<columns {
                let s = score[r * columns + c]
                guard s >= minimumScore, s.isFinite else { continue }
                var isPeak = true
                for dr in -1...1 {
                    for dc in -1...1 where (dr, dc) != (0, 0) {
                        let rr = r + dr, cc = c + dc
                        guard (0..<rows).contains(rr), (0..<columns).contains(cc) else { continue }
                        let t = score[rr * columns + cc]
                        // Ties go to the first cell in row order.
                        if t > s || (t == s && rr * columns + cc < r * columns + c) { isPeak = false }
                    }
                }
                guard isPeak else { continue }
                let o = (r * columns + c) * outputs
                let cx = (Double(c) + 0.5 + Double(out[o + 1])) / Double(columns)
                let cy = (Double(r) + 0.5 + Double(out[o + 2])) / Double(rows)
                let w = Foundation.exp(Double(min(out[o + 3], 2))), h = Foundation.exp(Double(min(out[o + 4], 2)))
                guard cx.isFinite, cy.isFinite, w.isFinite, h.isFinite else { continue }
                found.append(Detection(x0: cx - w / 2, y0: cy - h / 2, x1: cx + w / 2, y1: cy + h / 2, score: s))
            }
        }
        return suppressed(found.sorted { $0.score > $1.score }, overlap: overlap, inside: inside)
    }

    /// `found` (best first) without the boxes that overlap a better one by more than `overlap` or lie inside it
    /// by more than `inside` of their area: non-maximum suppression.
    public static func suppressed(_ found: [Detection], overlap: Double, inside: Double) -> [Detection] {
        var kept: [Detection] = []
        for d in found where !kept.contains(where: { $0.overlap(d) > overlap || d.share(inside: $0) > inside }) { kept.append(d) }
        return kept
    }
}
