@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
@_spi(Testing) import DedogTrain
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel
import Foundation

/// The classifier of `name`: `default`, `fast` or a model file; `detector: false` leaves the model's detector
/// unused (where the dog is from the activation maps, as before there was one).
func benchClassifier(_ name: String, detector: Bool = true, separatesDogs: Bool = true) -> Classifier {
    let url = ["default", "fast"].contains(name) ? try! ModelLocator.url(ofBundled: name) : URL(fileURLWithPath: name)
    var configuration = ClassifierConfiguration(threadsPerWorker: 2)
    configuration.usesDetector = detector
    configuration.separatesDogs = separatesDogs
    return try! Classifier(modelURL: url, configuration: configuration)
}

/// The photos a split file lists (`<path>\t<class>` per line), under `root`: (path, class).
func listed(_ list: String) -> [(path: String, label: String)] {
    (try! String(contentsOfFile: list, encoding: .utf8)).split(separator: "\n").map { line in
        let fields = line.split(separator: "\t")
        return (String(fields[0]), fields.count > 1 ? String(fields[1]) : "")
    }
}

/// detect MODEL ROOT LIST OUT [--crops]: every box the detector finds (down to a score of 0.02) in each photo LIST
/// names under ROOT, in the photo's pixels, one JSON line per photo (OUT.jsonl, for average precision); and the
/// boxes it reports as dogs, each at score 1 (OUT-reported.jsonl, for the figures at its thresholds), for
/// scripts/bench_detector.py. With --crops, OUT-crops.jsonl: per photo whether the whole photo is a dog, and each
/// box scoring at least 0.15 (at most 6) with its score and whether its crop, cut as classify cuts it, is a dog:
/// what classify would answer at any threshold, to choose one on (scripts/choose_detector_threshold.py).
func detect() {
    let args = Array(CommandLine.arguments.dropFirst(2)).filter { $0 != "--crops" }
    let checksCrops = CommandLine.arguments.contains("--crops")
    guard args.count == 4 else { print("usage: DedogBench detect MODEL ROOT LIST OUT [--crops]"); exit(64) }
    let classifier = benchClassifier(args[0])
    let d = classifier.model.detector?.description
    var candidates = "", reported = "", crops = ""
    func line(_ path: String, _ size: PixelSize, _ boxes: [(location: DogLocation, score: Float)]) -> String {
        let list = boxes.map { "[\($0.location.x),\($0.location.y),\($0.location.x + $0.location.width),\($0.location.y + $0.location.height),\($0.score)]" }
        let name = String(decoding: try! JSONEncoder().encode(path), as: UTF8.self)
        return "{\"file\":\(name),\"width\":\(size.width),\"height\":\(size.height),\"threshold\":1,\"boxes\":[\(list.joined(separator: ","))]}\n"
    }
    for (path, _) in listed(args[2]) {
        let image = try! ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: URL(fileURLWithPath: args[1]).appendingPathComponent(path))
        let found = try! classifier.detections(in: image, minimumScore: 0.02)
        let size = image.original ?? PixelSize(width: image.width, height: image.height)
        candidates += line(path, size, found)
        // The same boxes, in the photo's pixels, through the rule classify applies (`DogDetector.dogs`).
        let kept = DogDetector.dogs(found.map { f in Detection(x0: Double(f.location.x), y0: Double(f.location.y),
                                                               x1: Double(f.location.x + f.location.width),
                                                               y1: Double(f.location.y + f.location.height), score: f.score) },
                                    threshold: d?.threshold ?? 1, apartThreshold: d?.apartThreshold ?? 1)
        reported += line(path, size, kept.map { k in (DogLocation(x: Int(k.x0), y: Int(k.y0), width: Int(k.x1 - k.x0), height: Int(k.y1 - k.y0), zoomed: false), 1) })
        if checksCrops {
            crops += checkedCrops(path, image: image, found: found, classifier: classifier)
        }
    }
    if checksCrops { try! crops.write(toFile: args[3] + "-crops.jsonl", atomically: true, encoding: .utf8) }
    try! candidates.write(toFile: args[3] + ".jsonl", atomically: true, encoding: .utf8)
    try! reported.write(toFile: args[3] + "-reported.jsonl", atomically: true, encoding: .utf8)
}

/// One JSON line: whether `image` is a dog as a whole, and `found`'s boxes from a score of 0.15 (the best 6), in the
/// photo's pixels, each with its score and whether its crop (with classify's margin) is a dog.
func checkedCrops(_ path: String, image: RGBImage, found: [(location: DogLocation, score: Float)], classifier: Classifier) -> String {
    let whole = try! classifier.decide(features: classifier.features(of: image), top: 1).verdict != .noDog
    var boxes: [String] = []
    for f in found.filter({ $0.score >= 0.15 }).prefix(6) {
        let l = f.location
        let dog = try! classifier.decide(features: classifier.features(of: marginedCrop(l, of: image)), top: 1).verdict != .noDog
        boxes.append("[\(l.x),\(l.y),\(l.x + l.width),\(l.y + l.height),\(f.score),\(dog)]")
    }
    let name = String(decoding: try! JSONEncoder().encode(path), as: UTF8.self)
    return "{\"file\":\(name),\"dog\":\(whole),\"boxes\":[\(boxes.joined(separator: ","))]}\n"
}

