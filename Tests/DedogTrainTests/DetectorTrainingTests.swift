import Foundation
import Testing
import DedogImage
@_spi(Testing) import DedogTrain
@_spi(Testing) import DedogBreedModel

/// What the detector learns from and how it is scored, against values worked out by hand; its loss's gradient
/// against finite differences of the loss itself.
@Suite struct DetectorTrainingTests {
    @Test func aBoxesFileIsReadAndItsFaultsAreSaidByLine() throws {
        let text = "file\tsplit\twidth\theight\tdogs\tboxes\n"
            + "a/1.jpg\ttrain\t500\t375\t2\t10,20,110,220;300,0,501,376\n"  // the second reaches past the photo: clipped
            + "a/2.jpg\ttrain\t100\t100\t0\t\n"
            + "a/3.jpg\ttest\t100\t100\t0\n"
        let boxes = try BoxesFile(parsing: text, file: "boxes.tsv")
        #expect(boxes.entries.count == 3)
        let first = try #require(boxes.entries["a/1.jpg"])
        #expect(first.boxes == [.init(x0: 10, y0: 20, x1: 110, y1: 220), .init(x0: 300, y0: 0, x1: 500, y1: 375)])
        #expect(boxes.entries["a/2.jpg"]?.boxes.isEmpty == true && boxes.entries["a/3.jpg"]?.split == "test")
        let header = "file\tsplit\twidth\theight\tdogs\tboxes\n"
        for (line, detail) in [("a.jpg\ttrain\t10\t10\t2\t1,1,5,5", "2 dogs but 1 boxes"),
                               ("a.jpg\ttrain\t0\t10\t0\t", "width and height must be positive whole numbers"),
                               ("a.jpg\ttrain\t10\t10\t1\t5,1,2,5", "box `5,1,2,5` must be x0,y0,x1,y1 with x0 < x1 and y0 < y1"),
                               ("a.jpg\ttrain\t10\t10\t1\t20,20,30,30", "box `20,20,30,30` lies outside the 10×10 photo"),
                               ("a.jpg\ttrain\t10", "3 fields, not 6")] {
            #expect(throws: TrainError.boxesFile(path: "boxes.tsv", line: 2, detail: detail)) {
                try BoxesFile(parsing: header + line + "\n", file: "boxes.tsv")
            }
        }
        #expect(throws: TrainError.self) { try BoxesFile(parsing: "file,split\n", file: "boxes.tsv") }
    }

    /// Two images, three truths, four detections ranked 0.9 (hit), 0.8 (miss), 0.7 (hit), 0.6 (hit): precision
    /// 1, 1/2, 2/3, 3/4 at recall 1/3, 1/3, 2/3, 1; made monotone 1, 3/4, 3/4, 3/4. Of the 101 recall points, 0
    /// to 0.33 (34 points) read 1 and 0.34 to 1 (67 points) read 3/4: (34 + 67 · 0.75) / 101.
    @Test func averagePrecisionIsCOCOs() {
        func box(_ x: Double, _ score: Float = 1) -> Detection { Detection(x0: x, y0: 0, x1: x + 0.2, y1: 0.5, score: score) }
        let truths = [[box(0), box(0.5)], [box(0.3)]]
        let found = [[box(0, 0.9), box(0.8, 0.8), box(0.51, 0.6)], [box(0.31, 0.7)]]
        let ap = AveragePrecision.compute(found, truths: truths, overlap: 0.5)
        #expect(abs(ap - (34 + 67 * 0.75) / 101) < 1e-12, "\(ap)")
        #expect(AveragePrecision.compute([[box(0, 0.5)]], truths: [[box(0)]], overlap: 0.5) == 1)
        // A box found twice counts once: the second is a miss.
        #expect(abs(AveragePrecision.compute([[box(0, 0.9), box(0.01, 0.8)]], truths: [[box(0)]], overlap: 0.5) - 1) < 1e-12)
    }

    /// The focal loss and L1 terms' gradient against central differences of the loss, on a 3×3 grid with a dog
    /// whose centre falls in the middle cell.
    @Test func theLossGradientMatchesFiniteDifferences() {
        let targets = DetectorHead.Targets([SquareBox(cx: 0.55, cy: 0.45, w: 0.5, h: 0.3)], rows: 3, columns: 3)
        #expect(targets.heat[4] == 1 && targets.centres.count == 1 && targets.centres[0].cell == 4)
        #expect(abs(targets.centres[0].values[0] - Float(0.55 * 3 - 1.5)) < 1e-6)
        let out: [Float] = (0..<45).map { Float(($0 * 37) % 23) / 10 - 1.1 }
        var gradient = [Float](repeating: 0, count: 45)
        _ = gradient.withUnsafeMutableBufferPointer { DetectorHead.loss(out[...], targets, gradient: $0.baseAddress!, dogs: 1) }
        for i in out.indices {
            var up = out, down = out
            up[i] += 1e-3
            down[i] -= 1e-3
            let numeric = (DetectorHead.loss(up[...], targets, gradient: nil, dogs: 1) - DetectorHead.loss(down[...], targets, gradient: nil, dogs: 1)) / 2e-3
            #expect(abs(Double(gradient[i]) - numeric) < 2e-3 * max(1, abs(numeric)), "output \(i): \(gradient[i]) against \(numeric)")
        }
    }

    @Test func mosaicsMoveEachPhotosBoxesAlong() throws {
        let a = try RGBImage(width: 40, height: 20, pixels: [UInt8](repeating: 10, count: 40 * 20 * 3))
        let b = try RGBImage(width: 10, height: 10, pixels: [UInt8](repeating: 200, count: 10 * 10 * 3))
        let (image, boxes) = try Scene.joined([(a, [.init(x0: 0, y0: 0, x1: 20, y1: 10)]), (b, [.init(x0: 5, y0: 5, x1: 10, y1: 10)])],
                                              horizontal: true)
        // Both at the smaller height, 10: a becomes 20×10 (its box halved), b stays 10×10, moved 20 to the right.
        #expect((image.width, image.height) == (30, 10))
        #expect(boxes == [.init(x0: 0, y0: 0, x1: 10, y1: 5), .init(x0: 25, y0: 5, x1: 30, y1: 10)])
        #expect(image[x: 25, y: 5] == (200, 200, 200) && image[x: 19, y: 9] == (10, 10, 10))
    }

    @Test func theEmptyStripIsTheLargestSideWithoutADog() {
        let entry = BoxesFile.Entry(split: "train", width: 400, height: 300, boxes: [.init(x0: 250, y0: 50, x1: 390, y1: 290)])
        // Left of the dog: 250 of 400 (62 %); above it only 50 of 300.
        #expect(Scene.emptyStrip(entry) == .init(x0: 0, y0: 0, x1: 250, y1: 300))
        let filling = BoxesFile.Entry(split: "train", width: 400, height: 300, boxes: [.init(x0: 100, y0: 20, x1: 390, y1: 290)])
        #expect(Scene.emptyStrip(filling) == nil)
    }

    @Test func aBoxIsPlacedInTheNetworksSquareAndClippedToIt() throws {
        // The square the network sees starts 40 pixels left of a 300 × 200 photo and is 380 pixels wide.
        let square = (x: -40.0, y: -90.0, width: 380.0, height: 380.0)
        let inside = try #require(CellGrids.inSquare(.init(x0: 0, y0: 0, x1: 190, y1: 95), square))
        #expect(abs(inside.cx - (40 + 95) / 380.0) < 1e-12 && abs(inside.w - 0.5) < 1e-12 && abs(inside.h - 0.25) < 1e-12)
        // Mostly outside the square: left out.
        #expect(CellGrids.inSquare(.init(x0: 330, y0: 0, x1: 500, y1: 100), square) == nil)
    }
}
