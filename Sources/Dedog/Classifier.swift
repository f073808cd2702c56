import Foundation
import DedogImage
import DedogNN

/// Image in, ranked breeds out; safe to share between threads and tasks.
///
/// ```swift
/// let classifier = try Classifier(modelURL: nil, configuration: .init(workers: 2))   // the bundled model
/// let result = try classifier.classify(contentsOf: URL(fileURLWithPath: "rex.jpg"), top: 3)
/// print(result.verdict, result.breeds.first?.name ?? "-")
/// ```
///
/// The loaded model is immutable; what a forward pass writes (execution plans, activation buffers) lives in a
/// workspace that one classification at a time checks out of a bounded pool. `configuration.workers` is how many
/// classifications run at once (callers beyond that wait), `threadsPerWorker` how many threads each uses inside
/// the network: their product is the process's thread budget.
///
/// How the decisions are made: see `Model.decide(features:top:thresholds:)`. The thresholds live in the model
/// file, so a retrained model carries its own.
public final class Classifier: Sendable {
    public let modelURL: URL
    public let model: Model
    public let configuration: ClassifierConfiguration
    public let decoderOptions: ImageDecoder.Options
    /// When a photo counts as no dog or unsure: the model file's thresholds unless the configuration overrides them.
    public let decision: DecisionThresholds
    /// Per backbone, whether each photo is also run mirrored and the two averaged: the model file's choice unless
    /// the configuration overrides it.
    public let averagesMirror: [Bool]
    private let workspaces: WorkspacePool

    /// The model in `modelURL`, or the default one (`ModelLocator.model(nil)`).
    public convenience init(modelURL: URL? = nil, configuration: ClassifierConfiguration = .init()) throws(ClassifierError) {
        let url: URL
        if let modelURL { url = modelURL } else { url = try ModelLocator.model(nil) }
        let model: Model
        do {
            model = try Model(contentsOf: url)
        } catch {
            throw .model(error)
        }
        try self.init(model: model, modelURL: url, configuration: configuration)
    }

    /// One classification at a time with `threads` threads inside the network (the command line's way).
    public convenience init(modelURL: URL? = nil, threads: Int) throws(ClassifierError) {
        try self.init(modelURL: modelURL, configuration: .init(threadsPerWorker: threads))
    }

    /// A classifier for a model already loaded (from `modelURL`, which it only reports).
    public init(model: Model, modelURL: URL, configuration: ClassifierConfiguration = .init()) throws(ClassifierError) {
        self.model = model
        self.modelURL = modelURL
        self.configuration = configuration
        // Decode large JPEGs only as far as the largest resize needs (DCT scaling).
        decoderOptions = ImageDecoder.Options(maxPixels: configuration.maxPixels, maxFileBytes: configuration.maxFileBytes,
                                              minimumShorterSide: model.backbones.map(\.input.resizeShorterSide).max())
        decision = configuration.decision ?? model.specification.decision
        let mirror = configuration.averagesMirror ?? model.specification.backbones.map { $0.averagesMirror ?? false }
        guard mirror.count == model.backbones.count else {
            throw .model(.badInput(detail: "mirror averaging given for \(mirror.count) backbones of a model with \(model.backbones.count)"))
        }
        averagesMirror = mirror
        let threads = max(1, configuration.threadsPerWorker), kernels = configuration.kernels
        workspaces = WorkspacePool(capacity: max(1, configuration.workers)) {
            Workspace(sessions: model.backbones.map { $0.makeSession(threads: threads, kernels: kernels) })
        }
    }

    /// Every label the model can name (the breed head's, or the dog classes of the ImageNet head).
    public var breedLabels: [Label] {
        model.breedLabels ?? model.imagenetLabels?.filter(\.isDog) ?? []
    }

    public func classify(contentsOf url: URL, top: Int = 3) throws(ClassifierError) -> Classification {
        let image: RGBImage
        do {
            image = try ImageDecoder(options: decoderOptions).decode(contentsOf: url)
        } catch {
            throw .image(error)
        }
        return try classify(image, top: top)
    }

    /// A photo's file content (as received over the network), with the same size and pixel limits as a file;
    /// `name` labels it in errors.
    public func classify(bytes: [UInt8], name: String, top: Int = 3) throws(ClassifierError) -> Classification {
        let image: RGBImage
        do {
            image = try ImageDecoder(options: decoderOptions).decode(bytes, name: name)
        } catch {
            throw .image(error)
        }
        return try classify(image, top: top)
    }

