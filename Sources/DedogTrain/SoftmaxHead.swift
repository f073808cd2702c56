import DedogNN
import DedogBreedModel
import Foundation

/// A linear classifier on backbone features, trained with mini-batch AdamW on the softmax cross-entropy with
/// label smoothing, with early stopping on the validation loss. Seeded and deterministic: the same data, options
/// and seed give bit-identical weights (single-threaded products on the engine's kernels, fixed shuffles).
public struct SoftmaxHead: Sendable, Equatable {
    public var classes: Int
    public var inputs: Int
    /// [classes × inputs]
    public var weight: [Float]
    public var bias: [Float]

    public init(classes: Int, inputs: Int, weight: [Float]? = nil, bias: [Float]? = nil) {
        self.classes = classes
        self.inputs = inputs
        self.weight = weight ?? [Float](repeating: 0, count: classes * inputs)
        self.bias = bias ?? [Float](repeating: 0, count: classes)
    }

    /// Logits [n × classes] of `x` [n × inputs].
    public func logits(_ x: UnsafePointer<Float>, count n: Int) -> [Float] {
        weight.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                MatrixProduct.timesTransposed(x, rows: n, w.baseAddress!, bias: b.baseAddress!, outputs: classes,
                                              inner: inputs)
            }
        }
    }

    /// Row `c` becomes row `r` of `linear` (same width).
    mutating func setRow(_ c: Int, from linear: Linear, row r: Int) {
        guard let (w, b) = linear.row(r), w.count == inputs else { return }
        for k in 0..<inputs { weight[c * inputs + k] = w[k] }
        bias[c] = b
    }

    /// Logits of whole rows of `x`; the trainer passes only feature matrices it built, `inputs` wide.
    func logits(_ x: [Float]) -> [Float] {
        assert(x.count % inputs == 0)
        return x.withUnsafeBufferPointer { logits($0.baseAddress!, count: x.count / inputs) }
    }
}

/// Options for `HeadTrainer`, with defaults that work for Stanford Dogs-sized data.
public struct TrainingOptions: Sendable, Equatable {
    public var epochs = 60
    /// At most this many rows per step; small datasets take smaller batches, so that every epoch makes at least
    /// `minimumStepsPerEpoch` steps (60 photos would otherwise make one step an epoch and barely move the head).
    public var batchSize = 128
    public var minimumStepsPerEpoch = 8
    public var learningRate: Float = 1e-4
    /// Decoupled weight decay towards the head's starting weights (the ImageNet classifier's rows, or zero): a
    /// prior that keeps a head trained on few photos near what the pretrained network already knows.
    public var weightDecay: Float = 1e-4
    public var labelSmoothing: Float = 0.1
    /// Stop after this many epochs without a better validation loss; the best epoch's weights are kept.
    public var patience = 6
    /// Train rows that start from zero alone first, while rows that start from pretrained weights wait (see
    /// `HeadTrainer.train`).
    public var warmsUpNewRows = true
    public var seed: UInt64 = 1

    public init() {}
}

/// Loss and accuracy of one pass.
public struct EpochMetrics: Sendable, Equatable {
    public var epoch: Int
    public var trainLoss: Float
    public var trainTop1: Float
    public var trainTop5: Float
    public var validationLoss: Float
    public var validationTop1: Float
    public var validationTop5: Float
}

/// The head's training loop, for `Trainer`, which builds every matrix it is given.
@_spi(Testing) public enum HeadTrainer {
    /// Trains on `x` [n × inputs] with labels `y`, validating on `vx`/`vy` each epoch.
    /// `initial` starts from given weights (e.g. the ImageNet classifier's rows for the same classes), which the
    /// weight decay then pulls towards. Without validation rows, or with `stopsEarly` false, every epoch runs and
    /// the last weights are returned.
    ///
    /// When `initial` has both pretrained rows and new ones (all zero: classes the ImageNet classifier lacks),
    /// and validation stops early, training runs in two stages: first only the new rows learn, the pretrained
    /// ones held, until the validation loss stops falling; then every row, from there. Trained together from
    /// the start, the pretrained rows overfit while the new ones catch up (Stanford's 120 breeds with 13 new
    /// ones ran 25 epochs where the 120 alone stopped at 5-10; see docs/accuracy.md).
    static func train(x: [Float], y: [Int], vx: [Float], vy: [Int], classes: Int, inputs: Int,
                             options: TrainingOptions, initial: SoftmaxHead? = nil, stopsEarly: Bool = true,
                             epochEnded: (EpochMetrics) -> Void = { _ in }) -> (head: SoftmaxHead, history: [EpochMetrics]) {
        assert(x.count == y.count * inputs && vx.count == vy.count * inputs)
        let start = initial ?? SoftmaxHead(classes: classes, inputs: inputs)
        let new = (0..<classes).filter { c in start.weight[(c * inputs)..<((c + 1) * inputs)].allSatisfy { $0 == 0 } }
        guard options.warmsUpNewRows, stopsEarly, !vy.isEmpty, !new.isEmpty, new.count < classes else {
            return stage(x: x, y: y, vx: vx, vy: vy, options: options, from: start, anchor: start.weight,
                         stopsEarly: stopsEarly, epochEnded: epochEnded)
        }
        var learning = [Bool](repeating: false, count: classes)
        for c in new { learning[c] = true }
        let first = stage(x: x, y: y, vx: vx, vy: vy, options: options, from: start, anchor: start.weight,
                          learning: learning, stopsEarly: true, epochEnded: epochEnded)
        let best = first.history.map(\.validationLoss).min() ?? .infinity
        let second = stage(x: x, y: y, vx: vx, vy: vy, options: options, from: first.head, anchor: start.weight,
                           stopsEarly: true, bestLoss: best, firstEpoch: first.history.count + 1, epochEnded: epochEnded)
        return (second.head, first.history + second.history)
    }

