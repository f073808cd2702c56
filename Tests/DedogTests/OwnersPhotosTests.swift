@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogTestSupport
import Foundation
import Testing

/// The photos owners take of their own dogs (`OwnersPhotos`), through the facade: a puppy the whole photo holds back
/// is named from the dog's own look; a dog with a ball, one in the snow and a head close-up are dogs of their breed,
/// the close-up found by the detector.
@Suite struct OwnersPhotosTests {
    static func classifier(_ model: String) throws -> Classifier {
        try Classifier(modelURL: ModelLocator.url(ofBundled: model))
    }

    /// The default model holds the Saint Bernard puppy back from the whole photo; the detector's box looked at on its
    /// own names the breed, and that answer is the photo's, its box marked as looked at again. Without that look
    /// (`heldBackNamedFrom` nil) the photo stays held back.
    @Test(.needsAmateurPets) func aPuppyHeldBackIsNamedFromItsOwnLook() throws {
        let classifier = try Self.classifier("default")
        let image = try ImageDecoder().decode(contentsOf: OwnersPhotos.puppy.url)
        let looks = try classifier.looks(at: image, top: 3, zoom: .standard)
        #expect(looks.whole.verdict == .otherBreed && looks.whole.breeds.first?.key == OwnersPhotos.puppy.key, "\(looks.whole)")
        let closer = try #require(looks.closer)
        #expect(closer.verdict == .dog && (closer.breeds.first?.probability ?? 0) >= 0.95, "\(closer)")
        let answer = try classifier.classify(contentsOf: OwnersPhotos.puppy.url)
        #expect(answer.verdict == .dog && answer.breeds.first?.key == OwnersPhotos.puppy.key, "\(answer)")
        #expect(answer.location?.zoomed == true)
        var without = ZoomPolicy.standard
        without.heldBackNamedFrom = nil
        let held = try classifier.looks(at: image, top: 3, zoom: without)
        #expect(held.answer.verdict == .otherBreed && held.closer == nil)
    }

    /// The look asks for the whole photo's breed, sure of it: a look that names it under `heldBackNamedFrom`, or names
    /// another breed, leaves the photo held back.
    @Test(.needsAmateurPets) func theLookMustNameTheSameBreedSurely() throws {
        let classifier = try Self.classifier("default")
        let image = try ImageDecoder().decode(contentsOf: OwnersPhotos.puppy.url)
        var strict = ZoomPolicy.standard
        strict.heldBackNamedFrom = 0.999
        #expect(try classifier.looks(at: image, top: 3, zoom: strict).answer.verdict == .otherBreed)
        let closer = try #require(try classifier.looks(at: image, top: 3, zoom: .standard).closer)
        #expect(!ZoomPolicy.standard.namesHeldBack(closer, breed: "n02110958-pug"))
        #expect(ZoomPolicy.standard.namesHeldBack(closer, breed: OwnersPhotos.puppy.key))
    }

    /// A box covering most of the photo shows the dog as the whole photo did: it is not looked at again.
    @Test func aBoxFillingThePhotoIsNotLookedAtAgain() {
        let held = Classification(verdict: .otherBreed, breeds: [], dogProbability: 0.9)
        #expect(ZoomPolicy.standard.looksAgainAtHeldBack(held, box: (0, 0, 80, 90), width: 100, height: 100))
        #expect(!ZoomPolicy.standard.looksAgainAtHeldBack(held, box: (0, 0, 100, 80), width: 100, height: 100))
        var named = held
        named.verdict = .dog
        #expect(!ZoomPolicy.standard.looksAgainAtHeldBack(named, box: (0, 0, 10, 10), width: 100, height: 100))
        #expect(!ZoomPolicy.always.looksAgainAtHeldBack(held, box: (0, 0, 10, 10), width: 100, height: 100))
    }

    /// A pug chewing a tennis ball and a Samoyed puppy in the snow are dogs of their breeds with both models.
    @Test(.needsAmateurPets, arguments: ["default", "fast"]) func aDogWithABallOrInTheSnowIsADog(_ model: String) throws {
        let classifier = try Self.classifier(model)
        for photo in [OwnersPhotos.ball, OwnersPhotos.snow] {
            let answer = try classifier.classify(contentsOf: photo.url)
            #expect(answer.verdict == .dog && answer.breeds.first?.key == photo.key, "\(model) \(photo.url.lastPathComponent): \(answer)")
        }
    }

    /// A head close-up cut from a test photo: the detector finds the dog in it, and the breed is named.
    @Test(.needsStanfordDogs, arguments: ["default", "fast"]) func aHeadCloseUpIsFoundAndNamed(_ model: String) throws {
        let classifier = try Self.classifier(model)
        let (image, key) = try OwnersPhotos.headCloseUp()
        #expect(try classifier.wholeLook(at: image, top: 1).detector != nil, "\(model): the detector found no dog")
        let answer = try classifier.classify(image)
        #expect(answer.verdict == .dog && answer.breeds.first?.key == key, "\(model): \(answer)")
    }
}
