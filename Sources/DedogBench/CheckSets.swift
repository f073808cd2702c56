// Check sets for "where is the dog" (issue 24), made from the photos the bundled models held out of training
// (the trainer's stratified 10 % of the train split, seed 1: 10 a breed), and the study that runs the
// classifier's looks over them. Not tests: they measure.
import DedogImage
@_spi(Testing) import DedogTrain
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogNN
import DedogBreedModel
import Foundation

/// A seeded generator, so the sets are the same on every machine.
struct Dice {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
}

/// The photos the bundled models did not train on.
func heldOutPhotos(dataset root: URL) throws -> (Dataset, [Dataset.Sample]) {
    let dataset = try Dataset(root: root)
    var config = TrainConfiguration(dataset: root, baseModels: [], output: URL(fileURLWithPath: "/dev/null"))
    config.split = root.appendingPathComponent("splits/train.txt")
    config.options.seed = 1
    return (dataset, try TrainingSplit(dataset: dataset, configuration: config).validation)
}

/// A `side`-pixel square of the texture at the 64-pixel corner of `photo`, mirror-tiled: floor, grass or fence
/// at the scale the photo shows it, with no dog in it (mostly: corners sometimes hold a paw).
func tiledCorner(_ photo: RGBImage, side: Int, corner: Int) throws -> RGBImage {
    let t = 64, left = corner % 2 == 0 ? 0 : photo.width - t, top = corner < 2 ? 0 : photo.height - t
    let tile = try photo.cropped(left: left, top: top, width: t, height: t)
    var pixels = [UInt8](repeating: 0, count: side * side * 3)
    for y in 0..<side {
        let ty = (y / t) % 2 == 0 ? y % t : t - 1 - y % t
        for x in 0..<side {
            let tx = (x / t) % 2 == 0 ? x % t : t - 1 - x % t
            for c in 0..<3 { pixels[(y * side + x) * 3 + c] = tile.pixels[(ty * t + tx) * 3 + c] }
        }
    }
    return try RGBImage(width: side, height: side, pixels: pixels)
}

func paste(_ photo: RGBImage, on canvas: inout RGBImage, x: Int, y: Int) {
    for row in 0..<photo.height {
        let from = row * photo.width * 3, to = ((y + row) * canvas.width + x) * 3
        canvas.pixels.replaceSubrange(to..<(to + photo.width * 3), with: photo.pixels[from..<(from + photo.width * 3)])
    }
}

