import Foundation
import DedogFiles
import DedogNN

/// Where the dogs are: a small neck and head (`FeaturePyramidHead`) on two inner feature maps of one backbone
/// (frozen, computed by the pass classify makes anyway): its stride-16 map (17×17 cells over the default model's
/// Lite1 square, 16×16 for the `fast` model's Lite0) and its stride-32 map. Every cell of the fine grid gives 5
/// numbers:
///
/// - a **centre score** (a logit): whether a dog's centre falls in this cell (CenterNet: Zhou et al., "Objects as
///   Points", 2019);
/// - the distances from the cell's middle to the box's **left, top, right and bottom** sides, as logarithms of
///   cells (FCOS: Tian et al., 2019): learnt at every cell near a dog's centre, so a peak one cell off still
///   draws the dog's box.
///
/// A dog is a cell whose score is the highest of its 3×3 neighbours and at least `threshold` — or at least
/// `apartThreshold` when its box stands apart from every dog's found before it; boxes of one dog found from two
/// cells are merged by non-maximum suppression: a box is dropped when it overlaps a better one by more than
/// `overlap` (intersection over union) or lies inside it by more than `inside` of its area. All four are chosen
/// on validation photos (`scripts/train_dog_detector.py`).
///
/// A detector belongs to its backbone, not to a breed model: the backbones are frozen, so the one trained for
/// Lite1 serves every model whose first backbone is Lite1 (`dedog train` puts it into the model it writes).
public struct DetectorDescription: Codable, Sendable, Equatable {
    /// The model's backbone whose maps it reads (its view that is not mirrored).
    public var backbone: Int
    /// The architecture it was trained on (`efficientnet-lite1`): it reads no other.
    public var architecture: String
    /// The neck's width and its number of residual blocks.
    public var channels: Int
    public var blocks: Int
    /// Its tensors: `<prefix>coarse.weight`, … (`tensorNames`).
    public var tensorPrefix: String
    /// The centre score (a probability) from which a dog is reported.
    public var threshold: Float
    /// The lower score from which a box apart from every better one (`apart`) is a dog too.
    public var apartThreshold: Float
    /// Boxes overlapping a higher-scoring one by more than this (intersection over union) are the same dog…
    public var overlap: Float
    /// …and so are boxes with more than this share of their area inside a higher-scoring one.
    public var inside: Float

    public init(backbone: Int = 0, architecture: String, channels: Int, blocks: Int, tensorPrefix: String = "detector.",
                threshold: Float, apartThreshold: Float? = nil, overlap: Float, inside: Float) {
        (self.backbone, self.architecture, self.channels, self.blocks, self.tensorPrefix) = (backbone, architecture, channels, blocks, tensorPrefix)
        (self.threshold, self.apartThreshold, self.overlap, self.inside) = (threshold, apartThreshold ?? threshold, overlap, inside)
    }

    /// Apart: overlapping by at most 0.2 (IoU), and at most half of either box inside the other.
    public static func apart(_ a: Detection, _ b: Detection) -> Bool {
        a.overlap(b) <= 0.2 && a.share(inside: b) <= 0.5 && b.share(inside: a) <= 0.5
    }

    /// The layers' names, in file order: each a `.weight` and a `.bias` tensor.
    public var layerNames: [String] {
        ["coarse", "fine"] + (0..<blocks).flatMap { ["block\($0).depthwise", "block\($0).pointwise"] } + ["hidden", "output"]
    }

    /// Every tensor's name, in file order.
    public var tensorNames: [String] { layerNames.flatMap { [tensorPrefix + $0 + ".weight", tensorPrefix + $0 + ".bias"] } }

    /// Each tensor's shape, in `tensorNames`' order, on `backbone` (the channels of its `pyramidBlocks`' outputs).
    public func tensorShapes(on backbone: Backbone) -> [[Int]] {
        let (fine, coarse) = backbone.pyramidBlocks
        let fineChannels = backbone.outChannels(ofBlock: fine) ?? 0, coarseChannels = backbone.outChannels(ofBlock: coarse) ?? 0
        let c = channels, k = FeaturePyramidHead.kernel
        return [[c, coarseChannels], [c], [c, fineChannels], [c]]
            + (0..<blocks).flatMap { _ in [[c, k * k], [c], [c, c], [c]] }
            + [[c, c], [c], [DogDetector.outputs, c], [DogDetector.outputs]]
    }

