import Foundation
import DedogImage
import DedogNN
import DedogBreedModel

/// How the dog detector is trained (`DetectorTraining`): on a data set with a boxes file.
public struct DetectorOptions: Sendable {
    /// The data set's boxes (`BoxesFile`).
    public var boxes: URL
    /// Photos without a dog (cats, rooms, streets), learned as such.
    public var negatives: [URL] = []
    /// The hidden layer's width.
    public var hidden = 128
    /// At most; the epoch of the lowest validation loss is kept (on Stanford Dogs the 3rd to the 5th).
    public var epochs = 8
    /// Photos per step.
    public var batch = 32
    public var learningRate: Float = 1e-3
    public var weightDecay: Float = 1e-4
    /// Mosaics made per training photo with boxes: two or three photos side by side, or one above the other.
    public var mosaicsPerPhoto = 0.3
    /// One-dog validation photos that may be seen as two dogs at the chosen threshold, at most.
    public var splitAtMost = 0.02
    public var seed: UInt64 = 1
    /// Whether each photo is also seen mirrored left to right: learned by the training photos, and checked by
    /// the validation photos (twice the evidence for choosing the epochs and thresholds).
    public var mirrored = true

    public init(boxes: URL) {
        self.boxes = boxes
    }
}

/// What training the detector did and measured on the validation photos (real photos only, no mosaics; each also
/// mirrored when `mirrored`).
public struct DetectorReport: Sendable {
    public init() {}

    public var trainPhotos = 0, mosaics = 0, backgrounds = 0, negatives = 0, unreadable = 0
    public var validationPhotos = 0
    /// Whether every photo was also seen mirrored, the validation photos too.
    public var mirrored = false
    /// The epochs of the head written (the lowest validation loss).
    public var epochs = 0
    public var threshold: Float = 0, apartThreshold: Float = 0
    /// Box average precision at IoU 0.5 on the validation photos.
    public var averagePrecision = 0.0
    /// Validation photos of two or more dogs (as they are and mirrored when `mirrored`) in which two or more are
    /// found, and how many photos there were.
    public var severalFound = 0.0, severalPhotos = 0
    /// One-dog validation photos seen as two or more dogs.
    public var split = 0.0
    public var seconds = 0.0
}