    /// One run of AdamW epochs from `head`, only the classes marked in `learning` (all if nil) changing; the
    /// weights decay towards `anchor`. Returns the weights of the epoch with the lowest validation loss, or
    /// `head` itself if none beats `bestLoss`.
    private static func stage(x: [Float], y: [Int], vx: [Float], vy: [Int], options: TrainingOptions,
                              from initial: SoftmaxHead, anchor: [Float], learning: [Bool]? = nil, stopsEarly: Bool,
                              bestLoss: Float = .infinity, firstEpoch: Int = 1,
                              epochEnded: (EpochMetrics) -> Void) -> (head: SoftmaxHead, history: [EpochMetrics]) {
        let inputs = initial.inputs
        var head = initial
        let batchSize = max(1, min(options.batchSize, y.count / max(1, options.minimumStepsPerEpoch)))
        var best = head
        var bestLoss = bestLoss
        var history: [EpochMetrics] = []
        var rng = SplitMix64(seed: options.seed)
        var order = Array(0..<y.count)
        var adam = Adam(count: head.weight.count + head.bias.count)
        var batchX = [Float](repeating: 0, count: batchSize * inputs)
        var sinceBest = 0

        for epoch in 1...max(1, options.epochs) {
            rng.shuffle(&order)
            var lossSum: Double = 0, correct = 0, correct5 = 0
            var start = 0
            while start < order.count {
                let idx = order[start..<min(order.count, start + batchSize)]
                let b = idx.count
                for (row, i) in idx.enumerated() {
                    for k in 0..<inputs { batchX[row * inputs + k] = x[i * inputs + k] }
                }
                let labels = idx.map { y[$0] }
                let (gradient, loss, hits, hits5) = batchX.withUnsafeBufferPointer { bx in
                    batchGradient(head, bx.baseAddress!, labels, smoothing: options.labelSmoothing)
                }
                lossSum += Double(loss) * Double(b)
                correct += hits
                correct5 += hits5
                adam.step(&head, gradient: gradient, learningRate: options.learningRate, weightDecay: options.weightDecay,
                          anchor: anchor, learning: learning)
                start += b
            }
            let v = evaluate(head, vx, vy)
            let metrics = EpochMetrics(epoch: firstEpoch + epoch - 1, trainLoss: Float(lossSum / Double(max(1, y.count))),
                                       trainTop1: Float(correct) / Float(max(1, y.count)),
                                       trainTop5: Float(correct5) / Float(max(1, y.count)),
                                       validationLoss: v.loss, validationTop1: v.top1, validationTop5: v.top5)
            history.append(metrics)
            epochEnded(metrics)
            if vy.isEmpty || !stopsEarly || v.loss < bestLoss {
                bestLoss = v.loss
                best = head
                sinceBest = 0
            } else {
                sinceBest += 1
                if sinceBest >= options.patience { break }
            }
        }
        return (best, history)
    }

    /// What cross-validation found: the epoch count with the lowest loss over all folds, each fold's answers for
    /// its own photos after that many epochs (center and mirrored views), and the mean loss per epoch.
    struct CrossValidation {
        var epochs: Int
        var centerLogits: [Float]
        var mirroredLogits: [Float]
        var history: [EpochMetrics]
    }

