import Foundation
import DedogNN
import DedogBreedModel

/// The detector's two layers while they learn (`DogDetector` runs them): per cell, 1280 → `hidden` (ReLU) → 5.
@_spi(Testing) public struct DetectorHead {
    let hidden: Int
    var w1: [Float], b1: [Float], w2: [Float], b2: [Float]
    static let width = EfficientNetLite.featureCount, outputs = DogDetector.outputs
    /// Focal loss exponents (CenterNet's α and β).
    static let alpha: Float = 2, beta: Float = 4

    init(hidden: Int, using generator: inout SplitMix64) {
        self.hidden = hidden
        func normal(_ scale: Float) -> Float {
            let u = Float.random(in: Float.ulpOfOne..<1, using: &generator), v = Float.random(in: 0..<1, using: &generator)
            return scale * (-2 * Foundation.log(u)).squareRoot() * Foundation.cos(2 * .pi * v)
        }
        w1 = (0..<(hidden * Self.width)).map { _ in normal((2 / Float(Self.width)).squareRoot()) }
        b1 = [Float](repeating: 0, count: hidden)
        w2 = (0..<(Self.outputs * hidden)).map { _ in normal(0.01) }
        // A centre is rare (about 1 cell in 80): the score starts there (the focal loss's prior), a box at half the square.
        b2 = [-4.6, 0, 0, Foundation.log(0.5), Foundation.log(0.5)]
    }

    /// Hidden activations [n × hidden] and outputs [n × 5] of `n` cells.
    func forward(_ x: [Float], rows n: Int) -> (h: [Float], out: [Float]) {
        var h = x.withUnsafeBufferPointer { xp in
            w1.withUnsafeBufferPointer { wp in b1.withUnsafeBufferPointer { bp in
                MatrixProduct.timesTransposed(xp.baseAddress!, rows: n, wp.baseAddress!, bias: bp.baseAddress!, outputs: hidden, inner: Self.width)
            } }
        }
        for i in h.indices where h[i] < 0 { h[i] = 0 }
        var out = [Float](repeating: 0, count: n * Self.outputs)
        h.withUnsafeBufferPointer { hp in
            for r in 0..<n {
                for o in 0..<Self.outputs {
                    var sum = b2[o]
                    for k in 0..<hidden { sum += hp[r * hidden + k] * w2[o * hidden + k] }
                    out[r * Self.outputs + o] = sum
                }
            }
        }
        return (h, out)
    }

    /// What one scene's cells should say: the centre heat map (1 at each dog's centre cell, a Gaussian around it
    /// of a sixth of its size) and, at each centre cell, the offset and log size.
    @_spi(Testing) public struct Targets {
        public var heat: [Float]
        public var centres: [(cell: Int, values: [Float])]

        public init(_ boxes: [SquareBox], rows: Int, columns: Int) {
            heat = [Float](repeating: 0, count: rows * columns)
            centres = []
            for b in boxes {
                let gx = b.cx * Double(columns), gy = b.cy * Double(rows)
                let c = min(columns - 1, Int(gx)), r = min(rows - 1, Int(gy))
                let sx = max(0.35, b.w * Double(columns) / 6), sy = max(0.35, b.h * Double(rows) / 6)
                for rr in 0..<rows {
                    for cc in 0..<columns {
                        let dx = Double(cc) + 0.5 - gx, dy = Double(rr) + 0.5 - gy
                        let g = Float(Foundation.exp(-(dx * dx) / (2 * sx * sx) - (dy * dy) / (2 * sy * sy)))
                        heat[rr * columns + cc] = max(heat[rr * columns + cc], g)
                    }
                }
                heat[r * columns + c] = 1
                centres.removeAll { $0.cell == r * columns + c }
                centres.append((r * columns + c, [Float(gx - Double(c) - 0.5), Float(gy - Double(r) - 0.5),
                                                  Float(Foundation.log(b.w)), Float(Foundation.log(b.h))]))
            }
        }
    }

