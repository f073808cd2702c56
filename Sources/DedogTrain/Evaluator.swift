import Foundation
import DedogImage
import DedogNN
import DedogBreedModel

/// What `dedog evaluate` does: a model on a labelled ImageFolder dataset (optionally one split file of it).
public enum Evaluator {
    /// `fit`: make photos square this way instead of as the model does (to compare fits on the same photos);
    /// `precision`: the backbones' arithmetic (int8 runs only where the model file has activation ranges; by default
    /// `Precision.preferred(for: kernels)`).
    public static func run(model url: URL, dataset root: URL, split: URL?, cacheRoot: URL?, threads: Int, kernels: KernelSet = .best,
                           precision: Precision? = nil,
                           memoryLimit: Int? = nil, timing: Bool = true, fit: InputDescription.Fit? = nil,
                           progress: (TrainProgress) -> Void = { _ in }) throws(TrainError) -> EvaluationReport {
        let precision = precision ?? .preferred(for: kernels)
        let dataset = try Dataset(root: root)
        let samples = try split.map { url throws(TrainError) in try dataset.samples(listedIn: url) } ?? dataset.samples
        let tensors: SafeTensors, model: Model
        do {
            tensors = try SafeTensors(contentsOf: url)
            model = try Model(tensors: tensors, kernels: kernels)
        } catch {
            throw .model(error)
        }
        let views = model.specification.backbones.map { ($0.averagesMirror ?? false) ? [FeatureView.center, .mirrored] : [.center] }
        let needed = views.reduce(0) { $0 + FeatureExtractor.memoryNeeded(samples: samples.count, views: $1.count) }
            + Trainer.workingMemory
        if let memoryLimit, needed > memoryLimit {
            throw .memoryLimit(task: "evaluating \(samples.count) images", needed: needed, limit: memoryLimit)
        }
        // Which output of the model stands for each dataset class.
        guard let labels = model.breedLabels ?? model.imagenetLabels else {
            throw .labelsMismatch(detail: "it has no classifier head")
        }
        let index = Dictionary(labels.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        let rows = dataset.classes.map { index[$0] }
        // Folders the model has no label for hold photos of other breeds: they measure how often the model names
        // one of its breeds for a dog it does not know (only a breed model can be asked that).
        guard rows.contains(where: { $0 != nil }) else {
            throw .labelsMismatch(detail: "none of the dataset's classes (\(dataset.classes.prefix(3).joined(separator: ", "))…) "
                                  + "is among the model's labels")
        }
        if model.breedLabels == nil, let unknown = dataset.classes.indices.first(where: { rows[$0] == nil }) {
            throw .labelsMismatch(detail: "class \(dataset.classes[unknown]) is not among the model's labels")
        }
        let known = dataset.classes.indices.filter { rows[$0] != nil }
        let knownIndex = Dictionary(uniqueKeysWithValues: known.enumerated().map { ($1, $0) })

        var results: [FeatureExtractor.Result] = []
        for (b, network) in model.backbones.enumerated() {
            var input = network.input
            input.fit = fit ?? input.fit
            let cache = try cacheRoot.map { root throws(TrainError) in
                try FeatureCache(root: root, backboneFingerprint: FeatureExtractor.fingerprint(
                                    of: tensors, model: model.specification, backbone: b, input: input,
                                    precision: precision),
                                 width: EfficientNetLite.featureCount)
            }
            let phase = model.backbones.count > 1 ? "evaluate (\(network.backbone))" : "evaluate"
            results.append(try FeatureExtractor(network: network, input: input, cache: cache, threads: threads, kernels: kernels,
                                                precision: precision)
                .features(of: samples.map(dataset.url), views: views[b]) {
                    progress(.extracting(phase: phase, done: $0, total: $1))
                })
        }
        var scores: [Float] = [], y: [Int] = []
        var verdicts = VerdictCounts(), others = VerdictCounts()
        let classes = known.count
        for i in samples.indices where results.allSatisfy({ $0.present[i] }) {
            // Scores combined over backbones and views, as classify does.
            let features = results.map { Array($0.features(of: i)) }
            let all: [Float]
            do {
                if let breed = try model.breedScores(features, precision: precision) {
                    all = breed
                } else {
                    all = (try model.imagenetProbabilities(features) ?? []).map { Foundation.log(max($0, .leastNormalMagnitude)) }
                }
            } catch {
                throw .model(error)
            }
            // The answer classify gives (the same decision, over all of the model's breeds or dog classes).
            let answer: Decision
            do {
                answer = try model.decide(features: features, top: 1, thresholds: model.specification.decision,
                                          precision: precision)
            } catch {
                throw .model(error)
            }
            guard let k = knownIndex[samples[i].label] else {
                others.add(answer.verdict, correct: false)
                continue
            }
            scores += known.map { all[rows[$0]!] }
            y.append(k)
            verdicts.add(answer.verdict, correct: answer.breeds.first?.key == dataset.classes[samples[i].label])
        }
        // `rows` has one entry per class (checked above), so each image adds `classes` scores.
        assert(scores.count == y.count * classes)
        var report = EvaluationReport(logits: scores, labels: y, classNames: known.map { dataset.classes[$0] },
                                      temperature: model.combinedTemperature(for: precision))
        report.verdicts = verdicts
        report.otherBreeds = others.total > 0 ? others : nil
        if timing, let first = samples.indices.first(where: { i in results.allSatisfy { $0.present[i] } }) {
            report.millisecondsPerPhoto = try timePerPhoto(model, photo: dataset.url(samples[first]), precision: precision)
        }
        return report
    }

    /// The time one photo takes through every backbone and its views, on one thread (decoded once beforehand;
    /// the fastest of 5 runs after a warm-up, so that it measures the model rather than the machine's noise).
    static func timePerPhoto(_ model: Model, photo: URL, precision: Precision) throws(TrainError) -> Double? {
        let largest = model.backbones.map(\.input.resizeShorterSide).max()
        guard let image = try? ImageDecoder(options: .init(minimumShorterSide: largest)).decode(contentsOf: photo) else { return nil }
        let sessions = model.backbones.map { $0.makeSession(threads: 1, precision: precision) }
        var best = Double.infinity
        for run in 0..<6 {
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                var features: [[Float]] = []
                for (b, (network, session)) in zip(model.backbones, sessions).enumerated() {
                    let input = try network.inputTensor(for: image, mirrored: model.specification.backbones[b].averagesMirror ?? false)
                    features.append(try session.features(input.tensor, batch: input.views))
                }
                _ = try model.breedProbabilities(features, precision: precision)
                _ = try model.imagenetProbabilities(features)
            } catch {
                return nil
            }
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            if run > 0 { best = min(best, ms) }
        }
        return best
    }
}
