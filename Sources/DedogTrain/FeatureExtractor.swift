import Dispatch
import Foundation
import DedogImage
import DedogNN

/// Turns images into backbone features, through the cache, in bounded memory: images are decoded a small
/// batch at a time (on all threads), run through the network as one batch, and forgotten.
public final class FeatureExtractor {
    public let network: EfficientNetLite
    public let cache: FeatureCache?
    public let threads: Int
    public let batchSize: Int
    private let session: InferenceSession

    /// The backbone's identity for cache keys: its tensors' bytes and its preprocessing, not its heads.
    public static func fingerprint(of tensors: SafeTensors, model: ModelDescription) -> String {
        var hash = ContentHash()
        let heads = Set([model.imagenetHead, model.breedHead].compactMap { $0 }.flatMap { [$0.weight, $0.bias] })
        for name in tensors.entries.keys.sorted() where !heads.contains(name) {
            hash.update(name)
            hash.update(tensors.bytes(of: name))
        }
        let p = model.preprocessing
        hash.update("\(p.resizeShorterSide) \(p.cropSize) \(p.mean) \(p.std) \(model.batchNormEpsilon)")
        return String(hash.hex.prefix(16))
    }

    public init(network: EfficientNetLite, cache: FeatureCache?, threads: Int, batchSize: Int = 8) {
        self.network = network
        self.cache = cache
        self.threads = max(1, threads)
        self.batchSize = max(1, batchSize)
        session = network.makeSession(threads: threads)
    }

    public struct Result {
        /// [sample][view] → 1280 features, nil where the image could not be used.
        public var features: [[[Float]]?]
        /// Index of the sample and why it failed.
        public var failures: [(index: Int, message: String)]
        public var fromCache = 0
        public var computed = 0
    }

    /// Features of every file in `urls` for every view in `views`. `progress(done, total)` is called after each batch.
    public func features(of urls: [URL], views: [FeatureView], progress: (Int, Int) -> Void = { _, _ in })
        throws(TrainError) -> Result {
        var result = Result(features: Array(repeating: nil, count: urls.count), failures: [])
        let preprocessing = network.model.preprocessing
        let viewPreprocessing = views.map { $0.preprocessing(from: preprocessing) }
        let decoder = ImageDecoder(options: .init(minimumShorterSide: viewPreprocessing.map(\.resizeShorterSide).max()))
        let width = EfficientNetLite.featureCount
        let plane = 3 * preprocessing.cropSize * preprocessing.cropSize

        var start = 0
        while start < urls.count {
            let range = start..<min(urls.count, start + batchSize)
            // Read, hash and decode the batch in parallel; each slot is written by one worker only.
            let slots = Slots(count: range.count)
            let cache = self.cache
            parallelWork(range.count, threads: threads) { i in
                let url = urls[range.lowerBound + i]
                guard let data = try? Data(contentsOf: url) else {
                    slots.set(i, .failed("\(url.path): cannot read the file"))
                    return
                }
                let key = ContentHash.of(data)
                let cached = views.map { cache?.load(key, view: $0) }
                if cached.allSatisfy({ $0 != nil }) {
                    slots.set(i, .cached(cached.map { $0! }))
                    return
                }
                // Decode once and compute only the views the cache does not have.
                do throws(ImageError) {
                    let image = try decoder.decode(Array(data), name: url.path)
                    var inputs: [Int: [Float]] = [:]
                    for (v, view) in views.enumerated() where cached[v] == nil {
                        inputs[v] = viewPreprocessing[v].tensor(view.isMirrored ? image.mirrored() : image)
                    }
                    slots.set(i, .decoded(key: key, cached: cached, inputs: inputs))
                } catch {
                    slots.set(i, .failed(error.description))
                }
            }
            // One network batch for everything that was decoded.
            var pending: [(slot: Int, view: Int, key: String)] = []
            var partial: [Int: [[Float]?]] = [:]
            var batchInput: [Float] = []
            batchInput.reserveCapacity(range.count * views.count * plane)
            for i in 0..<range.count {
                switch slots.values[i] {
                case let .cached(f):
                    result.features[range.lowerBound + i] = f
                    result.fromCache += 1
                case let .failed(message):
                    result.failures.append((range.lowerBound + i, message))
                case let .decoded(key, cached, inputs):
                    partial[i] = cached
                    for (v, input) in inputs.sorted(by: { $0.key < $1.key }) {
                        pending.append((i, v, key))
                        batchInput += input
                    }
                case nil:
                    result.failures.append((range.lowerBound + i, "\(urls[range.lowerBound + i].path): not processed"))
                }
            }
            if !pending.isEmpty {
                let out: [Float]
                do throws(ModelError) {
                    out = try session.features(batchInput, batch: pending.count, height: preprocessing.cropSize,
                                               width: preprocessing.cropSize)
                } catch {
                    throw .model(error.description)
                }
                for (j, p) in pending.enumerated() {
                    let f = Array(out[(j * width)..<((j + 1) * width)])
                    partial[p.slot]![p.view] = f
                    try cache?.store(f, key: p.key, view: views[p.view])
                }
                for (slot, f) in partial {
                    result.features[range.lowerBound + slot] = f.map { $0! }
                    result.computed += 1
                }
            }
            start = range.upperBound
            progress(start, urls.count)
        }
        return result
    }

    private enum Slot {
        case cached([[Float]])
        case decoded(key: String, cached: [[Float]?], inputs: [Int: [Float]])
        case failed(String)
    }

    /// One result per parallel worker index; each index is written by exactly one worker.
    private final class Slots: @unchecked Sendable {
        var values: [Slot?]
        private let lock = NSLock()
        init(count: Int) { values = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ slot: Slot) {
            lock.lock()
            values[i] = slot
            lock.unlock()
        }
    }
}

/// Runs `body(i)` for i in 0..<count on up to `threads` threads.
func parallelWork(_ count: Int, threads: Int, _ body: @Sendable (Int) -> Void) {
    if threads <= 1 || count <= 1 {
        for i in 0..<count { body(i) }
        return
    }
    let workers = min(threads, count)
    DispatchQueue.concurrentPerform(iterations: workers) { w in
        var i = w
        while i < count {
            body(i)
            i += workers
        }
    }
}