    /// The loss of `out` (one scene's cells) against `t`, not yet divided by the dogs; with `gradient`, its
    /// gradient is added there (same layout as `out`), divided by `dogs`.
    @_spi(Testing) public static func loss(_ out: ArraySlice<Float>, _ t: Targets, gradient: UnsafeMutablePointer<Float>?, dogs: Float) -> Double {
        var loss = 0.0
        let base = out.startIndex
        for (i, y) in t.heat.enumerated() {
            let z = out[base + i * outputs], p = min(max(1 / (1 + Foundation.exp(-z)), 1e-6), 1 - 1e-6)
            if y == 1 {
                loss -= Double((1 - p) * (1 - p) * Foundation.log(p))
                gradient?[i * outputs] += (1 - p) * (1 - p) * (alpha * p * Foundation.log(p) - (1 - p)) / dogs
            } else {
                let weight = Foundation.pow(1 - y, beta)
                loss -= Double(weight * p * p * Foundation.log(1 - p))
                gradient?[i * outputs] += weight * p * p * (p - alpha * (1 - p) * Foundation.log(1 - p)) / dogs
            }
        }
        for centre in t.centres {
            for k in 0..<4 {
                let d = out[base + centre.cell * outputs + 1 + k] - centre.values[k]
                loss += Double(abs(d))
                gradient?[centre.cell * outputs + 1 + k] += (d > 0 ? 1 : d < 0 ? -1 : 0) / dogs
            }
        }
        return loss
    }

    /// Trains for `options.epochs` epochs with Adam, the learning rate falling on a cosine; keeps the weights of the
    /// epoch with the lowest validation loss (the last one without validation photos) and returns that epoch.
    mutating func fit(_ grids: CellGrids, options: DetectorOptions, using generator: inout SplitMix64) -> Int {
        let cellCount = grids.cellsPerScene
        let targets = grids.targets.map { Targets($0, rows: grids.rows, columns: grids.columns) }
        let train = grids.isValidation.indices.filter { !grids.isValidation[$0] }
        let checked = grids.isValidation.indices.filter { grids.isValidation[$0] }
        var adam = [Adam(count: w1.count), Adam(count: b1.count), Adam(count: w2.count), Adam(count: b2.count)]
        var best = (loss: Double.infinity, epoch: 0, weights: (w1, b1, w2, b2))
        let batches = max(1, (train.count + options.batch - 1) / options.batch)
        for epoch in 1...max(1, options.epochs) {
            var order = train
            order.shuffle(using: &generator)
            for b in 0..<batches {
                let scenes = Array(order[(b * options.batch)..<min(order.count, (b + 1) * options.batch)])
                guard !scenes.isEmpty else { continue }
                let progressShare = (Float(epoch - 1) + Float(b) / Float(batches)) / Float(max(1, options.epochs))
                let rate = options.learningRate * 0.5 * (1 + Foundation.cos(.pi * progressShare))
                step(scenes, grids: grids, targets: targets, cells: cellCount, rate: rate, decay: options.weightDecay, adam: &adam)
            }
            let loss = checked.isEmpty ? -Double(epoch) : validationLoss(checked, grids: grids, targets: targets)
            if loss < best.loss { best = (loss, epoch, (w1, b1, w2, b2)) }
        }
        (w1, b1, w2, b2) = best.weights
        return best.epoch
    }

