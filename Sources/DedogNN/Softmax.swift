import Foundation

/// The softmax of a row of logits, at a temperature, computed stably (the largest logit subtracted first).
public enum Softmax {
    public static func probabilities(_ logits: [Float], temperature: Float = 1) -> [Float] {
        logProbabilities(logits, temperature: temperature).map { Foundation.exp($0) }
    }

    public static func logProbabilities(_ logits: [Float], temperature: Float = 1) -> [Float] {
        let scaled = logits.map { $0 / temperature }
        let top = scaled.max() ?? 0
        let logSum = Foundation.log(scaled.reduce(Float(0)) { $0 + Foundation.exp($1 - top) }) + top
        return scaled.map { $0 - logSum }
    }
}