    /// k-fold cross-validation of the head. Training rows `x` hold `views` rows per sample, sample i in fold
    /// `sampleFolds[i]`; checked photos `vx`/`mirroredX` (one row each) are in `checkFolds`. Each fold's head
    /// trains on the other folds' samples for every epoch; the epoch count with the lowest mean held-out loss is
    /// chosen, and each fold retrained for exactly that many gives the out-of-fold answers.
    static func crossValidate(x: [Float], y: [Int], views: Int, sampleFolds: [Int], vx: [Float], mirroredX: [Float],
                              vy: [Int], checkFolds: [Int], folds: Int, classes: Int, inputs: Int,
                              options: TrainingOptions, initial: SoftmaxHead?,
                              epochEnded: (EpochMetrics) -> Void = { _ in }) -> CrossValidation {
        func rows(_ m: [Float], _ keep: [Int], per: Int) -> [Float] {
            keep.flatMap { i in m[(i * per * inputs)..<((i + 1) * per * inputs)] }
        }
        func split(_ f: Int) -> (x: [Float], y: [Int], vx: [Float], mx: [Float], vy: [Int], held: [Int]) {
            let fit = sampleFolds.indices.filter { sampleFolds[$0] != f }
            let held = checkFolds.indices.filter { checkFolds[$0] == f }
            return (rows(x, fit, per: views), fit.flatMap { Array(repeating: y[$0 * views], count: views) },
                    rows(vx, held, per: 1), rows(mirroredX, held, per: 1), held.map { vy[$0] }, held)
        }
        var lossSum = [Double](repeating: 0, count: max(1, options.epochs)), trainSum = lossSum, hitSum = lossSum
        var counted = 0
        for f in 0..<folds {
            let part = split(f)
            guard !part.vy.isEmpty, !part.y.isEmpty else { continue }
            let history = train(x: part.x, y: part.y, vx: part.vx, vy: part.vy, classes: classes, inputs: inputs,
                                options: options, initial: initial, stopsEarly: false).history
            for (e, m) in history.enumerated() {
                lossSum[e] += Double(m.validationLoss) * Double(part.vy.count)
                trainSum[e] += Double(m.trainLoss) * Double(part.vy.count)
                hitSum[e] += Double(m.validationTop1) * Double(part.vy.count)
            }
            counted += part.vy.count
        }
        let n = Double(max(1, counted))
        let history = lossSum.indices.map { e in
            EpochMetrics(epoch: e + 1, trainLoss: Float(trainSum[e] / n), trainTop1: 0, trainTop5: 0,
                         validationLoss: Float(lossSum[e] / n), validationTop1: Float(hitSum[e] / n), validationTop5: 0)
        }
        history.forEach(epochEnded)
        let epochs = (history.indices.min { history[$0].validationLoss < history[$1].validationLoss } ?? 0) + 1
        var options = options
        options.epochs = epochs
        var center = [Float](repeating: 0, count: vy.count * classes), mirrored = center
        for f in 0..<folds {
            let part = split(f)
            guard !part.vy.isEmpty else { continue }
            // A fold without training photos (possible only with one photo in all) answers from the start.
            let head = part.y.isEmpty ? (initial ?? SoftmaxHead(classes: classes, inputs: inputs))
                : train(x: part.x, y: part.y, vx: [], vy: [], classes: classes, inputs: inputs, options: options,
                        initial: initial).head
            let (c, m) = (head.logits(part.vx), head.logits(part.mx))
            for (r, i) in part.held.enumerated() {
                for k in 0..<classes {
                    center[i * classes + k] = c[r * classes + k]
                    mirrored[i * classes + k] = m[r * classes + k]
                }
            }
        }
        return CrossValidation(epochs: epochs, centerLogits: center, mirroredLogits: mirrored, history: history)
    }

    /// The mean smoothed cross-entropy of the rows `x` [labels.count × inputs] and its gradient with respect to
    /// the head's parameters: the weights (classes × inputs, row-major) then the biases; with the numbers of
    /// top-1 and top-5 hits.
    @_spi(Testing) public static func batchGradient(_ head: SoftmaxHead, _ x: [Float], _ labels: [Int], smoothing: Float)
        -> (gradient: [Float], loss: Float, hits: Int, hits5: Int) {
        guard x.count == labels.count * head.inputs, !labels.isEmpty else { return ([], 0, 0, 0) }
        return x.withUnsafeBufferPointer { batchGradient(head, $0.baseAddress!, labels, smoothing: smoothing) }
    }

