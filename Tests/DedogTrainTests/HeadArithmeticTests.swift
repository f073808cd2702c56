import Foundation
import Testing
@_spi(Testing) import DedogTrain

/// The head trainer's arithmetic against an independent computation in Double, as llm.c checks its training
/// and not only its forward pass: the smoothed cross-entropy, its gradient (central finite differences of that
/// loss), and AdamW's steps with decay towards the starting weights.
@Suite struct HeadArithmeticTests {
    static let (classes, inputs, rows) = (5, 7, 4)

    /// A small head and batch from a fixed seed: values of either sign around one.
    static func problem() -> (head: SoftmaxHead, x: [Float], labels: [Int]) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(Int64(bitPattern: state >> 11) % 2000) / 1000 - 1
        }
        let head = SoftmaxHead(classes: classes, inputs: inputs, weight: (0..<(classes * inputs)).map { _ in next() },
                               bias: (0..<classes).map { _ in next() })
        return (head, (0..<(rows * inputs)).map { _ in next() }, [0, 3, 3, 4])
    }

    /// The mean cross-entropy against smoothed targets, in Double, from the parameters (weights, then biases).
    static func loss(_ parameters: [Double], _ x: [Float], _ labels: [Int], smoothing: Double) -> Double {
        var total = 0.0
        for (r, label) in labels.enumerated() {
            let logits = (0..<classes).map { c in
                parameters[classes * inputs + c] + (0..<inputs).reduce(0.0) { $0 + parameters[c * inputs + $1] * Double(x[r * inputs + $1]) }
            }
            let top = logits.max()!
            let logSum = log(logits.reduce(0.0) { $0 + exp($1 - top) }) + top
            for c in 0..<classes {
                let target = (c == label ? 1 - smoothing : 0) + smoothing / Double(classes)
                total -= target * (logits[c] - logSum)
            }
        }
        return total / Double(labels.count)
    }

    @Test(arguments: [0.0, 0.1]) func gradientMatchesFiniteDifferences(smoothing: Double) {
        let (head, x, labels) = Self.problem()
        let (gradient, loss, _, _) = HeadTrainer.batchGradient(head, x, labels, smoothing: Float(smoothing))
        let parameters = (head.weight + head.bias).map(Double.init)
        #expect(gradient.count == parameters.count)
        #expect(abs(Double(loss) - Self.loss(parameters, x, labels, smoothing: smoothing)) < 1e-5)
        let h = 1e-5
        var worst = 0.0
        for i in parameters.indices {
            var up = parameters, down = parameters
            up[i] += h
            down[i] -= h
            let numeric = (Self.loss(up, x, labels, smoothing: smoothing) - Self.loss(down, x, labels, smoothing: smoothing)) / (2 * h)
            worst = max(worst, abs(numeric - Double(gradient[i])) / max(1e-3, abs(numeric)))
        }
        #expect(worst < 1e-3, "largest relative difference from finite differences: \(worst)")
    }

    /// Three AdamW steps against the textbook update computed in Double: bias-corrected moments, decoupled decay
    /// of the weights (not the biases) towards the anchor.
    @Test func adamStepsMatchTheTextbookUpdate() {
        var (head, x, labels) = Self.problem()
        let anchor = head.weight.map { $0 * 0.5 }
        let (lr, decay, beta1, beta2, epsilon) = (0.01, 0.1, 0.9, 0.999, 1e-8)
        var adam = Adam(count: head.weight.count + head.bias.count)
        var expected = (head.weight + head.bias).map(Double.init)
        var m = [Double](repeating: 0, count: expected.count), v = m
        for t in 1...3 {
            let gradient = HeadTrainer.batchGradient(head, x, labels, smoothing: 0.1).gradient
            adam.step(&head, gradient: gradient, learningRate: Float(lr), weightDecay: Float(decay), anchor: anchor)
            for i in expected.indices {
                let g = Double(gradient[i])
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                let update = lr * (m[i] / (1 - pow(beta1, Double(t)))) / ((v[i] / (1 - pow(beta2, Double(t)))).squareRoot() + epsilon)
                let isWeight = i < head.weight.count
                expected[i] -= update + (isWeight ? lr * decay * (expected[i] - Double(anchor[i])) : 0)
            }
            let actual = (head.weight + head.bias).map(Double.init)
            let worst = zip(actual, expected).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 1e-5, "step \(t): largest difference \(worst)")
        }
        // The steps moved the head (a test of nothing would pass too).
        #expect(zip(head.weight, Self.problem().head.weight).contains { abs($0 - $1) > 1e-3 })
    }

    /// Steps that hold some classes leave their weights and biases exactly as they were, and move the others
    /// exactly as steps over every class would (Adam's moments are per parameter).
    @Test func adamStepsHoldTheClassesNotLearning() {
        let (start, x, labels) = Self.problem()
        let gradient = HeadTrainer.batchGradient(start, x, labels, smoothing: 0.1).gradient
        let learning = [true, false, true, false, true]
        var held = start, free = start
        var heldAdam = Adam(count: start.weight.count + start.bias.count), freeAdam = heldAdam
        for _ in 1...3 {
            heldAdam.step(&held, gradient: gradient, learningRate: 0.01, weightDecay: 0.1, anchor: start.weight, learning: learning)
            freeAdam.step(&free, gradient: gradient, learningRate: 0.01, weightDecay: 0.1, anchor: start.weight)
        }
        for c in 0..<Self.classes {
            let row = (c * Self.inputs)..<((c + 1) * Self.inputs)
            let expected = learning[c] ? free : start
            #expect(Array(held.weight[row]) == Array(expected.weight[row]) && held.bias[c] == expected.bias[c], "class \(c)")
        }
        #expect(free.weight != start.weight)
    }
}