    /// The first field that does not hold for a model of `backbones` (architectures), as (field, value, requirement).
    func problem(backbones: [String]) -> (field: String, value: String, requirement: String)? {
        if !backbones.indices.contains(backbone) { return ("backbone", "\(backbone)", "one of the model's \(backbones.count) backbones") }
        if architecture != backbones[backbone] {
            return ("architecture", architecture, "the architecture of backbone \(backbone) (\(backbones[backbone]))")
        }
        if !(1...1024).contains(channels) { return ("channels", "\(channels)", "1 to 1024") }
        if !(0...16).contains(blocks) { return ("blocks", "\(blocks)", "0 to 16") }
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
        guard let o = value.object, let backbone = o["backbone"]?.int, let architecture = o["architecture"]?.string,
              let channels = o["channels"]?.int, let blocks = o["blocks"]?.int,
              let prefix = o["tensorPrefix"]?.string, let threshold = o["threshold"]?.float, let apart = o["apartThreshold"]?.float,
              let overlap = o["overlap"]?.float, let inside = o["inside"]?.float else { return nil }
        self.init(backbone: backbone, architecture: architecture, channels: channels, blocks: blocks, tensorPrefix: prefix,
                  threshold: threshold, apartThreshold: apart, overlap: overlap, inside: inside)
    }

    private enum CodingKeys: String, CodingKey {
        case backbone, architecture, channels, blocks, tensorPrefix, threshold, apartThreshold, overlap, inside
    }
}

/// The detector of model files of format 8 (a 1×1 head on the last feature map, before issue 60): still read, so
/// that such a file loads, but not run — the model then locates dogs as a model without a detector does, until it
/// is trained again (`dedog train` gives it the backbone's detector).
public struct CellDetectorDescription: Codable, Sendable, Equatable {
    public var hidden: Int
    public var tensorPrefix: String
    /// The rest of its fields, kept as they were.
    var backbone: Int, threshold: Float, apartThreshold: Float, overlap: Float, inside: Float

    /// Its four tensors.
    public var tensorNames: [String] {
        ["hidden.weight", "hidden.bias", "output.weight", "output.bias"].map { tensorPrefix + $0 }
    }

