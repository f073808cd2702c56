import Foundation
import DedogConcurrency
import DedogImage
import DedogNN
import DedogBreedModel
import DedogBreedModel

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
/// How the decisions are made: see `DedogBreedModel/Verdict.swift`. The thresholds live in the model file, so a
/// retrained model carries its own.
public final class Classifier: Sendable {
    public let modelURL: URL
    @_spi(Testing) public let model: Model
    public let configuration: ClassifierConfiguration
    @_spi(Benchmarks) public let decoderOptions: ImageDecoder.Options
    /// When a photo counts as no dog or unsure: the model file's thresholds unless the configuration overrides them.
    public let decision: DecisionThresholds
    /// Per backbone, whether each photo is also run mirrored and the two averaged: the model file's choice unless
    /// the configuration overrides it.
    public let averagesMirror: [Bool]
    private let workspaces: ResourcePool<Workspace>

    /// The model in `modelURL`, or the bundled default one.
    public convenience init(modelURL: URL? = nil, configuration: ClassifierConfiguration = .init()) throws(ClassifierError) {
        let url: URL
        if let modelURL { url = modelURL } else { url = try ModelLocator.url(ofBundled: "default") }
        let model: Model
        do {
            // Only the layers the configured precision runs (int8: no float layers to pack).
            model = try Model(contentsOf: url, precision: configuration.precision.engine, kernels: configuration.kernels.kernelSet)
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
    @_spi(Testing) public init(model: Model, modelURL: URL, configuration: ClassifierConfiguration = .init()) throws(ClassifierError) {
        self.model = model
        self.modelURL = modelURL
        self.configuration = configuration
        // Decode large JPEGs and HEICs only as far as the largest resize needs (DCT scaling, HEVC tiles reduced as
        // they are converted); where every backbone pads the photo to a square, a HEIC's thumbnail whose longer side
        // is within `thumbnailShortfall` of the resize is enough.
        let sizes = model.backbones.map(\.input.resizeShorterSide)
        let pads = model.backbones.allSatisfy { $0.input.fit == .pad }
        decoderOptions = ImageDecoder.Options(maxPixels: configuration.maxPixels, maxFileBytes: configuration.maxFileBytes,
                                              minimumShorterSide: sizes.max(),
                                              sufficientLongerSide: pads ? sizes.max().map(Self.sufficientSide) : nil)
        decision = configuration.decision ?? model.specification.decision
        let mirror = configuration.averagesMirror ?? model.specification.backbones.map { $0.averagesMirror ?? false }
        guard mirror.count == model.backbones.count else {
            throw .model(.badInput(detail: "mirror averaging given for \(mirror.count) backbones of a model with \(model.backbones.count)"))
        }
        averagesMirror = mirror
        let threads = max(1, configuration.threadsPerWorker), kernels = configuration.kernels.kernelSet
        let precision = configuration.precision.engine
        workspaces = ResourcePool(capacity: max(1, configuration.workers)) {
            Workspace(sessions: model.backbones.map { $0.makeSession(threads: threads, kernels: kernels, precision: precision) })
        }
    }

    /// A classifier like `other` but deciding with `decision`, sharing its model and workspaces.
    private init(_ other: Classifier, decision: DecisionThresholds) {
        (modelURL, model, configuration, decoderOptions) = (other.modelURL, other.model, other.configuration, other.decoderOptions)
        (averagesMirror, workspaces) = (other.averagesMirror, other.workspaces)
        self.decision = decision
    }

    /// This classifier in careful mode (`DecisionThresholds.careful`): a dog is named a breed only where few dogs of
    /// other breeds would be, for users who meet many mixed or rare dogs; more of the right answers become "a breed
    /// this model does not know". It shares this classifier's model and workspaces. Throws when the model has no
    /// careful point (only models whose unknown-breed rule was fitted on held-out breeds have one: the bundled ones).
    public func carefulMode() throws(ClassifierError) -> Classifier {
        guard let careful = decision.careful else { throw .noCarefulMode(model: modelURL.lastPathComponent) }
        return Classifier(self, decision: careful)
    }

    /// How far short of the network's resize a picture may be and still be enough: a HEIC's thumbnail standing in
    /// for the photo (phones store 320 pixels, the default model's Lite2 resizes to 334), or a rectangle of a photo
    /// decoded reduced. Scaled up those few pixels, the thumbnail answers as the photo does (scripts/bench-heic, the
    /// 2,400 restored Stanford test photos as HEICs with and without a 320-pixel thumbnail: docs/performance.md).
    static let thumbnailShortfall = 0.05

    /// The longer side a picture needs for a network that resizes to `side`.
    static func sufficientSide(_ side: Int) -> Int {
        Int((Double(side) * (1 - thumbnailShortfall)).rounded(.up))
    }

    /// Every label the model can name (the breed head's, or the dog classes of the ImageNet head).
    var breedLabels: [Label] {
        model.breedLabels ?? model.imagenetLabels?.filter(\.isDog) ?? []
    }

    /// The answer for the photo at `url`. After a first look (`FirstLook`, `dedog tag`'s), a photo it sees no dog in
    /// is answered "no dog" with the first look's dog share, without the model's own look; the photo is decoded
    /// once, for the model's look, and the first look reads that decode.
    public func classify(contentsOf url: URL, top: Int = 3, after first: FirstLook? = nil) throws(ClassifierError) -> Classification {
        let image: RGBImage
        do {
            image = try ImageDecoder(options: decoderOptions).decode(contentsOf: url)
        } catch {
            throw .image(error)
        }
        if let first {
            let signals = try first.signals(image)
            guard first.mayShowDog(signals) else { return Classification(verdict: .noDog, breeds: [], dogProbability: signals.dogShare) }
        }
        return try looks(at: image, top: top, zoom: configuration.zoom) { options throws(ImageError) in
            try ImageDecoder(options: options).decode(contentsOf: url)
        }.answer
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
        return try looks(at: image, top: top, zoom: configuration.zoom) { options throws(ImageError) in
            try ImageDecoder(options: options).decode(bytes, name: name)
        }.answer
    }

    /// Runs the model once on a blank picture, so that the first photo does not pay for plans and buffers.
    public func warmUp() throws(ClassifierError) {
        let blank: RGBImage
        do {
            blank = try RGBImage(width: 64, height: 64, pixels: [UInt8](repeating: 128, count: 64 * 64 * 3))
        } catch {
            throw .image(error)
        }
        _ = try classify(blank, top: 1)
    }

    /// The answer for `image`, with where the dog is (`configuration.locates`), looking again at a dog small in
    /// the frame (`configuration.zoom`).
    @_spi(Benchmarks) public func classify(_ image: RGBImage, top: Int = 3) throws(ClassifierError) -> Classification {
        try looks(at: image, top: top, zoom: configuration.zoom).answer
    }

    /// What one look at a photo found: the whole photo's answer, where the dog is, and, when `zoom` asked for
    /// it, the answer with a second look at the dog.
    @_spi(Benchmarks) public struct Looks: Sendable {
        /// The answer from the whole photo, with its location (not zoomed).
        public var whole: Classification
        /// The answer from the whole photo and the zoomed view together, or the held-back dog's own look where it
        /// names the breed (`ZoomPolicy.heldBackNamedFrom`); nil without a second look, or where it changes nothing.
        public var zoomed: Classification?
        /// The zoomed view's (or the held-back dog's) own answer; nil without a second look.
        public var closer: Classification?
        /// The share of the network's square the dog covers (see `DogPlace.extent`); nil when not located.
        public var extent: Double?
        /// One answer per dog when the detector finds two or more dogs (each checked by looking at its crop);
        /// empty otherwise.
        public var dogs: [Classification] = []
        /// The answer classify gives.
        public var answer: Classification {
            var answer = zoomed ?? whole
            answer.dogs = dogs
            return answer
        }
    }

    /// Photos of more dogs than this are answered for the first this many (the detector's best).
    static let mostDogs = 6

    /// Every box the detector finds in `image` scoring at least `minimumScore`, best first, in the photo's pixels
    /// (of the size it was decoded from), with its score: candidates for average precision. Empty without a detector.
    @_spi(Benchmarks) public func detections(in image: RGBImage, minimumScore: Float) throws(ClassifierError)
        -> [(location: DogLocation, score: Float)] {
        guard model.detector != nil else { return [] }  // no pass through the networks for nothing
        let pyramid = try views(of: image, maps: true).pyramid
        return try placed(pyramid, image: image) { detector, maps throws(ModelError) in try detector.candidates(maps, minimumScore: minimumScore) }
            .map { ($0.place.location(in: image, zoomed: false), $0.score) }
    }

    /// The dogs the model's detector finds in the photo, best first, with their scores, from the maps of its
    /// backbone's view that is not mirrored; none without a detector.
    func detectedDogs(_ pyramid: PyramidMaps?, image: RGBImage) throws(ClassifierError) -> [(place: DogPlace, score: Float)] {
        try placed(pyramid, image: image) { detector, maps throws(ModelError) in try detector.detect(maps) }
    }

    /// What `find` finds with the model's detector in `pyramid`, placed in the photo `image`; none without a
    /// detector or its maps.
    private func placed(_ pyramid: PyramidMaps?, image: RGBImage,
                        _ find: (DogDetector, PyramidMaps) throws(ModelError) -> [Detection]) throws(ClassifierError)
        -> [(place: DogPlace, score: Float)] {
        guard let detector = model.detector, let pyramid else { return [] }
        let found: [Detection]
        do {
            found = try find(detector, pyramid)
        } catch {
            throw .model(error)
        }
        let window = Preprocessing(model.backbones[detector.description.backbone].input).window(width: image.width, height: image.height)
        return found.compactMap { d in DogPlace(d, window: window, width: image.width, height: image.height).map { ($0, d.score) } }
    }

    /// The photo decoded again, larger, for the rectangles looked at on their own: a decode is kept and cut from
    /// again while it is large enough and holds the rectangle (a photo of two dogs, decoded reduced or from its
    /// thumbnail, is decoded again once where one decode holds both).
    final class LargerPhoto {
        let decode: (ImageDecoder.Options) throws(ImageError) -> RGBImage
        /// The last decode, and the part of the photo it holds (nil: all of it).
        var last: (image: RGBImage, region: PixelRect?)?
        init(_ decode: @escaping (ImageDecoder.Options) throws(ImageError) -> RGBImage) { self.decode = decode }
    }

    /// The rectangle `rect` of the photo: cut from `image`, or, when `image` was decoded smaller than the photo and
    /// the rectangle's longer side is short of `wanted` pixels (by more than `thumbnailShortfall`), from the photo
    /// decoded again just large enough.
    func crop(_ image: RGBImage, _ rect: (x: Int, y: Int, width: Int, height: Int), wanted: Int,
                      larger again: LargerPhoto?) throws(ImageError) -> RGBImage {
        let longer = max(rect.width, rect.height), enough = Self.sufficientSide(wanted)
        if longer < enough, let original = image.original, let again {
            // The rectangle in the photo's own pixels, rounded outwards: a HEIC grid decodes only the tiles under it.
            let sx = Double(original.width) / Double(image.width), sy = Double(original.height) / Double(image.height)
            let x0 = Int((Double(rect.x) * sx).rounded(.down)), y0 = Int((Double(rect.y) * sy).rounded(.down))
            let region = PixelRect(x: x0, y: y0, width: Int((Double(rect.x + rect.width) * sx).rounded(.up)) - x0,
                                   height: Int((Double(rect.y + rect.height) * sy).rounded(.up)) - y0)
            let larger: RGBImage
            if let last = again.last, last.image.width * longer >= enough * image.width,
               last.region.map({ $0.contains(region) }) ?? true {
                larger = last.image
            } else {
                var options = decoderOptions
                let shorter = min(image.width, image.height)
                options.minimumShorterSide = (wanted * shorter + longer - 1) / longer
                options.sufficientLongerSide = nil
                // A rectangle of more than half the photo: all of it, for the same cost, and another dog's
                // rectangle is then cut from the same decode.
                options.neededRegion = region.width * region.height * 2 < original.width * original.height ? region : nil
                larger = try again.decode(options)
                again.last = (larger, options.neededRegion)
            }
            if larger.width > image.width {
                let scale = Double(larger.width) / Double(image.width)
                let w = min(Int((Double(rect.width) * scale).rounded()), larger.width)
                let h = min(Int((Double(rect.height) * scale).rounded()), larger.height)
                let x = min(Int((Double(rect.x) * scale).rounded()), larger.width - w)
                let y = min(Int((Double(rect.y) * scale).rounded()), larger.height - h)
                return try larger.cropped(left: x, top: y, width: w, height: h)
            }
        }
        return try image.cropped(left: rect.x, top: rect.y, width: rect.width, height: rect.height)
    }

    /// Each backbone's pooled features of the views classify runs, [views × 1280] per backbone.
    @_spi(Benchmarks) public func features(of image: RGBImage) throws(ClassifierError) -> [[Float]] {
        try views(of: image, maps: false).features
    }

    /// Each backbone's pooled features of the views classify runs, and when `maps` the head's activation maps and,
    /// where the model has a detector that is used, the inner maps it reads (of its backbone's view and, where the
    /// backbone averages the mirror image, of that view too).
    func views(of image: RGBImage, maps wantsMaps: Bool)
        throws(ClassifierError) -> (features: [[Float]], maps: [FeatureMaps], pyramid: PyramidMaps?) {
        guard image.width > 0, image.height > 0 else { throw .image(.empty(file: "the image")) }
        var inputs: [(tensor: [Float], views: Int)] = []
        for (b, network) in model.backbones.enumerated() {
            do {
                inputs.append(try network.inputTensor(for: image, mirrored: averagesMirror[b]))
            } catch {
                throw .image(error)
            }
        }
        let detector = wantsMaps && configuration.usesDetector ? model.detector : nil
        return try workspaces.use { workspace throws(ClassifierError) in
            var features: [[Float]] = [], maps: [FeatureMaps] = [], pyramid: PyramidMaps?
            for (b, input) in inputs.enumerated() {
                do throws(ModelError) {
                    let session = workspace.sessions[b]
                    if let detector, detector.description.backbone == b {
                        let pass = try session.featuresAndMaps(input.tensor, batch: input.views,
                                                               keepingBlocks: [detector.blocks.fine, detector.blocks.coarse],
                                                               keptImages: averagesMirror[b] ? 2 : 1)
                        features.append(pass.features)
                        maps.append(pass.maps)
                        pyramid = PyramidMaps(fine: pass.blocks[0], coarse: pass.blocks[1], mirrored: averagesMirror[b])
                    } else if wantsMaps {
                        let both = try session.featuresAndMaps(input.tensor, batch: input.views)
                        features.append(both.features)
                        maps.append(both.maps)
                    } else {
                        features.append(try session.features(input.tensor, batch: input.views))
                    }
                } catch {
                    throw .model(error)
                }
            }
            return (features, maps, pyramid)
        }
    }

    /// The verdict and ranking for one image from each backbone's pooled features (`features[b]`: that backbone's
    /// views, [views × 1280]), with this classifier's thresholds; `detectorScore` is the detector's best box in the
    /// photo (nil: none found, or not looked for).
    @_spi(Benchmarks) public func decide(features: [[Float]], top: Int, detectorScore: Float? = nil) throws(ClassifierError) -> Classification {
        do {
            return Classification(try model.decide(features: features, top: top, thresholds: decision,
                                                   precision: configuration.precision.engine, detectorScore: detectorScore))
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
    public var kernels: Kernels
    /// The backbones' arithmetic (int8 runs where the model file has activation ranges, fp32 otherwise); by default
    /// `Precision.preferred(for: kernels)`. `ModelInfo` says what each backbone runs.
    public var precision: Precision
    /// Photos declaring more pixels than this are refused from their header, before decoding.
    public var maxPixels: Int
    /// Files (or received bodies) larger than this are refused before they are read or decoded.
    public var maxFileBytes: Int
    /// Thresholds to use instead of the model file's (experiments and tests).
    @_spi(Testing) public var decision: DecisionThresholds?
    /// Per backbone, mirror averaging instead of the model file's choice (experiments and tests).
    @_spi(Testing) public var averagesMirror: [Bool]?
    /// Whether answers say where the dog is (`Classification.location`).
    public var locates: Bool = true
    /// When to look again, closer, at a dog small in the frame; nil never to (needs `locates`).
    public var zoom: ZoomPolicy? = .standard
    /// Whether a photo of several dogs gets an answer per dog (`Classification.dogs`; needs
    /// `locates`).
    public var separatesDogs: Bool = true
    /// Whether the model's dog detector says where the dogs are, where it has one (otherwise the activation maps
    /// do, as for a model without one): off only to measure what it changes.
    @_spi(Testing) public var usesDetector: Bool = true

    /// Photos classified side by side at most, when `share(threads:manyPhotos:)` shares threads out.
    public static let maxSideBySide = 8

    /// Shares `threads` out: for one photo, all inside the network (the shortest wait for its answer); for many,
    /// photos side by side with one thread each (no thread waits for another between layers: more photos a
    /// second), at most `maxSideBySide` of them, the threads left over going inside their networks.
    public mutating func share(threads: Int, manyPhotos: Bool) {
        let threads = max(1, threads)
        workers = manyPhotos ? min(threads, Self.maxSideBySide) : 1
        threadsPerWorker = threads / workers
    }

    /// A configuration that overrides the model file's thresholds or mirror averaging (experiments and tests).
    @_spi(Testing) public static func overriding(threadsPerWorker: Int = 1, decision: DecisionThresholds? = nil,
                                                 averagesMirror: [Bool]? = nil) -> ClassifierConfiguration {
        var configuration = ClassifierConfiguration(threadsPerWorker: threadsPerWorker)
        configuration.decision = decision
        configuration.averagesMirror = averagesMirror
        return configuration
    }

    public init(workers: Int = 1, threadsPerWorker: Int = 1, kernels: Kernels = .best, precision: Precision? = nil,
                maxPixels: Int = 100_000_000, maxFileBytes: Int = 512 << 20) {
        self.precision = precision ?? .preferred(for: kernels)
        self.workers = workers
        self.threadsPerWorker = threadsPerWorker
        self.kernels = kernels
        self.maxPixels = maxPixels
        self.maxFileBytes = maxFileBytes
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

/// When the classifier takes a second, zoomed look at the dog (see `Classifier.classify(_:top:)`).
public struct ZoomPolicy: Sendable, Equatable {
    /// Look again when the dog covers less than this share of the network's square…
    public var extentBelow: Double
    /// …and the whole photo's top breed is less likely than this.
    public var topBelow: Float
    /// Whether a photo the whole view finds no dog in is looked at again too (a dog small in a large scene
    /// often is), unless it looks like a cat; the closer look must then find a dog itself.
    public var evenWithoutDog: Bool
    /// A dog the whole photo holds back as "a breed this model does not know" (and that is not zoomed) is looked at
    /// on its own too, the detector's box with a margin where it leaves out a part of the photo
    /// (`heldBackLargestShare`); that look names the breed when it answers the same breed as a dog with at least this
    /// probability. Nil: no such look.
    public var heldBackNamedFrom: Float?

    public init(extentBelow: Double, topBelow: Float, evenWithoutDog: Bool, heldBackNamedFrom: Float? = nil) {
        self.extentBelow = extentBelow
        self.topBelow = topBelow
        self.evenWithoutDog = evenWithoutDog
        self.heldBackNamedFrom = heldBackNamedFrom
    }

    /// Chosen on check sets made from the train split (see `docs/where-the-dog-is.md`); `heldBackNamedFrom` on the
    /// bundled default model's validation photos, restored, and five views of each, against the same photos of 20
    /// breeds taken out of the model (docs/accuracy.md, "The dog held back, looked at on its own").
    public static let standard = ZoomPolicy(extentBelow: 0.3, topBelow: 0.7, evenWithoutDog: true, heldBackNamedFrom: 0.95)
    /// Whenever the box leaves room to zoom, but not at a cat (for studies).
    public static let always = ZoomPolicy(extentBelow: .infinity, topBelow: .infinity, evenWithoutDog: true)

    /// Whether a photo answered `whole`, its dog covering `extent` of the square, gets a second look. Never a photo
    /// the whole view calls "no dog" because it looks like a cat: the cat rule was fitted on whole photos, and a close
    /// look at a box the detector drew on a cat, its surroundings cut away, made 0.7 % of pets-real's 1,000 cats
    /// "a breed this model does not know" with the default model.
    @_spi(Benchmarks) public func wants(_ whole: Classification, extent: Double) -> Bool {
        guard whole.verdict != .noDog || (evenWithoutDog && whole.looksLike != .cat) else { return false }
        return extent < extentBelow && (whole.breeds.first?.probability ?? 0) < topBelow
    }

    /// A box covering this share of the photo or more shows the held-back dog as the whole photo did: no look.
    static let heldBackLargestShare = 0.8

    /// Whether a photo answered `whole`, not zoomed, has its dog's box `box` (in the `width` × `height` photo's
    /// pixels) looked at on its own (see `heldBackNamedFrom`).
    @_spi(Testing) public func looksAgainAtHeldBack(_ whole: Classification, box: (x: Int, y: Int, width: Int, height: Int), width: Int, height: Int) -> Bool {
        heldBackNamedFrom != nil && whole.verdict == .otherBreed
            && Double(box.width * box.height) < Self.heldBackLargestShare * Double(width * height)
    }

    /// Whether `closer`, the held-back dog's own look, names the whole photo's top breed `breed`.
    @_spi(Testing) public func namesHeldBack(_ closer: Classification, breed: String) -> Bool {
        guard let from = heldBackNamedFrom, closer.verdict == .dog, let first = closer.breeds.first else { return false }
        return first.key == breed && first.probability >= from
    }
}
