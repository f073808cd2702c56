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

    @Test func aPeakBecomesTheBoxItsDistancesGive() throws {
        // Cell (row 1, column 2): its middle at (2.5, 1.5) cells; distances e^ln(1.5), e^ln(0.5), e^ln(1), e^ln(2)
        // cells to the left, top, right and bottom: x 1…3.5, y 1…3.5 cells of 4.
        let out = Self.grid([6: [2, Foundation.log(1.5), Foundation.log(0.5), 0, Foundation.log(2)]])
        let found = DogDetector.decode(out, rows: 4, columns: 4, minimumScore: 0.5, overlap: 0.4, inside: 0.7)
        try #require(found.count == 1)
        let d = found[0]
        #expect(abs(d.x0 - 0.25) < 1e-6 && abs(d.x1 - 0.875) < 1e-6 && abs(d.y0 - 0.25) < 1e-6 && abs(d.y1 - 0.875) < 1e-6, "\(d)")
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

    /// The bundled Lite1 detector's neck on maps of made-up values, against the same computation in PyTorch
    /// (`scripts/make_detector_golden.py`, from the detector file's own tensors): nothing of the engine in the
    /// reference.
    @Test func theNeckMatchesAnIndependentComputation() throws {
        let golden = try SafeTensors(contentsOf: SharedData.packageRoot.appendingPathComponent("Tests/DedogBreedModelTests/Fixtures/detector-neck-golden.safetensors"))
        let file = try SafeTensors(contentsOf: SharedData.packageRoot.appendingPathComponent("models/dog-detector-lite1.safetensors"))
        let description = try ModelFile.detectorDescription(in: file)
        let backbone = try #require(Backbone.named(description.architecture))
        let detector = try DogDetector(description, backbone: backbone,
                                       tensors: try description.tensorNames.map { name in try file.floats(name, shape: file.entries[name]?.shape ?? []) })
        let fineShape = try #require(golden.entries["fine"]?.shape), coarseShape = try #require(golden.entries["coarse"]?.shape)
        let fine = FeatureMaps(images: 1, rows: fineShape[0], columns: fineShape[1], channels: fineShape[2],
                               values: try golden.floats("fine", shape: fineShape))
        let coarse = FeatureMaps(images: 1, rows: coarseShape[0], columns: coarseShape[1], channels: coarseShape[2],
                                 values: try golden.floats("coarse", shape: coarseShape))
        let expected = try golden.floats("output", shape: [fineShape[0], fineShape[1], DogDetector.outputs])
        let out = try detector.cellOutputs(PyramidMaps(fine: fine, coarse: coarse))
        try #require(out.count == expected.count)
        let worst = zip(out, expected).map { abs($0 - $1) / max(1, abs($1)) }.max() ?? 0
        #expect(worst < 1e-4, "largest relative difference \(worst)")
    }

    /// With the mirrored view (image 1), each cell's outputs are the mean of its own and those of its mirror-image
    /// cell of the mirrored view, that view's left and right distances swapped.
    @Test func theMirroredViewIsFlippedBackAndAveraged() throws {
        let file = try SafeTensors(contentsOf: SharedData.packageRoot.appendingPathComponent("models/dog-detector-lite1.safetensors"))
        let description = try ModelFile.detectorDescription(in: file)
        let detector = try DogDetector(description, backbone: try #require(Backbone.named(description.architecture)),
                                       tensors: try description.tensorNames.map { name in try file.floats(name, shape: file.entries[name]?.shape ?? []) })
        var state: UInt64 = 11
        func values(_ n: Int) -> [Float] {
            (0..<n).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(state >> 40) / Float(1 << 24) * 4 - 2
            }
        }
        let (rows, columns) = (4, 6)
        let fine = FeatureMaps(images: 2, rows: rows, columns: columns, channels: 112, values: values(2 * rows * columns * 112))
        let coarse = FeatureMaps(images: 2, rows: 2, columns: 3, channels: 320, values: values(2 * 6 * 320))
        let both = PyramidMaps(fine: fine, coarse: coarse, mirrored: true)
        let own = try detector.outputs(both, image: 0), other = try detector.outputs(both, image: 1)
        let averaged = try detector.cellOutputs(both)
        for r in 0..<rows {
            for c in 0..<columns {
                let o = (r * columns + c) * 5, m = (r * columns + columns - 1 - c) * 5
                let expected = [own[o] + other[m], own[o + 1] + other[m + 3], own[o + 2] + other[m + 2],
                                own[o + 3] + other[m + 1], own[o + 4] + other[m + 4]].map { $0 / 2 }
                #expect(Array(averaged[o..<(o + 5)]) == expected, "cell \(r), \(c)")
            }
        }
        #expect(try detector.cellOutputs(PyramidMaps(fine: fine, coarse: coarse)) == own, "without the mirror: the view alone")
    }

    /// A detector file put into the fast model's file: read back with its values, format 9, the same through the
    /// quick reader and `Codable`; a detector of another backbone, or a wrong field, is refused by name; taken out
    /// again, nothing of it is left.
    @Test func aModelFileKeepsItsDetector() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-detector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = SharedData.packageRoot.appendingPathComponent("models")
        let file = try SafeTensors(contentsOf: root.appendingPathComponent("efficientnet-lite0-imagenet.safetensors"))
        let detectorFile = try SafeTensors(contentsOf: root.appendingPathComponent("dog-detector-lite0.safetensors"))
        let description = try ModelDescription(from: file)
        let target = folder.appendingPathComponent("with-detector.safetensors")
        try ModelFile.replacingDetector(of: file, model: description, with: detectorFile, to: target)
        let written = try SafeTensors(contentsOf: target)
        let json = try #require(written.metadata[ModelDescription.metadataKey])
        let quick = try #require(ModelDescription.quickly(json))
        #expect(quick == (try JSONDecoder().decode(ModelDescription.self, from: Data(json.utf8))))
        let detector = try ModelFile.detectorDescription(in: detectorFile)
        #expect(quick.formatVersion == 9 && quick.detector == detector)
        let model = try Model(contentsOf: target)
        #expect(model.detector?.description == detector)
        for name in detector.tensorNames { #expect(written.bytes(of: name) == detectorFile.bytes(of: name), "\(name)") }
        // Without it again: nothing of it is left, and the format goes back.
        try ModelFile.replacingDetector(of: written, model: quick, with: nil, to: target)
        let plain = try SafeTensors(contentsOf: target)
        #expect(plain.entries.keys.allSatisfy { !$0.hasPrefix("detector.") })
        #expect(try ModelDescription(from: plain).formatVersion < 8)
        // Lite1's detector does not go on Lite0.
        let other = try SafeTensors(contentsOf: root.appendingPathComponent("dog-detector-lite1.safetensors"))
        #expect(throws: ModelError.invalidValue(file: target.path, field: "detector.architecture", value: "efficientnet-lite1",
                                               requirement: "the architecture of backbone 0 (efficientnet-lite0)")) {
            try ModelFile.replacingDetector(of: file, model: description, with: other, to: target)
        }
        #expect(throws: ModelError.self) {
            try ModelFile.replacingDetector(of: file, model: description, with: file, to: target)  // no detector in it
        }
    }

    /// A file of format 8, whose detector was a 1×1 head on the last map, still loads: its detector's tensors are
    /// accepted and not run (the model then locates dogs as one without a detector), and written again without it.
    @Test func aFormat8DetectorIsAcceptedNotRun() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-detector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try SafeTensors(contentsOf: SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors"))
        let stored = try #require(file.metadata[ModelDescription.metadataKey])
        var json = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
        json["formatVersion"] = 8
        json["detector"] = ["backbone": 0, "hidden": 2, "tensorPrefix": "detector.", "threshold": 0.66, "apartThreshold": 0.28,
                            "overlap": 0.4, "inside": 0.7]
        let legacy = [("detector.hidden.weight", [2, EfficientNetLite.featureCount]), ("detector.hidden.bias", [2]),
                      ("detector.output.weight", [5, 2]), ("detector.output.bias", [5])]
        let tensors = file.entries.keys.sorted().compactMap { name in file.entries[name].map { (name, $0.dtype, $0.shape, file.bytes(of: name)) } }
            + legacy.map { name, shape in (name, "F32", shape, Data(count: 4 * shape.reduce(1, *))) }
        let target = folder.appendingPathComponent("format-8.safetensors")
        let metadata = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        try SafeTensors.encode(tensors, metadata: [ModelDescription.metadataKey: metadata]).write(to: target)
        let model = try Model(contentsOf: target)
        #expect(model.detector == nil && model.specification.legacyDetector?.hidden == 2)
        #expect(ModelDescription.quickly(metadata)?.legacyDetector?.hidden == 2)
        try ModelFile.replacingDetector(of: try SafeTensors(contentsOf: target), model: model.specification, with: nil, to: target)
        #expect(try SafeTensors(contentsOf: target).entries.keys.allSatisfy { !$0.hasPrefix("detector.") })
    }
}