    init?(quickly value: JSONValue) {
        guard let o = value.object, let hidden = o["hidden"]?.int, let prefix = o["tensorPrefix"]?.string,
              let backbone = o["backbone"]?.int, let threshold = o["threshold"]?.float, let apart = o["apartThreshold"]?.float,
              let overlap = o["overlap"]?.float, let inside = o["inside"]?.float else { return nil }
        (self.hidden, self.tensorPrefix, self.backbone, self.threshold, self.apartThreshold, self.overlap, self.inside)
            = (hidden, prefix, backbone, threshold, apart, overlap, inside)
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
    let neck: FeaturePyramidHead
    /// The backbone blocks whose outputs it reads: stride 16, then stride 32.
    public let blocks: (fine: Int, coarse: Int)

    /// Values per cell the head gives: centre logit, then the distances to the left, top, right and bottom sides.
    public static let outputs = 5

    /// `tensors`: each layer's weight and bias, in `description.tensorNames`' order, on backbone `backbone`.
    public init(_ description: DetectorDescription, backbone: Backbone, tensors: [[Float]]) throws(ModelError) {
        self.description = description
        blocks = backbone.pyramidBlocks
        guard let fineChannels = backbone.outChannels(ofBlock: blocks.fine),
              let coarseChannels = backbone.outChannels(ofBlock: blocks.coarse),
              tensors.count == description.tensorNames.count else {
            throw .badInput(detail: "the detector needs \(description.tensorNames.count) tensors, not \(tensors.count)")
        }
        func layer(_ i: Int) -> (weight: [Float], bias: [Float]) { (tensors[2 * i], tensors[2 * i + 1]) }
        let n = description.blocks
        let weights = FeaturePyramidHead.Weights(coarse: layer(0), fine: layer(1),
                                                 blocks: (0..<n).map { (layer(2 + 2 * $0), layer(3 + 2 * $0)) },
                                                 hidden: layer(2 + 2 * n), output: layer(3 + 2 * n))
        neck = try FeaturePyramidHead(fineChannels: fineChannels, coarseChannels: coarseChannels, channels: description.channels,
                                      outputs: Self.outputs, weights: weights)
    }

    /// The outputs of every cell of the fine grid, [cell × 5], cells in row order: the first image's, averaged with
    /// the mirrored view's (its grid flipped back, its left and right distances swapped) where `maps` has one — the
    /// pass classify makes for a backbone that averages the mirror image has it, and the two views together score
    /// dogs more surely (on the held-out photos, box AP at 0.5:0.95 +0.02 to +0.03, and more photos of several
    /// dogs seen as several at the same splits; `scripts/train_dog_detector.py`).
    public func cellOutputs(_ maps: PyramidMaps) throws(ModelError) -> [Float] {
        let own = try outputs(maps, image: 0)
        guard maps.mirrored else { return own }
        let other = try outputs(maps, image: 1), columns = maps.fine.columns, n = Self.outputs
        var out = own
        for r in 0..<maps.fine.rows {
            for c in 0..<columns {
                let o = (r * columns + c) * n, m = (r * columns + columns - 1 - c) * n
                // Centre, left, top, right, bottom: the mirror's left is the photo's right.
                for (k, from) in [0, 3, 2, 1, 4].enumerated() { out[o + k] = (own[o + k] + other[m + from]) / 2 }
            }
        }
        return out
    }

    /// The neck's outputs of image `image` of `maps` alone.
    @_spi(Testing) public func outputs(_ maps: PyramidMaps, image: Int) throws(ModelError) -> [Float] {
        let (f, c) = (maps.fine, maps.coarse)
        guard image < f.images, image < c.images else { throw .badInput(detail: "feature maps hold no image \(image)") }
        return try neck(fine: f.image(image), rows: f.rows, columns: f.columns, coarse: c.image(image), coarseRows: c.rows,
                        coarseColumns: c.columns)
    }

    /// The dogs in `maps`' photo, best first: those scoring at least the threshold, and those scoring at least
    /// `apartThreshold` apart from every better one.
    public func detect(_ maps: PyramidMaps) throws(ModelError) -> [Detection] {
        Self.dogs(try candidates(maps, minimumScore: description.apartThreshold),
                  threshold: description.threshold, apartThreshold: description.apartThreshold)
    }

    /// Every box scoring at least `minimumScore` after non-maximum suppression, best first: candidates, e.g. to
    /// rank for average precision.
    public func candidates(_ maps: PyramidMaps, minimumScore: Float) throws(ModelError) -> [Detection] {
        Self.decode(try cellOutputs(maps), rows: maps.fine.rows, columns: maps.fine.columns,
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
    /// `minimumScore`, each with the box its own distances give, best first, those overlapping a better one by more
    /// than `overlap` or lying inside it by more than `inside` dropped.
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
                // Distances to the sides from the cell's middle, in cells (e^4 = 55 cells at most).
                let o = (r * columns + c) * outputs
                let d = (1...4).map { Foundation.exp(Double(min(out[o + $0], 4))) }
                let mx = Double(c) + 0.5, my = Double(r) + 0.5
                let box = Detection(x0: (mx - d[0]) / Double(columns), y0: (my - d[1]) / Double(rows),
                                    x1: (mx + d[2]) / Double(columns), y1: (my + d[3]) / Double(rows), score: s)
                guard [box.x0, box.y0, box.x1, box.y1].allSatisfy(\.isFinite) else { continue }
                found.append(box)
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

/// The two maps of one backbone's pass a `DogDetector` reads: its stride-16 and stride-32 blocks' outputs, of the
/// photo's view (image 0) and, when `mirrored`, of its mirror image (image 1).
public struct PyramidMaps: Sendable, Equatable {
    public let fine: FeatureMaps
    public let coarse: FeatureMaps
    public let mirrored: Bool

    public init(fine: FeatureMaps, coarse: FeatureMaps, mirrored: Bool = false) {
        (self.fine, self.coarse, self.mirrored) = (fine, coarse, mirrored && fine.images > 1 && coarse.images > 1)
    }
}