    /// One Adam step on the scenes `scenes`.
    private mutating func step(_ scenes: [Int], grids: CellGrids, targets: [Targets], cells: Int, rate: Float, decay: Float,
                               adam: inout [Adam]) {
        var x: [Float] = []
        x.reserveCapacity(scenes.count * cells * Self.width)
        for s in scenes { grids.appendCells(of: s, to: &x) }
        let n = scenes.count * cells
        let (h, out) = forward(x, rows: n)
        let dogs = Float(max(1, scenes.reduce(0) { $0 + targets[$1].centres.count }))
        var dOut = [Float](repeating: 0, count: n * Self.outputs)
        dOut.withUnsafeMutableBufferPointer { d in
            for (j, s) in scenes.enumerated() {
                let range = (j * cells * Self.outputs)..<((j + 1) * cells * Self.outputs)
                _ = Self.loss(out[range], targets[s], gradient: d.baseAddress! + range.lowerBound, dogs: dogs)
            }
        }
        // Output layer: dW2 = dOutᵀ · H, db2 = Σ dOut; then back through it and the ReLU.
        var gw2 = [Float](repeating: 0, count: w2.count), gb2 = [Float](repeating: 0, count: Self.outputs)
        var dz = [Float](repeating: 0, count: n * hidden)
        for r in 0..<n {
            for o in 0..<Self.outputs {
                let g = dOut[r * Self.outputs + o]
                guard g != 0 else { continue }
                gb2[o] += g
                for k in 0..<hidden {
                    gw2[o * hidden + k] += g * h[r * hidden + k]
                    dz[r * hidden + k] += g * w2[o * hidden + k]
                }
            }
            for k in 0..<hidden where h[r * hidden + k] <= 0 { dz[r * hidden + k] = 0 }
        }
        let gw1 = dz.withUnsafeBufferPointer { d in
            x.withUnsafeBufferPointer { xp in
                MatrixProduct.transposedTimes(d.baseAddress!, columns: hidden, xp.baseAddress!, outputs: Self.width, inner: n)
            }
        }
        var gb1 = [Float](repeating: 0, count: hidden)
        for r in 0..<n { for k in 0..<hidden { gb1[k] += dz[r * hidden + k] } }
        adam[0].step(&w1, gw1, rate: rate, decay: decay)
        adam[1].step(&b1, gb1, rate: rate, decay: 0)
        adam[2].step(&w2, gw2, rate: rate, decay: decay)
        adam[3].step(&b2, gb2, rate: rate, decay: 0)
    }

    /// The raw outputs of scenes `scenes`, [scene × cells × 5], a batch at a time.
    func outputs(_ scenes: [Int], grids: CellGrids) -> [Float] {
        var all: [Float] = []
        for start in stride(from: 0, to: scenes.count, by: 64) {
            var x: [Float] = []
            let part = scenes[start..<min(scenes.count, start + 64)]
            for s in part { grids.appendCells(of: s, to: &x) }
            all += forward(x, rows: part.count * grids.cellsPerScene).out
        }
        return all
    }

    /// The mean loss per dog over the scenes `scenes`.
    func validationLoss(_ scenes: [Int], grids: CellGrids, targets: [Targets]) -> Double {
        let out = outputs(scenes, grids: grids), per = grids.cellsPerScene * Self.outputs
        var loss = 0.0, dogs = 0
        for (j, s) in scenes.enumerated() {
            loss += Self.loss(out[(j * per)..<((j + 1) * per)], targets[s], gradient: nil, dogs: 1)
            dogs += targets[s].centres.count
        }
        return loss / Double(max(1, dogs))
    }

