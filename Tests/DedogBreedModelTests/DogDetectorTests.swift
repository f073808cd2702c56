import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// The dog detector's arithmetic and how its outputs become boxes, against values worked out by hand; and its
/// place in the model file (written, read back strictly, refused when wrong).
@Suite struct DogDetectorTests {
    /// A 4×4 grid's outputs, every cell's centre logit `background` but those given.
    static func grid(_ cells: [Int: [Float]], background: Float = -6) -> [Float] {
        (0..<16).flatMap { cells[$0] ?? [background, 0, 0, 0, 0] }
    }

    @Test func aPeakBecomesABoxAtItsCentrePlusTheOffsetWithItsSize() throws {
        // Cell (row 1, column 2): centre at ((2 + 0.5 + 0.25) / 4, (1 + 0.5 − 0.5) / 4) = (0.6875, 0.25),
        // size e^ln(0.5) = 0.5 by e^ln(0.25) = 0.25.
        let out = Self.grid([6: [2, 0.25, -0.5, Foundation.log(0.5), Foundation.log(0.25)]])
        let found = DogDetector.decode(out, rows: 4, columns: 4, minimumScore: 0.5, overlap: 0.4, inside: 0.7)
        try #require(found.count == 1)
        let d = found[0]
        #expect(abs(d.x0 - 0.4375) < 1e-6 && abs(d.x1 - 0.9375) < 1e-6 && abs(d.y0 - 0.125) < 1e-6 && abs(d.y1 - 0.375) < 1e-6, "\(d)")
        #expect(abs(d.score - 1 / (1 + Foundation.exp(-2))) < 1e-6)
        #expect(DogDetector.decode(out, rows: 4, columns: 4, minimumScore: 0.9, overlap: 0.4, inside: 0.7).isEmpty, "below the threshold")
    }

    @Test func onlyTheHighestOfNeighbouringCellsCounts() {
        // Two neighbours (cells 5 and 6) and a cell two columns away (cell 7 is next to 6; cell 13 is not next to 6).
        let small = [Foundation.log(Float(0.2)), Foundation.log(Float(0.2))]
        let out = Self.grid([5: [1] + [0, 0] + small, 6: [2, 0, 0] + small, 13: [0.5, 0, 0] + small])
        let found = DogDetector.decode(out, rows: 4, columns: 4, minimumScore: 0.3, overlap: 0.4, inside: 0.7)
        let expected: [Float] = [1 / (1 + Foundation.exp(Float(-2))), 1 / (1 + Foundation.exp(Float(-0.5)))]
        #expect(found.map(\.score) == expected)
    }

    @Test func boxesOfOneDogAreMergedByOverlapOrContainment() {
        let big = Detection(x0: 0, y0: 0, x1: 0.6, y1: 0.6, score: 0.9)
        let same = Detection(x0: 0.1, y0: 0.1, x1: 0.65, y1: 0.65, score: 0.8)     // IoU 0.62
        let part = Detection(x0: 0.3, y0: 0.3, x1: 0.7, y1: 0.7, score: 0.7)       // 0.5625 of it inside big, IoU 0.21
        let head = Detection(x0: 0.4, y0: 0.05, x1: 0.58, y1: 0.3, score: 0.6)      // all inside big
        let other = Detection(x0: 0.62, y0: 0.1, x1: 1, y1: 0.9, score: 0.5)       // apart
        #expect(abs(big.overlap(same) - 0.25 / 0.4125) < 1e-9)
        #expect(abs(part.share(inside: big) - 0.09 / 0.16) < 1e-9)
        #expect(head.share(inside: big) == 1)
        #expect(DogDetector.suppressed([big, same, part, head, other], overlap: 0.4, inside: 0.7) == [big, part, other])
    }

    /// Below the threshold, a box counts only when it stands apart from every dog kept before it.
    @Test func aLowerScoringBoxCountsWhenItStandsApart() {
        let first = Detection(x0: 0, y0: 0, x1: 0.5, y1: 1, score: 0.8)
        let beside = Detection(x0: 0.55, y0: 0.1, x1: 1, y1: 0.9, score: 0.3)      // apart
        let part = Detection(x0: 0.25, y0: 0.2, x1: 0.65, y1: 0.6, score: 0.35)    // 62.5 % of it inside the first
        let faint = Detection(x0: 0.6, y0: 0, x1: 0.9, y1: 0.3, score: 0.1)        // apart, below both thresholds
        #expect(DogDetector.dogs([first, part, beside, faint], threshold: 0.5, apartThreshold: 0.25) == [first, beside])
        #expect(DogDetector.dogs([first, part, beside, faint], threshold: 0.5, apartThreshold: 0.5) == [first])
        #expect(DogDetector.dogs([first, part, beside], threshold: 0.3, apartThreshold: 0.3) == [first, part, beside])
        #expect(!DetectorDescription.apart(first, part) && DetectorDescription.apart(first, beside))
    }

