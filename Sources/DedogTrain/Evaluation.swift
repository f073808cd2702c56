import DedogNN
import DedogBreedModel
import Foundation

/// How well a head does on labelled features: accuracy, per class, the most confused pairs, calibration.
public struct EvaluationReport: Sendable, Codable, Equatable {
    public struct ClassAccuracy: Sendable, Codable, Equatable {
        public var label: String
        public var samples: Int
        public var top1: Float
    }

    public struct Confusion: Sendable, Codable, Equatable {
        public var actual: String
        public var predicted: String
        public var count: Int
    }

    public var samples: Int
    public var top1: Float
    public var top5: Float
    public var loss: Float
    /// Expected calibration error of the top-1 confidence (15 bins), with the model's temperature.
    public var expectedCalibrationError: Float
    public var temperature: Float
    public var perClass: [ClassAccuracy]
    public var mostConfused: [Confusion]
    /// What classify would answer for these photos (set by `Evaluator`, which knows the model's thresholds).
    public var verdicts: VerdictCounts?
    /// What classify would answer for photos of breeds the model does not know (dataset folders that are none of
    /// its labels); `dog` counts confident wrong answers.
    public var otherBreeds: VerdictCounts?
    /// Network time for one photo, every backbone and view, on one thread (set by `Evaluator`).
    public var millisecondsPerPhoto: Double?
    /// Each photo's top-1 class (an index into the report's classes), in the order evaluated: to compare two runs
    /// on the same photos. Not in the JSON.
    public var answers: [Int] = []
    /// The share of photos whose top-1 answer is the one another run on the same photos gave (`dedog evaluate
    /// --precision all`: int8 against fp32).
    public var agreement: Float?

    private enum CodingKeys: String, CodingKey {
        case samples, top1, top5, loss, expectedCalibrationError, temperature, perClass, mostConfused, verdicts, otherBreeds,
             millisecondsPerPhoto, agreement
    }

    /// The share of photos both reports answer alike (nil unless both hold the same number of answers).
    public func agreement(with other: EvaluationReport) -> Float? {
        guard !answers.isEmpty, answers.count == other.answers.count else { return nil }
        return Float(zip(answers, other.answers).filter { $0 == $1 }.count) / Float(answers.count)
    }

    /// Evaluates logits [n × classes] against `labels`.
    public init(logits: [Float], labels: [Int], classNames: [String], temperature: Float, confusedPairs: Int = 10) {
        let classes = classNames.count
        let summary = HeadTrainer.summarize(logits: logits, labels: labels, classes: classes, temperature: temperature)
        samples = labels.count
        top1 = summary.top1
        top5 = summary.top5
        loss = summary.loss
        self.temperature = temperature
        expectedCalibrationError = Calibration.expectedCalibrationError(logits: logits, labels: labels, classes: classes,
                                                                        temperature: temperature)
        var hits = [Int](repeating: 0, count: classes), counts = [Int](repeating: 0, count: classes)
        var pairs: [Int: Int] = [:]
        for (r, label) in labels.enumerated() {
            let row = logits[(r * classes)..<((r + 1) * classes)]
            let predicted = row.indices.max { row[$0] < row[$1] }! - row.startIndex
            answers.append(predicted)
            counts[label] += 1
            if predicted == label { hits[label] += 1 } else { pairs[label * classes + predicted, default: 0] += 1 }
        }
        perClass = classNames.indices.map {
            ClassAccuracy(label: classNames[$0], samples: counts[$0], top1: counts[$0] > 0 ? Float(hits[$0]) / Float(counts[$0]) : 0)
        }
        mostConfused = pairs.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(confusedPairs)
            .map { Confusion(actual: classNames[$0.key / classes], predicted: classNames[$0.key % classes], count: $0.value) }
    }
}

/// How many photos got each verdict, and how often the confident ones were right.
public struct VerdictCounts: Sendable, Codable, Equatable {
    public var dog = 0
    public var unsure = 0
    public var noDog = 0
    /// Photos called "not one of my breeds".
    public var otherBreed = 0
    /// Of the `dog` verdicts, how many named the right breed.
    public var dogCorrect = 0

    public init() {}

    mutating func add(_ verdict: Verdict, correct: Bool) {
        switch verdict {
        case .dog:
            dog += 1
            if correct { dogCorrect += 1 }
        case .unsure: unsure += 1
        case .noDog: noDog += 1
        case .otherBreed: otherBreed += 1
        }
    }

    public var total: Int { dog + unsure + noDog + otherBreed }
    /// Share of photos called unsure.
    public var unsureShare: Float { total > 0 ? Float(unsure) / Float(total) : 0 }
    /// Share of photos (all showing dogs in a breed dataset) called "no dog".
    public var noDogShare: Float { total > 0 ? Float(noDog) / Float(total) : 0 }
    /// Top-1 accuracy of the confident ("dog") answers.
    public var confidentTop1: Float { dog > 0 ? Float(dogCorrect) / Float(dog) : 0 }
}
