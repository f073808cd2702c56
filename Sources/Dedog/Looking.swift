import DedogImage
import DedogNN
import DedogBreedModel

extension Classifier {
    /// Classifies `image`, finds where its dogs are and answers each dog of a photo of several from its own crop;
    /// a photo of one dog that `zoom` finds small (`ZoomPolicy.always`: whenever the box leaves room) is looked at
    /// again, closer, and one held back as a breed the model does not know, on its own
    /// (`ZoomPolicy.heldBackNamedFrom`). `decodeAgain` decodes the photo again with other options: a photo decoded
    /// smaller than it is (a large JPEG, a HEIC's thumbnail) is decoded again, larger, when a rectangle to look at
    /// would otherwise have too few pixels. The steps are `PhotoLook`'s.
    @_spi(Benchmarks) public func looks(at image: RGBImage, top: Int, zoom: ZoomPolicy?,
                                        decodeAgain: ((ImageDecoder.Options) throws(ImageError) -> RGBImage)? = nil) throws(ClassifierError) -> Looks {
        guard configuration.locates else { return Looks(whole: try decide(features: features(of: image), top: top)) }
        let photo = try PhotoLook(self, image: image, top: top, decodeAgain: decodeAgain)
        guard let place = try photo.dogPlace() else { return Looks(whole: photo.whole) }
        var looks = Looks(whole: photo.located(at: place), extent: place.extent)
        if let dogs = try photo.eachDog() {
            looks.dogs = dogs
        } else if let zoom, zoom.wants(photo.whole, extent: place.extent) {
            try photo.lookCloser(at: place, into: &looks)
        } else if let zoom {
            try photo.lookAtHeldBackDog(zoom, into: &looks)
        }
        return looks
    }

    /// The whole photo's answer as `looks(at:)` first makes it, before any closer look, and the detector's best box's
    /// score (nil: no box, or no detector) — what `SeenDogRule` weighs (`DedogBench seen-dog` chooses it).
    @_spi(Benchmarks) public func wholeLook(at image: RGBImage, top: Int) throws(ClassifierError) -> (answer: Classification, detector: Float?) {
        let photo = try PhotoLook(self, image: image, top: top, decodeAgain: nil)
        return (photo.whole, photo.bestScore)
    }
}

/// One photo being looked at: its views' features, the whole photo's answer and the dogs the detector found, with
/// the steps `Classifier.looks(at:)` takes.
struct PhotoLook {
    let classifier: Classifier
    let image: RGBImage
    let top: Int
    /// Each backbone's features of the whole photo's views, and its head's maps.
    let features: [[Float]]
    let maps: [FeatureMaps]
    /// The whole photo's answer, without a location.
    let whole: Classification
    /// The detector's dogs, best first, with their scores (none without a detector).
    let detected: [(place: DogPlace, score: Float)]
    /// The best box's score (nil: none): a dog the detector sees, which the seen-dog rule weighs in every decision
    /// about this photo and its crops (`SeenDogRule`).
    var bestScore: Float? { detected.first?.score }
    let larger: Classifier.LargerPhoto?

    init(_ classifier: Classifier, image: RGBImage, top: Int,
         decodeAgain: ((ImageDecoder.Options) throws(ImageError) -> RGBImage)?) throws(ClassifierError) {
        (self.classifier, self.image, self.top) = (classifier, image, top)
        let seen = try classifier.views(of: image, maps: true)
        (features, maps) = (seen.features, seen.maps)
        detected = try classifier.detectedDogs(seen.pyramid, image: image)
        whole = try classifier.decide(features: features, top: top, detectorScore: detected.first?.score)
        larger = decodeAgain.map(Classifier.LargerPhoto.init)
    }

    /// Whether the model's detector is used: then a photo in which it finds no dog and that is answered "no dog"
    /// has no box at all.
    var detects: Bool { classifier.configuration.usesDetector && classifier.model.detector != nil }

    /// Where the (first) dog is: the detector's best box; where it found none, the top breed's activation map
    /// (`DogPlace(_:map:)`), unless the detector is used and the photo is answered "no dog". Nil: no box.
    func dogPlace() throws(ClassifierError) -> DogPlace? {
        if let first = detected.first { return first.place }
        guard !(detects && whole.verdict == .noDog), let breed = whole.breeds.first?.key,
              let label = (classifier.model.breedLabels ?? classifier.model.imagenetLabels ?? []).firstIndex(where: { $0.key == breed }) else {
            return nil
        }
        let photoMaps: PhotoMaps?
        do {
            photoMaps = try PhotoMaps(model: classifier.model, maps: maps, mirrored: classifier.averagesMirror, width: image.width,
                                      height: image.height)
        } catch {
            throw .model(error)
        }
        return photoMaps.flatMap { maps in maps.map(label).flatMap { DogPlace(maps, map: $0) } }
    }