    /// The two layers against loops written here: ReLU between them, cells in row order.
    @Test func cellOutputsAreTheTwoLayersOnEveryCell() throws {
        var state: UInt64 = 7
        let hidden = 3, width = EfficientNetLite.featureCount, cells = 2 * 3
        /// Values spread over −scale…scale by a linear congruential generator (Knuth's MMIX constants).
        func values(_ n: Int, _ scale: Float) -> [Float] {
            (0..<n).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return (Float(state >> 40) / Float(1 << 24) * 2 - 1) * scale
            }
        }
        let w1 = values(hidden * width, 0.05), b1 = values(hidden, 0.5), w2 = values(5 * hidden, 1), b2 = values(5, 1)
        let detector = try DogDetector(DetectorDescription(backbone: 0, hidden: hidden, threshold: 0.5), hiddenWeight: w1,
                                       hiddenBias: b1, outputWeight: w2, outputBias: b2)
        // Two images' grids of 2×3 cells; the second is the one asked for.
        let maps = FeatureMaps(images: 2, rows: 2, columns: 3, values: values(2 * cells * width, 6).map { max(0, $0) })
        let out = try detector.cellOutputs(maps, image: 1)
        for c in 0..<cells {
            let x = maps.values[((cells + c) * width)..<((cells + c + 1) * width)]
            let h = (0..<hidden).map { k in max(0, zip(x, w1[(k * width)..<((k + 1) * width)]).reduce(b1[k]) { $0 + $1.0 * $1.1 }) }
            for o in 0..<5 {
                let expected = (0..<hidden).reduce(b2[o]) { $0 + h[$1] * w2[o * hidden + $1] }
                #expect(abs(out[c * 5 + o] - expected) < 1e-3 * max(1, abs(expected)), "cell \(c) output \(o)")
            }
        }
    }

    /// A detector written into the fast model's file: read back with its values, format 8, the same through the quick
    /// reader and `Codable`; a wrong shape or field is refused by name.
    @Test func aModelFileKeepsItsDetector() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-detector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")
        let file = try SafeTensors(contentsOf: source)
        var description = try ModelDescription(from: file)
        description.detector = nil
        let hidden = 4, width = EfficientNetLite.featureCount
        let values: [[Float]] = [(0..<(hidden * width)).map { Float($0 % 7) / 100 }, [0.1, 0.2, 0.3, 0.4],
                                 (0..<(5 * hidden)).map { Float($0) / 10 }, [-4.6, 0, 0, -0.7, -0.7]]
        let target = folder.appendingPathComponent("with-detector.safetensors")
        let detector = DetectorDescription(backbone: 0, hidden: hidden, threshold: 0.42)
        try ModelFile.replacingDetector(of: file, model: description, with: detector, values: values, to: target)
        let written = try SafeTensors(contentsOf: target)
        let json = try #require(written.metadata[ModelDescription.metadataKey])
        let quick = try #require(ModelDescription.quickly(json))
        #expect(quick == (try JSONDecoder().decode(ModelDescription.self, from: Data(json.utf8))))
        #expect(quick.formatVersion == 8 && quick.detector == detector)
        let model = try Model(contentsOf: target)
        #expect(model.detector?.description == detector)
        let shapes = [[hidden, width], [hidden], [5, hidden], [5]]
        for (name, (v, shape)) in zip(detector.tensorNames, zip(values, shapes)) { #expect(try written.floats(name, shape: shape) == v) }
        // Without it again: nothing of it is left, and the format goes back.
        try ModelFile.replacingDetector(of: written, model: quick, with: nil, values: [], to: target)
        let plain = try SafeTensors(contentsOf: target)
        #expect(plain.entries.keys.allSatisfy { !$0.hasPrefix("detector.") })
        #expect(try ModelDescription(from: plain).formatVersion < 8)
        // Wrong values or fields are refused before anything is written.
        #expect(throws: ModelError.self) {
            try ModelFile.replacingDetector(of: file, model: description, with: detector, values: Array(values.dropLast()), to: target)
        }
        var bad = detector
        bad.threshold = 1.5
        #expect(throws: ModelError.invalidValue(file: target.path, field: "detector.threshold", value: "1.5", requirement: "between 0 and 1")) {
            try ModelFile.replacingDetector(of: file, model: description, with: bad, values: values, to: target)
        }
        bad = detector
        bad.backbone = 1
        #expect(throws: ModelError.invalidValue(file: target.path, field: "detector.backbone", value: "1",
                                               requirement: "one of the model's 1 backbones")) {
            try ModelFile.replacingDetector(of: file, model: description, with: bad, values: values, to: target)
        }
    }
}