    /// The thresholds on the validation photos: of the pairs (threshold, apart threshold) that see at most
    /// `splitAtMost` of the one-dog photos as two dogs or more, the one that finds two or more in the most photos of
    /// several (then the fewest splits, then the highest thresholds); with what it gives there and the box average
    /// precision at IoU 0.5.
    func chooseThresholds(_ grids: CellGrids, splitAtMost: Double)
        -> (threshold: Float, apartThreshold: Float, averagePrecision: Double, severalFound: Double, split: Double) {
        let scenes = grids.isValidation.indices.filter { grids.isValidation[$0] }
        let out = outputs(scenes, grids: grids), per = grids.cellsPerScene * Self.outputs
        let found = scenes.indices.map { j in
            DogDetector.decode(Array(out[(j * per)..<((j + 1) * per)]), rows: grids.rows, columns: grids.columns,
                               minimumScore: 0.02, overlap: Double(DetectorDescription.standardOverlap),
                               inside: Double(DetectorDescription.standardInside))
        }
        let truths = scenes.map { grids.targets[$0].map { Detection(x0: $0.cx - $0.w / 2, y0: $0.cy - $0.h / 2,
                                                                    x1: $0.cx + $0.w / 2, y1: $0.cy + $0.h / 2, score: 1) } }
        let ap = AveragePrecision.compute(found, truths: truths, overlap: 0.5)
        let single = truths.indices.filter { truths[$0].count == 1 }, several = truths.indices.filter { truths[$0].count >= 2 }
        func share(_ photos: [Int], _ t: Float, _ apart: Float) -> Double {
            let n = photos.filter { DogDetector.dogs(found[$0], threshold: t, apartThreshold: apart).count >= 2 }.count
            return Double(n) / Double(max(1, photos.count))
        }
        var best: (found: Double, split: Double, t: Float, apart: Float) = (-1, 1, 0.9, 0.9)
        for high in stride(from: 90, through: 10, by: -2) {
            let t = Float(high) / 100
            for low in stride(from: high, through: 6, by: -2) {
                let apart = Float(low) / 100, split = share(single, t, apart)
                guard split <= splitAtMost else { continue }
                let seen = share(several, t, apart)
                if seen > best.found || (seen == best.found && split < best.split) { best = (seen, split, t, apart) }
            }
        }
        return (best.t, best.apart, ap, max(0, best.found), best.split)
    }
}

extension Adam {
    /// One step on a plain array of parameters, with decoupled weight decay.
    mutating func step(_ p: inout [Float], _ g: [Float], rate: Float, decay: Float) {
        t += 1
        let c1 = 1 - Foundation.pow(beta1, Float(t)), c2 = 1 - Foundation.pow(beta2, Float(t))
        for i in p.indices {
            m[i] = beta1 * m[i] + (1 - beta1) * g[i]
            v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i]
            p[i] -= rate * ((m[i] / c1) / ((v[i] / c2).squareRoot() + epsilon) + decay * p[i])
        }
    }
}

/// Box average precision as COCO computes it for one category: detections of every image ranked by score, each
/// matched greedily to the unmatched truth it overlaps most (at least `overlap`), precision made monotone and
/// read at 101 recall points.
@_spi(Testing) public enum AveragePrecision {
    public static func compute(_ found: [[Detection]], truths: [[Detection]], overlap: Double) -> Double {
        let total = truths.reduce(0) { $0 + $1.count }
        guard total > 0 else { return 0 }
        var ranked: [(score: Float, hit: Bool)] = []
        for (image, detections) in found.enumerated() {
            var used = [Bool](repeating: false, count: truths[image].count)
            for d in detections.sorted(by: { $0.score > $1.score }) {
                var best = -1, bestOverlap = overlap
                for (k, t) in truths[image].enumerated() where !used[k] {
                    let o = d.overlap(t)
                    if o >= bestOverlap { (best, bestOverlap) = (k, o) }
                }
                if best >= 0 { used[best] = true }
                ranked.append((d.score, best >= 0))
            }
        }
        ranked.sort { $0.score > $1.score }
        var precision: [Double] = [], recall: [Double] = [], hits = 0
        for (i, r) in ranked.enumerated() {
            if r.hit { hits += 1 }
            precision.append(Double(hits) / Double(i + 1))
            recall.append(Double(hits) / Double(total))
        }
        for i in stride(from: precision.count - 2, through: 0, by: -1) { precision[i] = max(precision[i], precision[i + 1]) }
        var sum = 0.0, j = 0
        for step in 0...100 {
            let level = Double(step) / 100
            while j < recall.count && recall[j] < level { j += 1 }
            if j < precision.count { sum += precision[j] }
        }
        return sum / 101
    }
}
