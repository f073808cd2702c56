@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTestSupport
import Foundation
import Testing

/// Where the dog is, and the second look at a dog small in the frame, with the bundled fast model on the sample
/// beagle: as it is, and pasted at a third of the side of a larger grey photo at a known place.
@Suite struct WhereTheDogIsTests {
    static let sharedClassifier = Shared { try Classifier(modelURL: SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")) }
    static var classifier: Classifier { get throws { try sharedClassifier.value } }
    static let sharedBeagle = Shared { try ImageDecoder().decode(contentsOf: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")) }
    static var beagle: RGBImage { get throws { try sharedBeagle.value } }

    /// `photo` scaled to `side` and pasted at (`x`, `y`) on a `canvas`-pixel square of flat grey.
    static func pasted(_ photo: RGBImage, side: Int, x: Int, y: Int, canvas: Int) throws -> RGBImage {
        let small = try Resampler.resized(photo, width: side, height: side)
        var pixels = [UInt8](repeating: 118, count: canvas * canvas * 3)
        for row in 0..<side {
            let to = ((y + row) * canvas + x) * 3
            pixels.replaceSubrange(to..<(to + side * 3), with: small.pixels[(row * side * 3)..<((row + 1) * side * 3)])
        }
        return try RGBImage(width: canvas, height: canvas, pixels: pixels)
    }

    static func overlap(_ a: DogLocation, _ b: (x: Int, y: Int, width: Int, height: Int)) -> Double {
        let w = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
        let h = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
        let union = a.width * a.height + b.width * b.height - w * h
        return Double(w * h) / Double(union)
    }

    @Test func aDogFillingThePhotoIsBoxedInsideItAndNotZoomed() throws {
        let beagle = try Self.beagle
        let result = try Self.classifier.classify(beagle)
        let box = try #require(result.location)
        #expect(box.x >= 0 && box.y >= 0 && box.x + box.width <= beagle.width && box.y + box.height <= beagle.height)
        #expect(box.width * box.height >= beagle.width * beagle.height / 8, "\(box)")
        #expect(!box.zoomed)
        #expect(result.breeds.first?.key == "n02088364-beagle")
    }

    /// A third of the side on grey: the box lands on the beagle (intersection over union at least 0.4: a cell
    /// of the fast model's 8×8 map is 79 pixels here, a third of the dog), the dog covers less of the square
    /// than when it fills the photo, the second look (taken whenever there is room) names it, and classify
    /// answers as the standard policy says.
    @Test func aSmallDogIsFoundAndLookedAtAgain() throws {
        let side = 240, x = 300, y = 110
        let photo = try Self.pasted(Self.beagle, side: side, x: x, y: y, canvas: 720)
        let looks = try Self.classifier.looks(at: photo, top: 3, zoom: .always)
        let box = try #require(looks.whole.location)
        #expect(Self.overlap(box, (x, y, side, side)) >= 0.4, "\(box)")
        let filling = try #require(try Self.classifier.looks(at: Self.beagle, top: 3, zoom: nil).extent)
        #expect(try #require(looks.extent) < filling - 0.2, "the same dog, a third of the side")
        let zoomed = try #require(looks.zoomed)
        #expect(zoomed.location == DogLocation(x: box.x, y: box.y, width: box.width, height: box.height, zoomed: true))
        #expect(looks.closer?.breeds.first?.key == "n02088364-beagle")
        #expect(zoomed.breeds.first?.key == "n02088364-beagle")
        let standard = try Self.classifier.looks(at: photo, top: 3, zoom: .standard)
        #expect(try Self.classifier.classify(photo) == standard.answer)
        // Without zooming, the same photo keeps its whole-photo answer; without locating, it has no box.
        var configuration = ClassifierConfiguration()
        configuration.zoom = nil
        let once = try Classifier(model: Self.classifier.model, modelURL: Self.classifier.modelURL, configuration: configuration)
        #expect(try once.classify(photo) == looks.whole)
        configuration.locates = false
        let blind = try Classifier(model: Self.classifier.model, modelURL: Self.classifier.modelURL, configuration: configuration)
        var unplaced = looks.whole
        unplaced.location = nil
        #expect(try blind.classify(photo) == unplaced)
    }

    /// Two train-split photos side by side on grey, each 42 % of the side, 6 % apart (as the `two-dogs` check set):
    /// with the detector, one answer per dog, each named, each box on its own dog; the same photos alone give no
    /// split. Without a detector (a model made with `--no-detector`), the activation maps place one dog: no split.
    @Test(.needsStanfordDogs) func twoDogsOfDifferentBreedsGetAnAnswerEach() throws {
        let decoder = ImageDecoder()
        let basenji = try decoder.decode(contentsOf: SharedData.stanfordDogs.appendingPathComponent("n02110806-basenji/n02110806_4216.jpg"))
        let maltese = try decoder.decode(contentsOf: SharedData.stanfordDogs.appendingPathComponent("n02085936-Maltese_dog/n02085936_4343.jpg"))
        let classifier = try Classifier()
        var photo = try Self.pasted(basenji, side: 282, x: 34, y: 94, canvas: 672)
        let right = try Self.pasted(maltese, side: 282, x: 356, y: 267, canvas: 672)
        for row in 267..<(267 + 282) {  // the Maltese's rectangle onto the basenji's canvas
            let at = (row * 672 + 356) * 3
            photo.pixels.replaceSubrange(at..<(at + 282 * 3), with: right.pixels[at..<(at + 282 * 3)])
        }
        let result = try classifier.classify(photo)
        try #require(result.dogs.count == 2, "\(result.breeds.map(\.key))")
        let basenjiBox = (x: 34, y: 94, width: 282, height: 282), malteseBox = (x: 356, y: 267, width: 282, height: 282)
        for dog in result.dogs {
            let box = try #require(dog.location)
            let truth = dog.breeds.first?.key == "n02110806-basenji" ? basenjiBox : malteseBox
            #expect(Self.overlap(box, truth) >= 0.5, "\(dog.breeds.first?.key ?? "-"): \(box)")
        }
        #expect(Set(result.dogs.compactMap { $0.breeds.first?.key }) == ["n02110806-basenji", "n02085936-Maltese_dog"])
        #expect(try classifier.classify(basenji).dogs.isEmpty && classifier.classify(maltese).dogs.isEmpty)
        var configuration = ClassifierConfiguration()
        configuration.usesDetector = false
        let blind = try Classifier(configuration: configuration)  // the default model, as if it had no detector
        let one = try blind.classify(photo)
        #expect(one.dogs.isEmpty && one.location != nil, "\(one.dogs.count) dogs")
    }

    /// The square looked at again: the box's longer side (at least an eighth of the photo), divided by the
    /// share the network's centre crop keeps, centred on the box and moved inside the photo.
    @Test func theZoomSquareHoldsTheBoxInsideThePhoto() throws {
        let middle = DogPlace(box: (100, 50, 60, 40), extent: 0.1)
        let square = try #require(middle.zoomSquare(width: 1000, height: 800, cropShare: 0.875))
        // max(60, 40, 800 / 8) / 0.875 = 114.29 → 114, centred on (130, 70): (72.86, 12.86) → (73, 13).
        #expect(square == (73, 13, 114))
        let corner = DogPlace(box: (0, 0, 200, 300), extent: 0.2)
        #expect(try #require(corner.zoomSquare(width: 1000, height: 800, cropShare: 0.875)) == (0, 0, 343))
        let large = DogPlace(box: (0, 0, 600, 560), extent: 0.5)
        #expect(large.zoomSquare(width: 1000, height: 800, cropShare: 0.875) == nil, "most of the photo: nothing to gain")
    }
}
