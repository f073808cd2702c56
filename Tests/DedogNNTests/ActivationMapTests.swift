import Foundation
import Testing
import DedogTestSupport
@_spi(Testing) import DedogNN
@_spi(Testing) import DedogBreedModel

/// The grid arithmetic behind "where is the dog", on small grids whose answers can be worked out by hand, and
/// the head maps the engine hands out, against its own pooled features and golden-tested head activation.
@Suite struct ActivationMapTests {
    func grid(_ rows: [[Float]]) -> ScoreGrid {
        ScoreGrid(rows: rows.count, columns: rows[0].count, values: rows.flatMap { $0 })
    }

    @Test func normalisingScalesMinToZeroAndMaxToOne() throws {
        let g = try #require(grid([[2, 4], [6, 10]]).normalised())
        #expect(g.values == [0, 0.25, 0.5, 1])
        #expect(grid([[3, 3], [3, 3]]).normalised() == nil, "a flat map shows nothing")
        #expect(grid([[0, .infinity], [1, 2]]).normalised() == nil, "an absurd map shows nothing either")
    }

    /// Cell centres sit at (i + 0.5) / n: there the value is the cell's; halfway between two centres the mean;
    /// beyond the outer centres the edge value.
    @Test func samplingIsBilinearBetweenCellCentres() {
        let g = grid([[0, 4], [8, 12]])
        #expect(g.sample(x: 0.25, y: 0.25) == 0)
        #expect(g.sample(x: 0.75, y: 0.75) == 12)
        #expect(g.sample(x: 0.5, y: 0.25) == 2)
        #expect(g.sample(x: 0.5, y: 0.5) == 6)
        #expect(g.sample(x: 0, y: 0) == 0)
        #expect(g.sample(x: 1, y: 1) == 12)
        #expect(g.sample(x: 0.625, y: 0.25) == 3)
    }

    /// Two blobs apart: the box holds the one around the peak only; joined through a diagonal cell above the
    /// threshold they are one; below it, the peak's cell alone.
    @Test func theBoxFollowsTheComponentOfThePeak() throws {
        let apart = grid([[9, 8, 0, 0, 0],
                          [7, 0, 0, 0, 0],
                          [0, 0, 0, 5, 6],
                          [0, 0, 0, 6, 0]])
        let peak = try #require(apart.peak)
        #expect(peak.row == 0 && peak.column == 0)
        #expect(apart.box(around: peak, above: 4) == .init(left: 0, top: 0, right: 2, bottom: 2))
        let joined = grid([[9, 8, 0, 0],
                           [7, 0, 5, 0],
                           [0, 0, 0, 6]])
        #expect(joined.box(around: (0, 0), above: 4) == .init(left: 0, top: 0, right: 4, bottom: 3),
                "diagonal neighbours connect")
        #expect(joined.box(around: (0, 0), above: 8.5) == .init(left: 0, top: 0, right: 1, bottom: 1))
        #expect(joined.box(around: (2, 0), above: 4) == nil, "a cell below the threshold has no component")
    }

    /// The head maps the engine returns: their mean over the cells is the pooled features (the same sums, so
    /// to rounding), they are the `head` activation the golden tests check (transposed), and the head applied to
    /// every cell averages to the photo's logits.
    @Test func mapsArePooledIntoTheFeaturesAndGiveTheLogits() throws {
        let model = try BundledModel.model, network = model.backbones[0]
        var random = SeededRandom(state: 11)
        let image = random.floats(3 * 224 * 224)
        let session = network.makeSession(threads: 1)
        let (features, maps) = try session.featuresAndMaps(image, batch: 1)
        #expect((maps.rows, maps.columns) == (7, 7))
        #expect(try features == session.features(image, batch: 1))
        var head: [Float] = []
        _ = try network.makeSession(threads: 1).features(image, batch: 1, tap: { name, values in
            if name == "head" { head = values }
        })
        #expect(try Layout.nhwc(fromNCHW: head, batch: 1, channels: 1280, plane: 49) == maps.values)
        for k in 0..<1280 {
            let mean = (0..<49).reduce(Float(0)) { $0 + maps.values[$1 * 1280 + k] } / 49
            #expect(abs(mean - features[k]) <= 1e-5 * (1 + abs(mean)), "feature \(k)")
        }
        let imagenet = try #require(model.heads[0].imagenet)
        let logits = try imagenet(features, batch: 1)
        let scores = try #require(try model.cellScores(maps, backbone: 0))
        #expect((scores.rows, scores.columns, scores.classes) == (7, 7, 1000))
        for label in [0, 207, 999] {
            let map = try #require(scores.map(label))
            let logit = map.values.reduce(0, +) / 49
            #expect(abs(logit - logits[label]) <= 1e-3 * (1 + abs(logits[label])), "label \(label): \(logit) vs \(logits[label])")
        }
        #expect(scores.map(1000) == nil)
        #expect(throws: ModelError.self) { try model.cellScores(maps, backbone: 0, image: 1) }
    }

    /// A photo and its mirror image: folding the mirrored view's cells back gives, in each cell, the mean of the
    /// cell and the mirrored view's cell on the other side.
    @Test func theMirroredViewIsFoldedBackOntoThePhoto() throws {
        let model = try BundledModel.model, network = model.backbones[0]
        var random = SeededRandom(state: 13)
        let views = random.floats(2 * 3 * 224 * 224)
        let maps = try network.makeSession(threads: 1).featuresAndMaps(views, batch: 2).maps
        let own = try #require(try model.cellScores(maps, backbone: 0))
        let other = try #require(try model.cellScores(maps, backbone: 0, image: 1))
        let folded = try #require(try model.cellScores(maps, backbone: 0, mirroredImage: 1))
        for (r, c, k) in [(0, 0, 3), (2, 6, 500), (6, 1, 999)] {
            let expected = (own.values[(r * 7 + c) * 1000 + k] + other.values[(r * 7 + 6 - c) * 1000 + k]) / 2
            let got = folded.values[(r * 7 + c) * 1000 + k]
            #expect(abs(got - expected) <= 1e-4 * (1 + abs(expected)), "cell \(r),\(c) class \(k)")
        }
    }

    /// Two images on two threads: each image's maps land in its own place.
    @Test func batchedMapsMatchEachImageAlone() throws {
        let network = try BundledModel.network
        var random = SeededRandom(state: 12)
        let images = (0..<2).map { _ in random.floats(3 * 224 * 224) }
        let together = try network.makeSession(threads: 2).featuresAndMaps(images.flatMap { $0 }, batch: 2).maps
        for (i, image) in images.enumerated() {
            let alone = try network.makeSession(threads: 1).featuresAndMaps(image, batch: 1).maps.values
            let part = Array(together.values[(i * alone.count)..<((i + 1) * alone.count)])
            let worst = zip(part, alone).map { abs($0 - $1) }.max()!
            #expect(worst <= 1e-4 * (1 + alone.map(abs).max()!), "image \(i): \(worst)")
        }
    }
}