/// The box `location` (in the photo's pixels) with classify's margin, cut from `image` (which may be decoded smaller).
func marginedCrop(_ location: DogLocation, of image: RGBImage) -> RGBImage {
    let sx = Double(image.width) / Double(image.original?.width ?? image.width)
    let sy = Double(image.height) / Double(image.original?.height ?? image.height)
    let l = location
    let place = DogPlace(box: (Double(l.x) * sx, Double(l.y) * sy, Double(l.width) * sx, Double(l.height) * sy), extent: 0)
    let r = place.margined(width: image.width, height: image.height)
    return try! image.cropped(left: r.x, top: r.y, width: r.width, height: r.height)
}

/// crop-or-whole MODEL ROOT LIST: top-1 of the photos LIST names under ROOT (their class is the folder, the breed
/// label's key), answered from the whole photo as classify answers it, from the detector's best box alone, cut with
/// its margin and classified as a photo, and from the whole photo's views and the crop's together (one decision on
/// all of them); photos where the detector finds nothing count as the whole.
func cropOrWhole() {
    let args = Array(CommandLine.arguments.dropFirst(2))
    guard args.count == 3 || args.count == 4 else { print("usage: DedogBench crop-or-whole MODEL ROOT LIST [OUT.jsonl]"); exit(64) }
    let classifier = benchClassifier(args[0])
    var whole = 0, crop = 0, both = 0, total = 0, noBox = 0
    var lines = ""
    for (path, label) in listed(args[2]) {
        let image = try! ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: URL(fileURLWithPath: args[1]).appendingPathComponent(path))
        let answer = try! classifier.classify(image, top: 1)
        total += 1
        if answer.breeds.first?.key == label { whole += 1 }
        guard let best = try! classifier.detections(in: image, minimumScore: classifier.model.detector?.description.apartThreshold ?? 1).first else {
            noBox += 1
            if answer.breeds.first?.key == label { crop += 1; both += 1 }
            continue
        }
        let cut = marginedCrop(best.location, of: image)
        let cropAnswer = try! classifier.classify(cut, top: 1)
        if cropAnswer.breeds.first?.key == label { crop += 1 }
        // The whole photo's views and the crop's together, one decision on all of them (as the second look decides).
        let together = zip(try! classifier.features(of: image), try! classifier.features(of: cut)).map { $0 + $1 }
        let bothAnswer = try! classifier.decide(features: together, top: 1)
        if bothAnswer.breeds.first?.key == label { both += 1 }
        // Per photo, with the box's share of the photo: to see where the crop helps.
        let share = Double(cut.width * cut.height) / Double(image.width * image.height)
        let marks = [answer, cropAnswer, bothAnswer].map { $0.breeds.first?.key == label ? "true" : "false" }
        lines += "{\"share\":\(share),\"whole\":\(marks[0]),\"crop\":\(marks[1]),\"both\":\(marks[2])}\n"
    }
    if args.count == 4 { try! lines.write(toFile: args[3], atomically: true, encoding: .utf8) }
    func pct(_ n: Int) -> String { String(format: "%.2f %%", 100 * Double(n) / Double(max(1, total))) }
    print("| photos | top-1, whole photo | top-1, the best box's crop | the whole photo and the crop together | no box found |")
    print("|---|---|---|---|---|")
    print("| \(total) | \(pct(whole)) | \(pct(crop)) | \(pct(both)) | \(noBox) |")
}

/// detector-time MODEL ROOT LIST [ROUNDS]: classify's time per photo (decoded photos, 2 threads) with the model's
/// detector and without it (where the dog is from the activation maps), rounds alternating, medians of the rounds'
/// means; and the ratio.
func detectorTime() {
    let args = Array(CommandLine.arguments.dropFirst(2))
    guard args.count >= 3 else { print("usage: DedogBench detector-time MODEL ROOT LIST [ROUNDS]"); exit(64) }
    let rounds = args.count > 3 ? Int(args[3])! : 3
    let with = benchClassifier(args[0]), without = benchClassifier(args[0], detector: false)
    let alone = benchClassifier(args[0], separatesDogs: false)
    let images = listed(args[2]).map { try! ImageDecoder(options: with.decoderOptions).decode(contentsOf: URL(fileURLWithPath: args[1]).appendingPathComponent($0.path)) }
    func time(_ classifier: Classifier) -> Double {
        let t0 = Date()
        for image in images { _ = try! classifier.classify(image, top: 3) }
        return Date().timeIntervalSince(t0) * 1000 / Double(images.count)
    }
    var a: [Double] = [], b: [Double] = [], c: [Double] = [], ratios: [Double] = [], aloneRatios: [Double] = []
    for _ in 0..<rounds {
        let tw = time(with), to = time(without), ta = time(alone)
        a.append(tw); b.append(to); c.append(ta); ratios.append(tw / to); aloneRatios.append(ta / to)
    }
    print("| photos | with the detector (ms/photo) | without (ms/photo) | time added | detector without the per-dog looks (ms/photo) | time added |")
    print("|---|---|---|---|---|---|")
    print(String(format: "| %d | %.1f | %.1f | %+.1f %% | %.1f | %+.1f %% |", images.count, median(a), median(b), 100 * (median(ratios) - 1),
                 median(c), 100 * (median(aloneRatios) - 1)))
}