    public func classify(_ image: RGBImage, top: Int = 3) throws(ClassifierError) -> Classification {
        try decide(features: features(of: image), top: top)
    }

    /// Each backbone's pooled features of the views classify runs, [views × 1280] per backbone.
    public func features(of image: RGBImage) throws(ClassifierError) -> [[Float]] {
        guard image.width > 0, image.height > 0 else { throw .image(.empty(file: "the image")) }
        var inputs: [(tensor: [Float], views: Int)] = []
        for (b, network) in model.backbones.enumerated() {
            do {
                inputs.append(try network.inputTensor(for: image, mirrored: averagesMirror[b]))
            } catch {
                throw .image(error)
            }
        }
        return try workspaces.use { workspace throws(ClassifierError) in
            var features: [[Float]] = []
            for (b, input) in inputs.enumerated() {
                do throws(ModelError) {
                    features.append(try workspace.sessions[b].features(input.tensor, batch: input.views))
                } catch {
                    throw .model(error)
                }
            }
            return features
        }
    }

    /// The verdict and ranking for one image from each backbone's pooled features (`features[b]`: that backbone's
    /// views, [views × 1280]), with this classifier's thresholds.
    public func decide(features: [[Float]], top: Int) throws(ClassifierError) -> Classification {
        do {
            return try model.decide(features: features, top: top, thresholds: decision)
        } catch {
            throw .model(error)
        }
    }
}

/// How a `Classifier` runs: its share of the machine, which kernels, and the limits on photos.
public struct ClassifierConfiguration: Sendable, Equatable {
    /// How many photos may be classified at once; each has a workspace of its own (plans and activation buffers,
    /// about 10–40 MB by model). Callers beyond that wait for a workspace.
    public var workers: Int
    /// Threads one classification uses inside the network.
    public var threadsPerWorker: Int
    /// Which build of the C kernels runs (the front end reads `DEDOG_KERNELS`, not the library).
    public var kernels: KernelSet
    /// Photos declaring more pixels than this are refused from their header, before decoding.
    public var maxPixels: Int
    /// Files (or received bodies) larger than this are refused before they are read or decoded.
    public var maxFileBytes: Int
    /// Thresholds to use instead of the model file's (experiments and tests).
    public var decision: DecisionThresholds?
    /// Per backbone, mirror averaging instead of the model file's choice (experiments and tests).
    public var averagesMirror: [Bool]?

    public init(workers: Int = 1, threadsPerWorker: Int = 1, kernels: KernelSet = .best,
                maxPixels: Int = 100_000_000, maxFileBytes: Int = 512 << 20,
                decision: DecisionThresholds? = nil, averagesMirror: [Bool]? = nil) {
        self.workers = workers
        self.threadsPerWorker = threadsPerWorker
        self.kernels = kernels
        self.maxPixels = maxPixels
        self.maxFileBytes = maxFileBytes
        self.decision = decision
        self.averagesMirror = averagesMirror
    }
}

/// What one classification writes while it runs: an inference session (plans, activation buffers, worker
/// threads) per backbone. Only the classification that checked it out touches it.
final class Workspace: @unchecked Sendable {
    let sessions: [InferenceSession]

    init(sessions: [InferenceSession]) {
        self.sessions = sessions
    }
}

/// At most `capacity` workspaces, made when first needed and reused; a caller finding all of them in use waits
/// for one to come back.
final class WorkspacePool: @unchecked Sendable {
    private let capacity: Int
    private let make: @Sendable () -> Workspace
    private let condition = NSCondition()
    private var idle: [Workspace] = []  // guarded by `condition`
    private var made = 0  // guarded by `condition`

    init(capacity: Int, make: @escaping @Sendable () -> Workspace) {
        self.capacity = capacity
        self.make = make
    }

    func use<T, E: Error>(_ body: (Workspace) throws(E) -> T) throws(E) -> T {
        let workspace = checkOut()
        defer { checkIn(workspace) }
        return try body(workspace)
    }

    private func checkOut() -> Workspace {
        condition.lock()
        defer { condition.unlock() }
        while idle.isEmpty && made >= capacity { condition.wait() }
        if let workspace = idle.popLast() { return workspace }
        made += 1
        return make()
    }

    private func checkIn(_ workspace: Workspace) {
        condition.lock()
        idle.append(workspace)
        condition.signal()
        condition.unlock()
    }
}