    /// The whole photo's answer with the dog's location; a "no dog" answer gets none from the detector's box.
    func located(at place: DogPlace) -> Classification {
        var answer = whole
        if !(detected.first != nil && whole.verdict == .noDog) { answer.location = place.location(in: image, zoomed: false) }
        return answer
    }

    /// One answer per dog when the detector found two or more in a photo answered as a dog: each box, with a
    /// margin, looked at on its own (at most `Classifier.mostDogs`); nil unless two or more of them are dogs.
    func eachDog() throws(ClassifierError) -> [Classification]? {
        guard classifier.configuration.separatesDogs, whole.verdict != .noDog, detected.count >= 2 else { return nil }
        var dogs: [Classification] = []
        for (dog, score) in detected.prefix(Classifier.mostDogs) {
            var answer = try look(at: dog.margined(width: image.width, height: image.height), detectorScore: score).answer
            guard answer.verdict != .noDog else { continue }
            answer.location = dog.location(in: image, zoomed: true)
            dogs.append(answer)
        }
        return dogs.count >= 2 ? dogs : nil
    }

    /// The second look at a dog small in the frame: a square around its box. A close look that sees no dog changes
    /// nothing; where the whole photo showed none, one that finds a dog answers alone (the dog was too small to
    /// count); otherwise the two views' features are averaged into one answer. Where the square is the detector's
    /// box, the detector's word on it counts in both decisions, as in the whole photo's.
    func lookCloser(at place: DogPlace, into looks: inout Classifier.Looks) throws(ClassifierError) {
        guard let input = classifier.model.backbones.first?.input,
              let square = place.zoomSquare(width: image.width, height: image.height,
                                            cropShare: Double(input.cropSize) / Double(input.resizeShorterSide), largest: 0.8) else { return }
        let look = try look(at: (square.x, square.y, square.side, square.side), detectorScore: bestScore)
        looks.closer = look.answer
        guard look.answer.verdict != .noDog else { return }
        var answer = whole.verdict == .noDog ? look.answer
            : try classifier.decide(features: zip(features, look.features).map { $0 + $1 }, top: top, detectorScore: bestScore)
        answer.location = place.location(in: image, zoomed: true)
        looks.zoomed = answer
    }

    /// The second look at a dog held back as "a breed this model does not know" (`ZoomPolicy.heldBackNamedFrom`): the
    /// detector's best box, with a margin, looked at on its own, as each dog of a photo of several is. Its answer is
    /// the photo's when it names the whole photo's top breed, sure of it; otherwise the whole photo's answer stands.
    /// A photo of a dog the backbones never saw is held back more often than their own (Stanford's) photos; the
    /// dog's own view, without the sofa or the snow, is a second photo of it (docs/accuracy.md).
    func lookAtHeldBackDog(_ zoom: ZoomPolicy, into looks: inout Classifier.Looks) throws(ClassifierError) {
        guard let (dog, score) = detected.first, let breed = whole.breeds.first?.key else { return }
        let box = dog.margined(width: image.width, height: image.height)
        guard zoom.looksAgainAtHeldBack(whole, box: box, width: image.width, height: image.height) else { return }
        var answer = try look(at: box, detectorScore: score).answer
        looks.closer = answer
        guard zoom.namesHeldBack(answer, breed: breed) else { return }
        answer.location = dog.location(in: image, zoomed: true)
        looks.zoomed = answer
    }

    /// The rectangle `rect` of the photo looked at on its own, as a photo: its views' features, and the answer
    /// (`detectorScore`: the detector's box it is cut around, nil where it is not one).
    private func look(at rect: (x: Int, y: Int, width: Int, height: Int),
                      detectorScore: Float?) throws(ClassifierError) -> (features: [[Float]], answer: Classification) {
        let crop: RGBImage
        do {
            crop = try classifier.crop(image, rect, wanted: classifier.model.backbones.first?.input.resizeShorterSide ?? 0, larger: larger)
        } catch {
            throw .image(error)
        }
        let features = try classifier.views(of: crop, maps: false).features
        return (features, try classifier.decide(features: features, top: top, detectorScore: detectorScore))
    }
}
