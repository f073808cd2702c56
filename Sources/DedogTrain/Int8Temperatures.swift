import Foundation
import DedogNN
import DedogBreedModel

/// The temperatures of a model's 8-bit answers (`BackboneDescription.int8BreedTemperature`,
/// `ModelDescription.int8CombinedTemperature`), fitted as training fits the float ones: on held-out photos, from
/// each backbone's 8-bit features over the views classify averages. The float temperatures, the heads and every
/// tensor stay as they are. `dedog train` runs it on its validation photos; `DedogBench int8-temperatures` did it
/// for the bundled models, on the same photos their training held out.
public enum Int8Temperatures {
    /// `model`'s description with its 8-bit temperatures fitted on `photos`, whose breed labels (indices into
    /// `model.breedLabels`) are `labels`. Unchanged for a model without a breed head or activation ranges, or when
    /// fewer than `Trainer.minimumCalibrationPhotos` photos can be read (then its answers keep the float temperatures).
    /// `progress(done, total)` after each batch of photos, per backbone.
    public static func fit(_ model: Model, photos: [URL], labels: [Int], threads: Int, kernels: KernelSet = .best,
                           progress: (_ backbone: Int, _ done: Int, _ total: Int) -> Void = { _, _, _ in })
        throws(TrainError) -> ModelDescription {
        var description = model.specification
        guard photos.count == labels.count else {
            throw .labelsMismatch(detail: "\(labels.count) labels given for \(photos.count) calibration photos")
        }
        guard let classes = model.breedLabels?.count, description.backbones.contains(where: { $0.activationRanges != nil }),
              photos.count >= Trainer.minimumCalibrationPhotos else { return description }
        if let bad = labels.first(where: { !(0..<classes).contains($0) }) {
            throw .labelsMismatch(detail: "label \(bad) is not one of the model's \(classes) breeds")
        }
        var results: [FeatureExtractor.Result] = []
        for (b, network) in model.backbones.enumerated() {
            let views: [FeatureView] = description.backbones[b].averagesMirror == true ? [.center, .mirrored] : [.center]
            results.append(try FeatureExtractor(network: network, cache: nil, threads: threads, kernels: kernels, precision: .int8)
                .features(of: photos, views: views) { progress(b, $0, $1) })
        }
        let kept = photos.indices.filter { i in results.allSatisfy { $0.present[i] } }
        guard kept.count >= Trainer.minimumCalibrationPhotos else { return description }
        let keptLabels = kept.map { labels[$0] }
        // Each backbone's logits, averaged over its views, as `Model.breedScores` takes them.
        var logits: [[Float]] = []
        for (b, result) in results.enumerated() {
            guard let head = model.heads[b].breed else { return description }
            var rows: [Float] = []
            rows.reserveCapacity(kept.count * classes)
            for i in kept {
                do {
                    rows += try head.averaged(Array(result.features(of: i)), views: result.views)
                } catch {
                    throw .model(error)
                }
            }
            logits.append(rows)
            if description.backbones[b].activationRanges != nil {
                description.backbones[b].int8BreedTemperature =
                    Calibration.temperature(logits: rows, labels: keptLabels, classes: classes)
            }
        }
        // The combination, as `Model.breedScores` makes it at int8: the mean of the backbones' log-probabilities.
        if model.backbones.count > 1, description.combinedTemperature != nil {
            var combined = [Float](repeating: 0, count: kept.count * classes)
            for (b, rows) in logits.enumerated() {
                let t = description.backbones[b].breedTemperature(for: .int8)
                for r in kept.indices {
                    let logProbabilities = Model.logSoftmax(Array(rows[(r * classes)..<((r + 1) * classes)]), temperature: t)
                    for c in 0..<classes { combined[r * classes + c] += logProbabilities[c] / Float(logits.count) }
                }
            }
            description.int8CombinedTemperature = Calibration.temperature(logits: combined, labels: keptLabels, classes: classes)
        }
        return description
    }
}