/// Trains the dog detector (`DogDetector`) on a model file's first backbone, frozen: its head feature maps of
/// every photo are computed once (as classify computes them), then the small head learns from them.
///
/// What it learns from: the training photos that have boxes; mosaics of them (two or three side by side, or two
/// one above the other: photos of several dogs, a few percent of a data set such as Stanford Dogs, become common);
/// strips of the photos that hold no part of a dog, and `negatives`: photos without a dog. The loss is CenterNet's:
/// a focal loss on each cell's centre score against a Gaussian around each dog's centre cell, and L1 on the centre's
/// offset and the box's log size at that cell.
public enum DetectorTraining {
    /// Trains on `train`'s photos, chooses the epochs and the threshold on `validation`'s, and writes the
    /// detector into the model file at `url`.
    public static func run(model url: URL, dataset: Dataset, train: [Dataset.Sample], validation: [Dataset.Sample],
                           options: DetectorOptions, threads: Int, kernels: KernelSet,
                           progress: (Int, Int) -> Void = { _, _ in }) throws(TrainError) -> DetectorReport {
        let started = Date()
        let boxes = try BoxesFile(contentsOf: options.boxes)
        let model: Model
        do {
            model = try Model(contentsOf: url, kernels: kernels)
        } catch {
            throw .model(error)
        }
        guard let network = model.backbones.first else { throw .labelsMismatch(detail: "the model has no backbone") }
        var generator = SplitMix64(seed: options.seed)
        let scenes = Scene.plan(dataset: dataset, train: train, validation: validation, boxes: boxes, options: options,
                                using: &generator)
        var report = DetectorReport()
        let grids = try CellGrids(scenes, dataset: dataset, boxes: boxes, network: network, threads: threads, kernels: kernels,
                                  mirrored: options.mirrored, report: &report, progress: progress)
        guard grids.trainCount > 0 else {
            throw .boxesFile(path: boxes.file, line: 0, detail: "none of its photos is among the training photos")
        }
        var head = DetectorHead(hidden: options.hidden, using: &generator)
        report.epochs = head.fit(grids, options: options, using: &generator)
        let choice = head.chooseThresholds(grids, splitAtMost: options.splitAtMost)
        (report.threshold, report.apartThreshold, report.averagePrecision, report.severalFound, report.split) =
            (choice.threshold, choice.apartThreshold, choice.averagePrecision, choice.severalFound, choice.split)
        report.mirrored = options.mirrored
        let description = DetectorDescription(backbone: 0, hidden: options.hidden, threshold: choice.threshold,
                                              apartThreshold: choice.apartThreshold)
        do {
            let file = try SafeTensors(contentsOf: url)
            try ModelFile.replacingDetector(of: file, model: model.specification, with: description,
                                            values: [head.w1, head.b1, head.w2, head.b2], to: url)
        } catch {
            throw .model(error)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}

/// One image the detector learns from or is checked on, before it is made.
@_spi(Testing) public struct Scene {
    enum Kind {
        /// A photo of the data set as it is.
        case photo(String)
        /// Photos side by side (`horizontal`) or one above the other, each scaled to the same height (or width).
        case mosaic([String], horizontal: Bool)
        /// The part of a photo (x0, y0, x1, y1 in its entry's pixels) that holds no dog.
        case background(String, BoxesFile.Box)
        /// A photo without a dog.
        case negative(URL)
    }
    var kind: Kind
    var validation: Bool

    /// Every scene of a run: the training photos with boxes, their mosaics and empty strips, the negatives, then
    /// the validation photos with boxes.
    @_spi(Testing) public static func plan(dataset: Dataset, train: [Dataset.Sample], validation: [Dataset.Sample], boxes: BoxesFile,
                     options: DetectorOptions, using generator: inout SplitMix64) -> [Scene] {
        let boxed = train.map(\.path).filter { boxes.entries[$0] != nil }
        var scenes = boxed.map { Scene(kind: .photo($0), validation: false) }
        let mosaics = Int(Double(boxed.count) * options.mosaicsPerPhoto)
        if boxed.count >= 3 {
            for _ in 0..<mosaics {
                let roll = Int.random(in: 0..<10, using: &generator)
                let count = roll < 7 ? 2 : 3, horizontal = roll != 9
                let parts = (0..<(horizontal ? count : 2)).map { _ in boxed[Int.random(in: 0..<boxed.count, using: &generator)] }
                scenes.append(Scene(kind: .mosaic(parts, horizontal: horizontal), validation: false))
            }
        }
        for path in boxed {
            guard let entry = boxes.entries[path], let strip = emptyStrip(entry) else { continue }
            scenes.append(Scene(kind: .background(path, strip), validation: false))
        }
        scenes += options.negatives.map { Scene(kind: .negative($0), validation: false) }
        scenes += validation.map(\.path).filter { boxes.entries[$0] != nil }.map { Scene(kind: .photo($0), validation: true) }
        return scenes
    }

    /// The largest strip along one side of the photo that no box reaches, if it is at least 40 % of the photo's
    /// side and not longer than 2.5 times its width.
    @_spi(Testing) public static func emptyStrip(_ entry: BoxesFile.Entry) -> BoxesFile.Box? {
        guard !entry.boxes.isEmpty else { return nil }
        let w = Double(entry.width), h = Double(entry.height)
        let left = entry.boxes.map(\.x0).min()!, right = entry.boxes.map(\.x1).max()!
        let top = entry.boxes.map(\.y0).min()!, bottom = entry.boxes.map(\.y1).max()!
        let candidates = [(BoxesFile.Box(x0: 0, y0: 0, x1: left, y1: h), left / w),
                          (BoxesFile.Box(x0: right, y0: 0, x1: w, y1: h), (w - right) / w),
                          (BoxesFile.Box(x0: 0, y0: 0, x1: w, y1: top), top / h),
                          (BoxesFile.Box(x0: 0, y0: bottom, x1: w, y1: h), (h - bottom) / h)]
        return candidates.filter { b, share in
            let bw = b.x1 - b.x0, bh = b.y1 - b.y0
            return share >= 0.4 && min(bw, bh) >= 32 && max(bw / bh, bh / bw) <= 2.5
        }.max { $0.1 < $1.1 }?.0
    }

    /// The image and its dogs' boxes in its pixels.
    func make(dataset: Dataset, boxes: BoxesFile, decoder: ImageDecoder) throws(ImageError) -> (RGBImage, [BoxesFile.Box]) {
        func photo(_ path: String) throws(ImageError) -> (RGBImage, [BoxesFile.Box]) {
            let image = try decoder.decode(contentsOf: dataset.root.appendingPathComponent(path))
            guard let entry = boxes.entries[path] else { return (image, []) }
            return (image, entry.boxes.map { $0.scaled(from: (entry.width, entry.height), to: image.width, image.height) })
        }
        switch kind {
        case let .photo(path):
            return try photo(path)
        case let .negative(url):
            return (try decoder.decode(contentsOf: url), [])
        case let .background(path, strip):
            let (image, _) = try photo(path)
            guard let entry = boxes.entries[path] else { return (image, []) }
            let s = strip.scaled(from: (entry.width, entry.height), to: image.width, image.height)
            let x = Int(s.x0.rounded(.up)), y = Int(s.y0.rounded(.up))
            let cut = try image.cropped(left: x, top: y, width: max(1, Int(s.x1.rounded(.down)) - x),
                                        height: max(1, Int(s.y1.rounded(.down)) - y))
            return (cut, [])
        case let .mosaic(paths, horizontal):
            var parts: [(RGBImage, [BoxesFile.Box])] = []
            for path in paths { parts.append(try photo(path)) }
            return try Self.joined(parts, horizontal: horizontal)
        }
    }

    /// `parts` side by side (or one above the other), each scaled to the smallest height (width) among them, at
    /// most 320 pixels, with their boxes moved along.
    @_spi(Testing) public static func joined(_ parts: [(RGBImage, [BoxesFile.Box])], horizontal: Bool) throws(ImageError) -> (RGBImage, [BoxesFile.Box]) {
        let side = min(320, parts.map { horizontal ? $0.0.height : $0.0.width }.min() ?? 1)
        var scaled: [(RGBImage, [BoxesFile.Box])] = []
        for (image, boxes) in parts {
            let along = max(1, Int((Double(horizontal ? image.width : image.height) * Double(side)
                                    / Double(horizontal ? image.height : image.width)).rounded()))
            let (w, h) = horizontal ? (along, side) : (side, along)
            scaled.append((try Resampler.resized(image, width: w, height: h),
                           boxes.map { $0.scaled(from: (image.width, image.height), to: w, h) }))
        }
        let width = horizontal ? scaled.reduce(0) { $0 + $1.0.width } : side
        let height = horizontal ? side : scaled.reduce(0) { $0 + $1.0.height }
        var pixels = [UInt8](repeating: 0, count: width * height * 3), boxes: [BoxesFile.Box] = [], offset = 0
        for (image, parts) in scaled {
            for y in 0..<image.height {
                let to = ((horizontal ? y : y + offset) * width + (horizontal ? offset : 0)) * 3
                pixels.replaceSubrange(to..<(to + image.width * 3), with: image.pixels[(y * image.width * 3)..<((y + 1) * image.width * 3)])
            }
            let (dx, dy) = horizontal ? (Double(offset), 0.0) : (0.0, Double(offset))
            boxes += parts.map { BoxesFile.Box(x0: $0.x0 + dx, y0: $0.y0 + dy, x1: $0.x1 + dx, y1: $0.y1 + dy) }
            offset += horizontal ? image.width : image.height
        }
        return (try RGBImage(width: width, height: height, pixels: pixels), boxes)
    }
}

/// A dog's box in the network's square (0…1), as the head learns it.
@_spi(Testing) public struct SquareBox {
    public var cx, cy, w, h: Double

    public init(cx: Double, cy: Double, w: Double, h: Double) {
        (self.cx, self.cy, self.w, self.h) = (cx, cy, w, h)
    }
}

/// Every scene's feature grid, stored as bytes (the head's features are ReLU6 outputs, 0…6, kept to 6/255),
/// and its dogs' boxes in the network's square.
@_spi(Testing) public struct CellGrids {
    public var rows = 0, columns = 0
    public var cells: [UInt8] = []
    /// Per grid: its scene's boxes, and whether it checks rather than trains.
    public var targets: [[SquareBox]] = []
    public var isValidation: [Bool] = []
    static let step: Float = 6 / 255

    var trainCount: Int { isValidation.filter { !$0 }.count }
    var cellsPerScene: Int { rows * columns }

    /// `mirrored`: each scene is also seen mirrored left to right (its own grid, its boxes mirrored), validation
    /// scenes too.
    @_spi(Testing) public init(_ scenes: [Scene], dataset: Dataset, boxes: BoxesFile, network: EfficientNetLite, threads: Int,
                               kernels: KernelSet, mirrored: Bool, report: inout DetectorReport,
                               progress: (Int, Int) -> Void) throws(TrainError) {
        let session = network.makeSession(threads: threads, kernels: kernels)
        let window = Preprocessing(network.input)
        let decoder = ImageDecoder(options: .init(minimumShorterSide: network.input.resizeShorterSide))
        for (i, scene) in scenes.enumerated() {
            progress(i, scenes.count)
            let image: RGBImage, dogs: [BoxesFile.Box]
            do {
                (image, dogs) = try scene.make(dataset: dataset, boxes: boxes, decoder: decoder)
            } catch {
                report.unreadable += 1
                continue
            }
            let maps: FeatureMaps
            do {
                let input = try network.inputTensor(for: image, mirrored: mirrored)
                maps = try session.featuresAndMaps(input.tensor, batch: input.views).maps
            } catch {
                report.unreadable += 1
                continue
            }
            if cells.isEmpty {
                (rows, columns) = (maps.rows, maps.columns)
                cells.reserveCapacity(scenes.count * rows * columns * EfficientNetLite.featureCount)
            }
            guard (maps.rows, maps.columns) == (rows, columns) else { throw .labelsMismatch(detail: "the backbone's grid changed size") }
            let scale = 1 / Self.step
            cells += maps.values.map { UInt8(min(255, max(0, ($0 * scale).rounded()))) }
            let square = window.window(width: image.width, height: image.height)
            let inSquare = dogs.compactMap { Self.inSquare($0, square) }
            targets.append(inSquare)
            isValidation.append(scene.validation)
            if maps.images == 2 {
                targets.append(inSquare.map { SquareBox(cx: 1 - $0.cx, cy: $0.cy, w: $0.w, h: $0.h) })
                isValidation.append(scene.validation)
            }
            switch scene.kind {
            case .photo where scene.validation:
                report.validationPhotos += 1
                if inSquare.count >= 2 { report.severalPhotos += 1 }
            case .photo: report.trainPhotos += 1
            case .mosaic: report.mosaics += 1
            case .background: report.backgrounds += 1
            case .negative: report.negatives += 1
            }
        }
        progress(scenes.count, scenes.count)
    }

    /// `box` (in the image's pixels) in the network's square `square` (in the same pixels), clipped to it; nil
    /// when less than 40 % of it is inside.
    @_spi(Testing) public static func inSquare(_ box: BoxesFile.Box, _ square: (x: Double, y: Double, width: Double, height: Double)) -> SquareBox? {
        let x0 = max(0, (box.x0 - square.x) / square.width), x1 = min(1, (box.x1 - square.x) / square.width)
        let y0 = max(0, (box.y0 - square.y) / square.height), y1 = min(1, (box.y1 - square.y) / square.height)
        let whole = (box.x1 - box.x0) * (box.y1 - box.y0) / (square.width * square.height)
        guard x1 > x0, y1 > y0, whole > 0, (x1 - x0) * (y1 - y0) >= 0.4 * whole else { return nil }
        return SquareBox(cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, w: x1 - x0, h: y1 - y0)
    }

    /// Scene `s`'s cells as floats, appended to `out`.
    func appendCells(of s: Int, to out: inout [Float]) {
        let n = cellsPerScene * EfficientNetLite.featureCount, step = Self.step
        cells.withUnsafeBufferPointer { c in
            let start = s * n
            for i in 0..<n { out.append(Float(c[start + i]) * step) }
        }
    }
}