    static func batchGradient(_ head: SoftmaxHead, _ x: UnsafePointer<Float>, _ labels: [Int], smoothing: Float)
        -> (gradient: [Float], loss: Float, hits: Int, hits5: Int) {
        let (classes, inputs, b) = (head.classes, head.inputs, labels.count)
        var (dLogits, loss, hits, hits5) = lossAndGradient(head, x, labels, smoothing: smoothing)
        // dW = dLogitsᵀ · X / b ; db = Σ dLogits / b.
        let scale = 1 / Float(b)
        for i in dLogits.indices { dLogits[i] *= scale }
        var gradient = dLogits.withUnsafeBufferPointer { d in
            MatrixProduct.transposedTimes(d.baseAddress!, columns: classes, x, outputs: inputs, inner: b)
        }
        gradient.append(contentsOf: repeatElement(0, count: classes))
        for r in 0..<b { for c in 0..<classes { gradient[head.weight.count + c] += dLogits[r * classes + c] } }
        return (gradient, loss, hits, hits5)
    }

    /// Softmax cross-entropy with label smoothing: gradient w.r.t. the logits (not yet divided by the batch size),
    /// mean loss, and the numbers of top-1 and top-5 hits.
    static func lossAndGradient(_ head: SoftmaxHead, _ x: UnsafePointer<Float>, _ labels: [Int], smoothing: Float)
        -> ([Float], Float, Int, Int) {
        let c = head.classes
        var logits = head.logits(x, count: labels.count)
        var loss: Double = 0
        var hits = 0, hits5 = 0
        let off = smoothing / Float(c), on = 1 - smoothing + off
        for (r, label) in labels.enumerated() {
            let row = r * c
            var top = -Float.infinity, arg = 0
            for k in 0..<c where logits[row + k] > top { top = logits[row + k]; arg = k }
            if arg == label { hits += 1 }
            var above = 0
            for k in 0..<c where logits[row + k] > logits[row + label] { above += 1 }
            if above < 5 { hits5 += 1 }
            var sum: Float = 0
            for k in 0..<c { logits[row + k] = Foundation.exp(logits[row + k] - top); sum += logits[row + k] }
            for k in 0..<c {
                let p = logits[row + k] / sum
                let target = k == label ? on : off
                loss -= Double(target) * Foundation.log(Double(max(p, 1e-30)))
                logits[row + k] = p - target
            }
        }
        return (logits, Float(loss / Double(max(1, labels.count))), hits, hits5)
    }

    /// Mean cross-entropy (no smoothing), top-1 and top-5 accuracy.
    public static func evaluate(_ head: SoftmaxHead, _ x: [Float], _ y: [Int], temperature: Float = 1)
        -> (loss: Float, top1: Float, top5: Float) {
        summarize(logits: head.logits(x), labels: y, classes: head.classes, temperature: temperature)
    }

    /// Mean cross-entropy, top-1 and top-5 accuracy of logits [n × classes].
    public static func summarize(logits: [Float], labels y: [Int], classes: Int, temperature: Float = 1)
        -> (loss: Float, top1: Float, top5: Float) {
        guard !y.isEmpty else { return (0, 0, 0) }
        var loss: Double = 0
        var top1 = 0, top5 = 0
        for (r, label) in y.enumerated() {
            let row = Array(logits[(r * classes)..<((r + 1) * classes)]).map { $0 / temperature }
            let m = row.max()!
            let logSum = Foundation.log(row.reduce(0) { $0 + Double(Foundation.exp($1 - m)) }) + Double(m)
            loss += logSum - Double(row[label])
            let rank = row.filter { $0 > row[label] }.count
            if rank == 0 { top1 += 1 }
            if rank < 5 { top5 += 1 }
        }
        let n = Float(y.count)
        return (Float(loss / Double(y.count)), Float(top1) / n, Float(top5) / n)
    }
}

/// AdamW (decoupled weight decay of the weights towards `anchor`, none on the bias).
@_spi(Testing) public struct Adam {
    var m: [Float], v: [Float]
    var t = 0
    public let beta1: Float = 0.9, beta2: Float = 0.999, epsilon: Float = 1e-8

    public init(count: Int) {
        m = [Float](repeating: 0, count: count)
        v = [Float](repeating: 0, count: count)
    }

    /// One step; with `learning`, only the weights and biases of the classes marked true change.
    public mutating func step(_ head: inout SoftmaxHead, gradient g: [Float], learningRate lr: Float, weightDecay: Float,
                              anchor: [Float], learning: [Bool]? = nil) {
        t += 1
        let c1 = 1 - Foundation.pow(beta1, Float(t)), c2 = 1 - Foundation.pow(beta2, Float(t))
        let nw = head.weight.count
        for i in g.indices {
            if let learning, !learning[i < nw ? i / head.inputs : i - nw] { continue }
            m[i] = beta1 * m[i] + (1 - beta1) * g[i]
            v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i]
            let update = lr * (m[i] / c1) / ((v[i] / c2).squareRoot() + epsilon)
            if i < nw {
                head.weight[i] -= update + lr * weightDecay * (head.weight[i] - anchor[i])
            } else {
                head.bias[i - nw] -= update
            }
        }
    }
}