/// check-sets DATASET OUT: writes OUT/<set>/<class>/<photo>.jpg and OUT/<set>/boxes.tsv (file, x, y, w, h of the
/// pasted photo). Sets: `whole` (the photos as they are), `small-flat` and `small-texture` (the photo at a third
/// of a 672-pixel canvas's side, on a flat colour or on another breed's corner texture, placed at random inside
/// the part the network's centre crop keeps), `half-texture` (half the side), `two-dogs` (two breeds side by
/// side, each 42 % of the side with a 6 % gap).
func makeCheckSets(dataset root: URL, out: URL) throws {
    let (dataset, photos) = try heldOutPhotos(dataset: root)
    var dice = Dice(state: 24)
    let canvasSide = 672, keep = Int(Double(canvasSide) * 0.0625)  // the centre crop drops 1/16 a side
    let decoder = ImageDecoder()
    func image(_ s: Dataset.Sample) throws -> RGBImage { try decoder.decode(contentsOf: dataset.url(s)) }
    var boxes: [String: [String]] = [:]
    func write(_ image: RGBImage, set: String, sample: Dataset.Sample, box: [Int]) throws {
        let name = dataset.classes[sample.label] + "/" + URL(fileURLWithPath: sample.path).lastPathComponent
        let url = out.appendingPathComponent(set).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(JPEGEncoder.encode(image, quality: 92)).write(to: url)
        boxes[set, default: []].append(([name] + box.map(String.init)).joined(separator: "\t"))
    }
    for (i, sample) in photos.enumerated() {
        let photo = try image(sample)
        try write(photo, set: "whole", sample: sample, box: [0, 0, photo.width, photo.height])
        // Another breed's photo for the background.
        var other = photos[dice.below(photos.count)]
        while other.label == sample.label { other = photos[dice.below(photos.count)] }
        let background = try image(other)
        for (set, share) in [("small-flat", 3), ("small-texture", 3), ("half-texture", 2)] {
            let side = canvasSide / share
            var canvas: RGBImage
            if set == "small-flat" {
                let colour = (0..<3).map { _ in UInt8(dice.below(256)) }
                canvas = try RGBImage(width: canvasSide, height: canvasSide,
                                      pixels: (0..<(canvasSide * canvasSide * 3)).map { colour[$0 % 3] })
            } else {
                canvas = try tiledCorner(background, side: canvasSide, corner: dice.below(4))
            }
            let small = try Resampler.resized(photo, width: side, height: side)
            let x = keep + dice.below(canvasSide - 2 * keep - side), y = keep + dice.below(canvasSide - 2 * keep - side)
            paste(small, on: &canvas, x: x, y: y)
            try write(canvas, set: set, sample: sample, box: [x, y, side, side])
        }
        // Two dogs: this breed on the left, the other on the right (named after the left one; the box file
        // gives both boxes and the right one's class).
        if i % 2 == 0 {
            var canvas = try tiledCorner(background, side: canvasSide, corner: dice.below(4))
            let side = canvasSide * 42 / 100, gap = canvasSide * 6 / 100
            let left = (canvasSide - 2 * side - gap) / 2
            let y0 = keep + dice.below(canvasSide - 2 * keep - side), y1 = keep + dice.below(canvasSide - 2 * keep - side)
            paste(try Resampler.resized(photo, width: side, height: side), on: &canvas, x: left, y: y0)
            paste(try Resampler.resized(background, width: side, height: side), on: &canvas, x: left + side + gap, y: y1)
            try write(canvas, set: "two-dogs", sample: sample,
                      box: [left, y0, side, side, left + side + gap, y1, side, side, other.label])
        }
    }
    // No dog: another breed's corner texture alone (a separate generator, so the sets above stay as they were).
    var other = Dice(state: 25)
    for sample in photos {
        let canvas = try tiledCorner(try image(photos[other.below(photos.count)]), side: canvasSide, corner: other.below(4))
        try write(canvas, set: "no-dog-texture", sample: sample, box: [])
    }
    for (set, lines) in boxes {
        try (lines.joined(separator: "\n") + "\n").write(to: out.appendingPathComponent(set).appendingPathComponent("boxes.tsv"),
                                                         atomically: true, encoding: .utf8)
    }
    print("check sets: \(photos.count) held-out photos → \(out.path)")
}

/// looks MODEL SET: one JSON line per photo of a check set: its class, the whole photo's answer, the dog's box
/// and extent, and the answer with a zoomed look (always taken where the box leaves room), so that policies can
/// be compared on the same runs.
func lookStudy(model: URL, set: URL, threads: Int, every: Int) throws {
    let classifier = try Classifier(modelURL: model, configuration: .init(threadsPerWorker: threads))
    let lines = try String(contentsOf: set.appendingPathComponent("boxes.tsv"), encoding: .utf8).split(separator: "\n")
    let decoder = ImageDecoder(options: classifier.decoderOptions)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    struct Answer: Encodable {
        let top: String, probability: Float, verdict: String, dog: Float?
        init(_ c: Classification) {
            top = c.breeds.first?.key ?? ""
            probability = c.breeds.first?.probability ?? 0
            verdict = c.verdict.rawValue
            dog = c.dogProbability
        }
    }
    struct Row: Encodable {
        let file: String, truth: [Int], whole: Answer, zoomed: Answer?, closer: Answer?, extent: Double?, box: [Int]?,
            dogs: [Answer], dogBoxes: [[Int]], seconds: Double
    }
    for (i, line) in lines.enumerated() where i % max(1, every) == 0 {
        let fields = line.split(separator: "\t").map(String.init)
        let url = set.appendingPathComponent(fields[0])
        let image = try decoder.decode(contentsOf: url)
        let started = Date()
        let looks = try classifier.looks(at: image, top: 5, zoom: .always) { options throws(ImageError) in
            try ImageDecoder(options: options).decode(contentsOf: url)
        }
        let seconds = Date().timeIntervalSince(started)
        let box = looks.whole.location.map { [$0.x, $0.y, $0.width, $0.height] }
        let row = Row(file: fields[0], truth: fields.dropFirst().compactMap { Int($0) }, whole: Answer(looks.whole),
                      zoomed: looks.zoomed.map(Answer.init), closer: looks.closer.map(Answer.init), extent: looks.extent,
                      box: box, dogs: looks.dogs.map(Answer.init),
                      dogBoxes: looks.dogs.compactMap { $0.location.map { [$0.x, $0.y, $0.width, $0.height] } }, seconds: seconds)
        print(String(decoding: try encoder.encode(row), as: UTF8.self))
    }
}
