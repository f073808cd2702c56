import Testing
import DedogNN
import DedogBreedModel

/// Confirmed photos and their feature rows stay together whatever is added, removed or kept.
@Suite struct ConfirmedPhotosTests {
    static let width = EfficientNetLite.featureCount

    /// Photo `i`'s row in backbone `b`: every value says which photo and backbone it belongs to.
    static func row(_ i: Int, _ b: Int) -> [Float] { [Float](repeating: Float(10 * i + b), count: width) }

    static func photo(_ i: Int, _ label: String) -> ConfirmedPhoto {
        ConfirmedPhoto(label: label, photo: "p\(i).jpg", fingerprint: "f\(i)", added: "2026-11-24T00:00:00Z")
    }

    /// The photos whose rows are not theirs (their names, so that a failure prints little).
    static func misaligned(_ photos: ConfirmedPhotos) -> [String] {
        photos.photos.enumerated().filter { n, photo in
            let i = Int(photo.photo.dropFirst().dropLast(4))!
            return !(0..<photos.backboneCount).allSatisfy { b in Array(photos.features(of: n, backbone: b)) == row(i, b) }
        }.map(\.element.photo)
    }

    @Test func addingRemovingAndKeepingMoveRowsWithTheirPhotos() throws {
        var photos = ConfirmedPhotos(backbones: 2)
        for i in 0..<5 { try photos.append(Self.photo(i, i % 2 == 0 ? "beagle" : "pug"), features: [Self.row(i, 0), Self.row(i, 1)]) }
        #expect(photos.count == 5 && photos.features.map(\.count) == [5 * Self.width, 5 * Self.width])
        #expect(Self.misaligned(photos) == [])

        let removed = photos.removeAll { $0.fingerprint == "f1" || $0.fingerprint == "f4" }
        #expect(removed.map(\.fingerprint) == ["f1", "f4"])
        #expect(photos.photos.map(\.fingerprint) == ["f0", "f2", "f3"])
        #expect(Self.misaligned(photos) == [])

        let beagles = photos.filter { $0.label == "beagle" }
        #expect(beagles.photos.map(\.fingerprint) == ["f0", "f2"] && beagles.backboneCount == 2)
        #expect(Self.misaligned(beagles) == [])
        #expect(photos.filter { _ in false }.features == [[], []])
    }

    @Test func aPhotoNeedsOneRowForEachBackbone() throws {
        var photos = ConfirmedPhotos(backbones: 2)
        #expect(throws: ModelError.self) { try photos.append(Self.photo(0, "pug"), features: [Self.row(0, 0)]) }
        #expect(throws: ModelError.self) { try photos.append(Self.photo(0, "pug"), features: [Self.row(0, 0), [1, 2]]) }
        #expect(photos.isEmpty && photos.features == [[], []])
    }

    /// The input description is checked once, at load, with one rule per field.
    @Test func theInputDescriptionNamesTheFieldItCannotUse() {
        #expect(InputDescription().problem == nil)
        #expect(InputDescription(std: [128, 0, 128]).problem?.field == "std")
        #expect(InputDescription(std: [128, -1, 128]).problem?.field == "std")
        #expect(InputDescription(mean: [127, .nan, 127]).problem?.field == "mean")
        #expect(InputDescription(resizeShorterSide: 200, cropSize: 224).problem?.field == "resizeShorterSide")
        #expect(InputDescription(resizeShorterSide: 2000, cropSize: 2000).problem?.field == "cropSize")
        #expect(InputDescription(resizeShorterSide: 256, cropSize: 224).enlarged(by: 32)
                == InputDescription(resizeShorterSide: 293, cropSize: 256))
    }
}
