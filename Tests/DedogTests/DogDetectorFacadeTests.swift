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

    /// A test photo Stanford boxes as one dog though it shows two: a Scottish Terrier, boxed, lying beside a black
    /// Labrador Retriever that Stanford, boxing the photo's breed, left without a box
    /// (`scripts/experiments/stanford-unboxed-dogs.tsv`). Both dogs are answered, each on its own: one on the boxed
    /// dog and named for it, the other beside it and not named a Scottish Terrier.
    @Test(.needsStanfordDogs, arguments: ["default", "fast"])
    func aSecondDogStanfordDidNotBoxIsFound(_ model: String) throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let (image, boxes) = try DogPhotos.restored("n02097298-Scotch_terrier/n02097298_15174.jpg", height: 400)
        try #require(boxes.count == 1)
        let result = try classifier.classify(image)
        try #require(result.dogs.count == 2, "\(model): \(result.dogs.map { $0.breeds.first?.key ?? "-" })")
        let placed = try result.dogs.map { dog -> (overlap: Double, breed: String?) in
            let l = try #require(dog.location)
            return (DogPhotos.overlap((l.x, l.y, l.width, l.height), boxes[0]), dog.breeds.first?.key)
        }.sorted { $0.overlap > $1.overlap }
        #expect(placed[0].overlap >= 0.5 && placed[0].breed == "n02097298-Scotch_terrier", "\(model): \(placed)")
        #expect(placed[1].overlap < 0.2 && placed[1].breed != "n02097298-Scotch_terrier", "\(model): \(placed)")
    }

    /// The list of photos seen to show a dog Stanford did not box holds one-dog photos of the shared splits, each
    /// once, each with what it shows: the readers (scripts/choose_detector_threshold.py, scripts/bench_detector.py)
    /// leave them out of the one-dog photos, so a row naming another photo would silently count nothing.
    @Test(.needsStanfordDogs) func theUnboxedDogsListNamesOneDogPhotosOfTheSplits() throws {
        let url = SharedData.packageRoot.appendingPathComponent("scripts/experiments/stanford-unboxed-dogs.tsv")
        let rows = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        try #require(rows.first == ["file", "split", "what the photo shows besides its boxed dogs"])
        let listed = rows.dropFirst()
        #expect(listed.count >= 40)
        #expect(Set(listed.map { $0[0] }).count == listed.count, "a photo listed twice")
        for row in listed {
            #expect(row.count == 3 && !row[2].isEmpty, "\(row)")
            let truth = try DogPhotos.boxed(row[0])
            #expect(truth?.split == row[1] && truth?.dogs == 1, "\(row[0]): boxes.tsv has \(String(describing: truth))")
        }
    }

    /// A photo without a dog (a cat of pets-real; flat noise) gets no box and no answer per dog. The detector itself
    /// finds nothing in the cat; in 13 × 9 pixels of noise, which fill the frame as a close view of a dog does, the
    /// default model's detector (trained on close views too, issue 70) finds a weak box (0.28, its threshold 0.24),
    /// which the "no dog" answer does not show.
    @Test(.needsPetsReal, arguments: ["default", "fast"]) func aPhotoWithoutADogHasNoBox(_ model: String) throws {
        let classifier = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let noise = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png")
        for url in [SharedData.cat, noise] {
            let image = try ImageDecoder().decode(contentsOf: url)
            if url == SharedData.cat {
                #expect(try classifier.detections(in: image, minimumScore: classifier.model.detector?.description.threshold ?? 1).isEmpty,
                        "\(model): \(url.lastPathComponent)")
            }
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

    /// A coyote stays "no dog" under the seen-dog rule (issue 70), though the detector finds it and the breed heads
    /// are sure of a breed (dhole): the ImageNet heads put too little of their mass on dogs for it (6.9 % with the
    /// default model, the rule asks for 26 %). The same photo with the rule's share lowered to 1 % is a dog: the
    /// share is what keeps it "no dog", not a missing box.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: Self.coyote.path), "../shared/datasets/more-breeds-224 is absent"),
          arguments: ["default", "fast"])
    func aCoyoteTheDetectorSeesStaysNoDog(_ model: String) throws {
        let bundled = try Classifier(modelURL: ModelLocator.url(ofBundled: model))
        let rule = try #require(bundled.model.specification.decision.seenDog, "\(model) has no seen-dog rule")
        let image = try ImageDecoder(options: bundled.decoderOptions).decode(contentsOf: Self.coyote)
        let look = try bundled.wholeLook(at: image, top: 3)
        let detector = try #require(look.detector, "\(model): the detector finds no dog in the coyote")
        #expect(detector >= rule.detectorFrom && (look.answer.breeds.first?.probability ?? 0) >= rule.breedFrom, "\(model)")
        #expect(look.answer.verdict == .noDog, "\(model)")
        #expect(try bundled.classify(image).verdict == .noDog, "\(model)")
        var lowered = bundled.model.specification.decision
        lowered.seenDog?.dogShareFrom = 0.01
        let permissive = try Classifier(modelURL: ModelLocator.url(ofBundled: model), configuration: .overriding(decision: lowered))
        #expect(try permissive.wholeLook(at: image, top: 3).answer.verdict != .noDog, "\(model)")
    }

    static let coyote = SharedData.root.appendingPathComponent("datasets/more-breeds-224/coyote (not a dog)/train_13.jpg")
}
