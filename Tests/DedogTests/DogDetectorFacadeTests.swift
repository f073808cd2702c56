@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogTestSupport
import Foundation
import Testing

/// The bundled models' dog detector through the classifier: each dog of a photo of two named on its own, its box on
/// it; the box on the dog however the photo is stored turned (EXIF orientations 1–8); no box where there is no dog.
@Suite struct DogDetectorFacadeTests {
    /// Two test photos of one dog each (`DogPhotos.testPair`), restored to their proportions, side by side.
    static let pair = DogPhotos.testPair
    /// A test photo of one dog, whose box is known (boxes.tsv).
    static let single = "n02088364-beagle/n02088364_11231.jpg"

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-detector-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(.needsStanfordDogs, arguments: ["default", "fast"])
    func eachDogOfATwoDogPhotoIsNamedOnItsOwn(_ model: String) throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let made = try DogPhotos.sideBySide(Self.pair)
        let result = try classifier.classify(made.image)
        try #require(result.dogs.count == 2, "\(model): \(result.dogs.map { $0.breeds.first?.key ?? "-" })")
        for (dog, (box, breed)) in zip(result.dogs.sorted { ($0.location?.x ?? 0) < ($1.location?.x ?? 0) }, zip(made.boxes, made.breeds)) {
            let location = try #require(dog.location)
            #expect(DogPhotos.overlap((location.x, location.y, location.width, location.height), box) >= 0.5, "\(model): \(location) against \(box)")
            #expect(dog.verdict == .dog && dog.breeds.first?.key == breed, "\(model): \(dog.verdict) \(dog.breeds.first?.key ?? "-")")
        }
        // Each photo alone keeps the one-dog answer: no `dogs`, its box on its dog.
        for path in Self.pair {
            let alone = try DogPhotos.restored(path, height: 400)
            let answer = try classifier.classify(alone.image)
            #expect(answer.dogs.isEmpty, "\(model): \(path)")
            let location = try #require(answer.location)
            #expect(DogPhotos.overlap((location.x, location.y, location.width, location.height), alone.boxes[0]) >= 0.5)
        }
    }

    /// The same photo stored turned eight ways, each with the EXIF orientation that turns it back: read from the
    /// file as classify reads it, its box lands on the dog every time.
    @Test(.needsStanfordDogs) func theBoxLandsOnTheDogForEveryEXIFOrientation() throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: "fast"))
        let (upright, boxes) = try DogPhotos.restored(Self.single, height: 480)
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        for orientation in 1...8 {
            let url = dir.appendingPathComponent("turned-\(orientation).jpg")
            try Data(DogPhotos.jpeg(upright, orientation: orientation)).write(to: url)
            let result = try classifier.classify(contentsOf: url)
            let location = try #require(result.location, "orientation \(orientation)")
            #expect(DogPhotos.overlap((location.x, location.y, location.width, location.height), boxes[0]) >= 0.6,
                    "orientation \(orientation): \(location) against \(boxes[0])")
        }
    }

    /// A photo without a dog (a cat of pets-real; flat noise) gets no box from the detector, and no answer per dog.
    @Test(.needsPetsReal, arguments: ["default", "fast"]) func aPhotoWithoutADogHasNoBox(_ model: String) throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let noise = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png")
        for url in [SharedData.cat, noise] {
            let image = try ImageDecoder().decode(contentsOf: url)
            #expect(try classifier.detections(in: image, minimumScore: classifier.model.detector?.description.threshold ?? 1).isEmpty,
                    "\(model): \(url.lastPathComponent)")
            let result = try classifier.classify(image)
            #expect(result.verdict == .noDog && result.location == nil && result.dogs.isEmpty, "\(model): \(url.lastPathComponent)")
        }
    }

    /// A cat the detector draws a box on, which the whole photo calls a cat, is not looked at again: the close look
    /// at the box, the cat's surroundings cut away, answered "a breed this model does not know" (both models).
    @Test(.needsPetsReal, arguments: ["default", "fast"]) func aCatIsNotLookedAtAgain(_ model: String) throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let image = try ImageDecoder().decode(contentsOf: SharedData.petsReal.appendingPathComponent("cats/cat.297.jpg"))
        // What makes this cat the case: the detector finds a dog in it (a first box needs only the lower score),
        // small enough to look at again.
        #expect(try !classifier.detections(in: image, minimumScore: classifier.model.detector?.description.apartThreshold ?? 1).isEmpty)
        let looks = try classifier.looks(at: image, top: 3, zoom: .standard)
        #expect(looks.whole.verdict == .noDog && looks.whole.looksLike == .cat, "\(model): \(looks.whole.verdict)")
        #expect(looks.closer == nil && looks.zoomed == nil, "\(model): looked at again")
        let answer = try classifier.classify(image)
        #expect(answer.verdict == .noDog && answer.looksLike == .cat, "\(model): \(answer.verdict)")
    }
}
