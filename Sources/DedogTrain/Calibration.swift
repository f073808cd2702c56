import Foundation

/// Temperature scaling (Guo et al., 2017): one scalar T that divides the logits so that the validation
/// cross-entropy is lowest. It changes confidences, never the ranking, so "80 %" comes to mean about 80 %.
public enum Calibration {
    /// The T in [0.05, 20] minimising the mean cross-entropy of `logits` [n × classes] against `labels`
    /// (golden-section search on log T; the loss is unimodal in T).
    ///
    /// The targets are smoothed by 1/(n + 2), Laplace's rule of succession: n answers, all right, support a
    /// confidence of (n + 1)/(n + 2), not certainty. Without it a few dozen held-out photos that a head gets all
    /// right would sharpen every later answer to 100 %; with Stanford Dogs' 1,200 it changes nothing visible.
    public static func temperature(logits: [Float], labels: [Int], classes: Int) -> Float {
        guard !labels.isEmpty else { return 1 }
        let smoothing = 1 / Double(labels.count + 2)
        func loss(_ logT: Double) -> Double {
            let t = Foundation.exp(logT)
            var total = 0.0
            for (r, label) in labels.enumerated() {
                let row = logits[(r * classes)..<((r + 1) * classes)]
                let m = Double(row.max()!) / t
                let logSum = Foundation.log(row.reduce(0.0) { $0 + Foundation.exp(Double($1) / t - m) }) + m
                // −Σ target · log p, with (1 − s) on the label and s spread evenly over all classes.
                let mean = row.reduce(0.0) { $0 + Double($1) } / Double(classes) / t
                total += (1 - smoothing) * (logSum - Double(row[row.startIndex + label]) / t) + smoothing * (logSum - mean)
            }
            return total / Double(labels.count)
        }
        var lo = Foundation.log(0.05), hi = Foundation.log(20.0)
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo)
        var fa = loss(a), fb = loss(b)
        for _ in 0..<40 {
            if fa < fb { hi = b; b = a; fb = fa; a = hi - ratio * (hi - lo); fa = loss(a) }
            else { lo = a; a = b; fa = fb; b = lo + ratio * (hi - lo); fb = loss(b) }
        }
        return Float(Foundation.exp((lo + hi) / 2))
    }

    /// Expected calibration error over `bins` equal-width confidence bins: Σ |accuracy − confidence| · share.
    public static func expectedCalibrationError(logits: [Float], labels: [Int], classes: Int, temperature: Float,
                                                bins: Int = 15) -> Float {
        guard !labels.isEmpty else { return 0 }
        var count = [Int](repeating: 0, count: bins), hits = [Double](repeating: 0, count: bins)
        var confidence = [Double](repeating: 0, count: bins)
        for (r, label) in labels.enumerated() {
            let row = logits[(r * classes)..<((r + 1) * classes)].map { Double($0 / temperature) }
            let m = row.max()!
            let sum = row.reduce(0.0) { $0 + Foundation.exp($1 - m) }
            let top = row.firstIndex(of: m)!
            let p = 1 / sum
            let bin = min(bins - 1, Int(p * Double(bins)))
            count[bin] += 1
            confidence[bin] += p
            if top == label { hits[bin] += 1 }
        }
        var ece = 0.0
        for b in 0..<bins where count[b] > 0 {
            ece += abs(hits[b] - confidence[b]) / Double(labels.count)
        }
        return Float(ece)
    }
}
