import DedogConcurrency
import Dispatch
import Foundation
import DedogImage
import DedogNN
import DedogBreedModel

/// Turns images into backbone features, through the cache, in bounded memory: images are decoded a small
/// batch at a time (on all threads), run through the network as one batch, and forgotten.
public final class FeatureExtractor {
    public let network: EfficientNetLite
    public let cache: FeatureCache?
    public let threads: Int
    public let batchSize: Int
    private let session: InferenceSession

    /// Backbone `b`'s identity for cache keys: its tensors' names (after its prefix) and bytes, and its
    /// input; not its heads. The same backbone has the same fingerprint in every file that holds it.
    /// With `precision` int8 and activation ranges, features come from the 8-bit layers: the ranges join the key,
    /// and how the layers are made (since issue 69, one operand of each in 7 bits; the same for every kernel set,
    /// which compute them exactly).
    public static func fingerprint(of tensors: SafeTensors, model: ModelDescription, backbone b: Int,
                                   input: InputDescription? = nil, precision: Precision = .fp32) -> String {
        var hash = ContentHash()
        let backbone = model.backbones[b]
        for name in ModelFile.backboneTensorNames(of: model, b, among: tensors.entries.keys) {
            hash.update(String(name.dropFirst(backbone.tensorPrefix.count)))
            hash.update(tensors.bytes(of: name))
        }
        let p = input ?? backbone.preprocessing
        // The fit only when it is not `crop`, so that caches made before fits existed stay valid.
        hash.update("\(p.resizeShorterSide) \(p.cropSize) \(p.mean) \(p.std) \(backbone.batchNormEpsilon)"
                    + (p.fit == .crop ? "" : " \(p.fit.rawValue)"))
        if precision == .int8, let ranges = backbone.activationRanges {
            hash.update("int8 one-7-bit-operand \(ranges.method) " + ranges.ranges.keys.sorted().map { "\($0) \(ranges.ranges[$0] ?? [])" }.joined(separator: " "))
        }
        return String(hash.hex.prefix(16))
    }

    /// The input the features are computed from: the network's own unless another is given.
    public let input: InputDescription

    /// `precision`: training extracts in fp32 (the heads learn the float features); evaluation as classify runs.
    public init(network: EfficientNetLite, input: InputDescription? = nil, cache: FeatureCache?, threads: Int,
                kernels: KernelSet = .best, precision: Precision = .fp32, batchSize: Int = 8) {
        self.network = network
        self.input = input ?? network.input
        self.cache = cache
        self.threads = max(1, threads)
        self.batchSize = max(1, batchSize)
        session = network.makeSession(threads: threads, kernels: kernels, precision: precision)
    }

    public struct Result {
        /// [sample × view × 1280], one flat block (no per-image arrays); rows of failed samples are zero.
        public var features: [Float]
        public let views: Int
        /// Whether each sample's features are there (false where the image could not be used).
        public var present: [Bool]
        /// Index of the sample and why it failed.
        public var failures: [(index: Int, message: String)] = []
        public var fromCache = 0
        public var computed = 0
        /// Why the cache stopped storing features, if it did.
        public var cacheProblem: String?

        init(samples: Int, views: Int) {
            features = [Float](repeating: 0, count: samples * views * EfficientNetLite.featureCount)
            self.views = views
            present = Array(repeating: false, count: samples)
        }

        /// All views of one sample, view after view.
        public func features(of sample: Int) -> ArraySlice<Float> {
            let size = views * EfficientNetLite.featureCount
            return features[(sample * size)..<((sample + 1) * size)]
        }

        mutating func set(_ sample: Int, view: Int, _ values: ArraySlice<Float>) {
            let width = EfficientNetLite.featureCount
            let start = (sample * views + view) * width
            features.replaceSubrange(start..<(start + width), with: values)
        }

        /// Drops the rows of the samples that failed, in place; returns the indices of the samples kept.
        public mutating func removeFailed() -> [Int] {
            let size = views * EfficientNetLite.featureCount
            var kept: [Int] = []
            for i in present.indices where present[i] {
                if kept.count != i {
                    let to = kept.count * size
                    features.withUnsafeMutableBufferPointer { f in
                        f.baseAddress!.advanced(by: to).update(from: f.baseAddress!.advanced(by: i * size), count: size)
                    }
                }
                kept.append(i)
            }
            features.removeSubrange((kept.count * size)...)
            present = Array(repeating: true, count: kept.count)
            return kept
        }
    }

