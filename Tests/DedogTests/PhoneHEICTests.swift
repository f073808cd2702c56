@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogTestSupport
import Foundation
import Testing

/// Photos as phones store them (issue 61): a grid of HEVC tiles with a small thumbnail beside it. The fixtures come
/// from scripts/make-heic-grid-fixtures (Tests/DedogImageTests/Fixtures).
@Suite struct PhoneHEICTests {
    static let fixtures = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures")
    static func model(_ name: String) -> URL { SharedData.packageRoot.appendingPathComponent("models/\(name).safetensors") }

    /// The bundled beagle as a 768×768 phone photo: the grid HEIC, with its 320-pixel thumbnail (which the whole
    /// photo's look then reads, for both models) and without, names the breed the same photo as a JPEG names, with
    /// nearly its confidence.
    @Test(arguments: ["dedog-breeds", "dedog-breeds-fast"], ["phone-beagle-grid.heic", "phone-beagle-grid-thumbnail.heic"])
    func aPhonesHEICNamesTheBreedItsJPEGNames(model: String, file: String) throws {
        let classifier = try Classifier(modelURL: Self.model(model))
        let jpeg = try classifier.classify(contentsOf: Self.fixtures.appendingPathComponent("phone-beagle.jpg"), top: 3)
        let heic = try classifier.classify(contentsOf: Self.fixtures.appendingPathComponent(file), top: 3)
        #expect(jpeg.verdict == .dog && jpeg.breeds.first?.key == "n02088364-beagle")
        #expect(heic.verdict == jpeg.verdict && heic.breeds.first?.key == jpeg.breeds.first?.key)
        let drift = abs((heic.breeds.first?.probability ?? 0) - (jpeg.breeds.first?.probability ?? 0))
        #expect(drift < 0.05, "\(model), \(file): the top probability moved by \(drift)")
        let decoded = try ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: Self.fixtures.appendingPathComponent(file))
        let fromThumbnail = file.contains("thumbnail")
        #expect(decoded.width == (fromThumbnail ? 320 : 768) && decoded.original == (fromThumbnail ? PixelSize(width: 768, height: 768) : nil))
    }

    /// phone-thumbnail-differs: an empty field whose thumbnail shows a beagle. The default model's whole look reads
    /// the thumbnail (320 pixels for Lite2's 334) and sees the dog; a closer look at it reads the photo itself and
    /// finds no dog there. Without the photo to read again, the closer look is cut from the thumbnail and sees it.
    @Test func aCloserLookReadsThePhotoNotItsThumbnail() throws {
        let classifier = try Classifier(modelURL: Self.model("dedog-breeds"))
        let url = Self.fixtures.appendingPathComponent("phone-thumbnail-differs.heic")
        let image = try ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: url)
        #expect(image.width == 320 && image.original == PixelSize(width: 1024, height: 768))
        let read = try classifier.looks(at: image, top: 1, zoom: .always) { options throws(ImageError) in
            try ImageDecoder(options: options).decode(contentsOf: url)
        }
        #expect(read.whole.verdict != .noDog)
        #expect(try #require(read.closer).verdict == .noDog)
        let thumbnailOnly = try classifier.looks(at: image, top: 1, zoom: .always)
        #expect(try #require(thumbnailOnly.closer).verdict != .noDog)
    }
}
