import Foundation
import DedogNN

/// What `dedog evaluate` does: a model on a labelled ImageFolder dataset (optionally one split file of it).
public enum Evaluator {
    public static func run(model url: URL, dataset root: URL, split: URL?, cacheRoot: URL?, threads: Int,
                           memoryLimit: Int? = nil, progress: (TrainProgress) -> Void = { _ in }) throws(TrainError) -> EvaluationReport {
        let dataset = try Dataset(root: root)
        let samples = try split.map { url throws(TrainError) in try dataset.samples(listedIn: url) } ?? dataset.samples
        let tensors: SafeTensors, network: EfficientNetLite
        // Checked for the larger case (two views) before the model is known.
        let needed = FeatureExtractor.memoryNeeded(samples: samples.count, views: 2) + Trainer.workingMemory
        if let memoryLimit, needed > memoryLimit {
            throw .memoryLimit(task: "evaluating \(samples.count) images", needed: needed, limit: memoryLimit)
        }
        do {
            tensors = try SafeTensors(contentsOf: url)
            network = try EfficientNetLite(tensors: tensors)
        } catch {
            throw .model(error.description)
        }
        // Which output of the model stands for each dataset class.
        let head: Linear, labels: [Label], temperature: Float
        if let h = network.breedHead, let d = network.model.breedHead {
            (head, labels, temperature) = (h, d.labels, d.temperature ?? 1)
        } else if let h = network.imagenetHead, let d = network.model.imagenetHead {
            (head, labels, temperature) = (h, d.labels, d.temperature ?? 1)
        } else {
            throw .labelsMismatch(detail: "it has no classifier head")
        }
        let index = Dictionary(labels.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        let rows = dataset.classes.map { index[$0] }
        if let unknown = dataset.classes.indices.first(where: { rows[$0] == nil }) {
            throw .labelsMismatch(detail: "class \(dataset.classes[unknown]) is not among the model's labels")
        }

        let cache = try cacheRoot.map { root throws(TrainError) in
            try FeatureCache(root: root, backboneFingerprint: FeatureExtractor.fingerprint(of: tensors, model: network.model),
                             width: EfficientNetLite.featureCount)
        }
        let mirror = network.model.averagesMirror ?? false
        let result = try FeatureExtractor(network: network, cache: cache, threads: threads)
            .features(of: samples.map(dataset.url), views: mirror ? [.center, .mirrored] : [.center]) {
                progress(.extracting(phase: "evaluate", done: $0, total: $1))
            }
        var logits: [Float] = [], y: [Int] = []
        let classes = dataset.classes.count
        for i in result.present.indices where result.present[i] {
            // Logits averaged over the views, as classify does.
            let averaged: [Float]
            do {
                averaged = try head.averaged(Array(result.features(of: i)), views: result.views)
            } catch {
                throw .model(error.description)
            }
            logits += rows.map { averaged[$0!] }
            y.append(samples[i].label)
        }
        // `rows` has one entry per class (checked above), so each image adds `classes` logits.
        assert(logits.count == y.count * classes)
        return EvaluationReport(logits: logits, labels: y, classNames: dataset.classes, temperature: temperature)
    }
}