    /// Bytes of feature memory for `samples` images of `views` views each.
    public static func memoryNeeded(samples: Int, views: Int) -> Int {
        samples * views * EfficientNetLite.featureCount * MemoryLayout<Float>.size
    }

    /// Features of every file in `urls` for every view in `views`. `progress(done, total)` is called after each batch.
    public func features(of urls: [URL], views: [FeatureView], progress: (Int, Int) -> Void = { _, _ in })
        throws(TrainError) -> Result {
        var result = Result(samples: urls.count, views: views.count)
        let viewPreprocessing = views.map { $0.preprocessing(from: input) }
        let decoder = ImageDecoder(options: .init(minimumShorterSide: viewPreprocessing.map(\.resizeShorterSide).max()))
        let width = EfficientNetLite.featureCount
        let plane = 3 * input.cropSize * input.cropSize

        var start = 0
        while start < urls.count {
            let range = start..<min(urls.count, start + batchSize)
            // Read, hash and decode the batch in parallel.
            let cache = self.cache
            let slots = parallelMap(range.count, threads: threads) { i -> Slot in
                let url = urls[range.lowerBound + i]
                let bytes: [UInt8]
                do throws(ImageError) {
                    bytes = try decoder.read(url)
                } catch {
                    return .failed(error.description)
                }
                let key = ContentHash.of(bytes)
                let cached = views.map { cache?.load(key, view: $0) }
                if cached.allSatisfy({ $0 != nil }) { return .cached(cached.map { $0! }) }
                // Decode once and compute only the views the cache does not have.
                do throws(ImageError) {
                    let image = try decoder.decode(bytes, name: url.path)
                    var inputs: [Int: [Float]] = [:]
                    for (v, view) in views.enumerated() where cached[v] == nil {
                        inputs[v] = try viewPreprocessing[v].tensor(image, mirrored: view.isMirrored)
                    }
                    return .decoded(key: key, cached: cached, inputs: inputs)
                } catch {
                    return .failed(error.description)
                }
            }
            // One network batch for everything that was decoded.
            var pending: [(slot: Int, view: Int, key: String)] = []
            var computedSlots: [Int] = []
            var batchInput: [Float] = []
            batchInput.reserveCapacity(range.count * views.count * plane)
            for i in 0..<range.count {
                switch slots[i] {
                case let .cached(f):
                    for (v, values) in f.enumerated() { result.set(range.lowerBound + i, view: v, values[...]) }
                    result.present[range.lowerBound + i] = true
                    result.fromCache += 1
                case let .failed(message):
                    result.failures.append((range.lowerBound + i, message))
                case let .decoded(key, cached, inputs):
                    for (v, values) in cached.enumerated() {
                        if let values { result.set(range.lowerBound + i, view: v, values[...]) }
                    }
                    computedSlots.append(i)
                    for (v, input) in inputs.sorted(by: { $0.key < $1.key }) {
                        pending.append((i, v, key))
                        batchInput += input
                    }
                }
            }
            if !pending.isEmpty {
                let out: [Float]
                do throws(ModelError) {
                    out = try session.features(batchInput, batch: pending.count, height: input.cropSize,
                                               width: input.cropSize)
                } catch {
                    throw .model(error)
                }
                for (j, p) in pending.enumerated() {
                    let f = out[(j * width)..<((j + 1) * width)]
                    result.set(range.lowerBound + p.slot, view: p.view, f)
                    if let cache, result.cacheProblem == nil {
                        // The cache only saves time: when it cannot store (a full disk), training goes on without it.
                        do throws(TrainError) {
                            try cache.store(Array(f), key: p.key, view: views[p.view])
                        } catch {
                            result.cacheProblem = error.description
                        }
                    }
                }
            }
            for slot in computedSlots { result.present[range.lowerBound + slot] = true }
            result.computed += computedSlots.count
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
}
