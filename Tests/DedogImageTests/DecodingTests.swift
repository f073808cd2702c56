import Foundation
import Testing
import DedogImage
import DedogTestSupport

/// The fixtures made by scripts/make-image-fixtures, with the pixels each must decode to.
enum Fixtures {
    struct Image: Decodable {
        let file: String; let width: Int; let height: Int; let tolerance: Int
        /// For lossy formats: the allowed mean difference from the encoder's input.
        let meanTolerance: Double?
    }
    struct Bad: Decodable { let file: String; let error: String }
    struct Manifest: Decodable { let images: [Image]; let bad: [Bad] }

    static let folder = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    /// The fixtures' manifest (its lists are test arguments); `readManifest()` says why when it cannot be read,
    /// and a test fails then.
    static let manifest = (try? readManifest()) ?? Manifest(images: [], bad: [])

    static func readManifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    static func imageFile(_ image: Image) -> URL {
        let candidates = ["jpg", "png", "webp", "heic", "avif"].map { url(image.file + "." + $0) }
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) } ?? candidates[0]
    }

    static func expected(_ image: Image) throws -> [UInt8] {
        Array(try Data(contentsOf: url(image.file + ".rgb")))
    }
}

@Suite struct DecodingTests {
    /// The parameterized tests below take their cases from the manifest: it must be there.
    @Test func theFixturesAreThere() throws {
        let manifest = try Fixtures.readManifest()
        #expect(manifest.images.count > 20 && !manifest.bad.isEmpty)
    }

    @Test(arguments: Fixtures.manifest.images.map(\.file))
    func decodesToExpectedPixels(_ name: String) throws {
        let fixture = Fixtures.manifest.images.first { $0.file == name }!
        let image = try ImageDecoder().decode(contentsOf: Fixtures.imageFile(fixture))
        #expect(image.width == fixture.width)
        #expect(image.height == fixture.height)
        let expected = try Fixtures.expected(fixture)
        try #require(image.pixels.count == expected.count)
        let differences = zip(image.pixels, expected).map { abs(Int($0) - Int($1)) }
        let worst = differences.max() ?? 0
        #expect(worst <= fixture.tolerance, "\(name): max difference \(worst) > \(fixture.tolerance)")
        if let bound = fixture.meanTolerance {
            let mean = Double(differences.reduce(0, +)) / Double(differences.count)
            #expect(mean <= bound, "\(name): mean difference \(mean) > \(bound)")
        }
    }

    @Test(arguments: ["webp-lossless.webp": ImageFormat.webp, "heic-lossless.heic": .heic, "avif-lossless.avif": .avif,
                      "jpeg-baseline.jpg": .jpeg, "png-rgb8.png": .png])
    func modernFormatsAreDetectedByContent(_ file: String, _ format: ImageFormat) throws {
        #expect(ImageFormat.detect(Array(try Data(contentsOf: Fixtures.url(file)))) == format)
    }

    /// libheif warns about colour primaries it does not know; heif-convert and browsers show such files, and so
    /// does dedog. (Found by the image fuzzer: libheif 1.15's strict mode refused it and leaked dav1d's picture.)
    @Test func heifWarningsAreNotDamage() throws {
        let image = try ImageDecoder().decode(contentsOf: Fixtures.url("warn-avif-colour-primaries.avif"))
        #expect(image.width > 0 && image.height > 0)
    }

    @Test(arguments: 1...8)
    func webPEXIFOrientationIsApplied(_ orientation: Int) throws {
        var options = ImageDecoder.Options()
        options.appliesEXIFOrientation = false
        let stored = try ImageDecoder(options: options).decode(contentsOf: Fixtures.url("webp-exif\(orientation).webp"))
        #expect((stored.width, stored.height) == (orientation >= 5 ? (24, 32) : (32, 24)), "as stored, before turning")
    }

    @Test(arguments: 1...8)
    func everyEXIFOrientationComesOutUpright(_ orientation: Int) throws {
        let url = Fixtures.url("jpeg-exif\(orientation).jpg")
        let image = try ImageDecoder().decode(contentsOf: url)
        #expect(EXIFOrientation.read(fromJPEG: Array(try Data(contentsOf: url)))?.rawValue == orientation)
        #expect(image.width == 32 && image.height == 24)
        // The red square is at the top left, the yellow bar along the top, the rest blue.
        let red = image[x: 2, y: 2], yellow = image[x: 20, y: 1], blue = image[x: 20, y: 18]
        #expect(red.r > 200 && red.g < 60 && red.b < 60, "\(red)")
        #expect(yellow.r > 200 && yellow.g > 200 && yellow.b < 60, "\(yellow)")
        #expect(blue.b > 120 && blue.r < 80, "\(blue)")
    }

    @Test func orientationCanBeIgnored() throws {
        var options = ImageDecoder.Options()
        options.appliesEXIFOrientation = false
        let image = try ImageDecoder(options: options).decode(contentsOf: Fixtures.url("jpeg-exif6.jpg"))
        #expect(image.width == 24 && image.height == 32)
    }

    @Test func largeJPEGsAreDecodedAtTheSmallestSufficientScale() throws {
        let url = Fixtures.url("jpeg-800x600.jpg")
        #expect(try ImageDecoder().decode(contentsOf: url).width == 800)
        let cases: [(Int, Int, Int)] = [(100, 200, 150), (75, 100, 75), (76, 200, 150), (151, 300, 225), (600, 800, 600)]
        for (wanted, width, height) in cases {
            let image = try ImageDecoder(options: .init(minimumShorterSide: wanted)).decode(contentsOf: url)
            #expect(image.width == width && image.height == height, "asked ≥\(wanted): got \(image.width)×\(image.height)")
            // A smaller image remembers the photo's size (answers give boxes in the photo's pixels).
            #expect(image.original == (width == 800 ? nil : PixelSize(width: 800, height: 600)))
        }
        // Stored 24×32 and turned a quarter by its EXIF tag: decoded at 3/8 (9×12, the smallest scale keeping 8
        // pixels), then turned, the photo's size turned with it.
        let upright = try ImageDecoder(options: .init(minimumShorterSide: 8)).decode(contentsOf: Fixtures.url("jpeg-exif6.jpg"))
        #expect(upright.width == 12 && upright.height == 9)
        #expect(upright.original == PixelSize(width: 32, height: 24))
    }

    /// A HEIC's own thumbnail stands in for the photo when it is large enough for what is asked (a phone's
    /// 12-megapixel grid costs most of a second to decode). heic-thumbnail.heic: the bundled beagle (224×224) with
    /// a 160×160 thumbnail, made by `heif-enc -q 40 -t 160` (libheif-examples 1.15).
    @Test func aHEICsThumbnailIsDecodedWhenItIsLargeEnough() throws {
        let url = Fixtures.url("heic-thumbnail.heic")
        let full = try ImageDecoder().decode(contentsOf: url)
        #expect(full.width == 224 && full.height == 224 && full.original == nil)
        let small = try ImageDecoder(options: .init(minimumShorterSide: 150)).decode(contentsOf: url)
        #expect(small.width == 160 && small.height == 160)
        #expect(small.original == PixelSize(width: 224, height: 224))
        // The same picture: each channel's mean within 2 levels of the photo's.
        func means(_ image: RGBImage) -> [Double] {
            (0..<3).map { c in
                stride(from: c, to: image.pixels.count, by: 3).reduce(0.0) { $0 + Double(image.pixels[$1]) } / Double(image.width * image.height)
            }
        }
        #expect(zip(means(small), means(full)).allSatisfy { abs($0 - $1) < 2 }, "\(means(small)) vs \(means(full))")
        let asked = try ImageDecoder(options: .init(minimumShorterSide: 161)).decode(contentsOf: url)
        #expect(asked.width == 224 && asked.original == nil)
        // For a photo padded to a square its longer side is what counts.
        let padded = try ImageDecoder(options: .init(minimumShorterSide: 200, sufficientLongerSide: 160)).decode(contentsOf: url)
        #expect(padded.width == 160 && padded.original == PixelSize(width: 224, height: 224))
        let larger = try ImageDecoder(options: .init(minimumShorterSide: 200, sufficientLongerSide: 161)).decode(contentsOf: url)
        #expect(larger.width == 224)
    }

    @Test func formatIsDetectedByContentNotExtension() throws {
        let png = try Data(contentsOf: Fixtures.url("png-rgb8.png"))
        let disguised = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-disguised-\(getpid()).jpg")
        try png.write(to: disguised)
        defer { try? FileManager.default.removeItem(at: disguised) }
        let image = try ImageDecoder().decode(contentsOf: disguised)
        #expect(image.width == 13 && image.height == 9)
        #expect(ImageFormat.detect(Array(png)) == .png)
    }

    @Test func alphaIsCompositedOnTheChosenBackground() throws {
        var options = ImageDecoder.Options()
        options.background = RGBColor(r: 0, g: 0, b: 0)
        let image = try ImageDecoder(options: options).decode(contentsOf: Fixtures.url("png-rgba8.png"))
        // Row 1 of the fixture is fully transparent.
        for x in 0..<image.width { #expect(image[x: x, y: 1] == (0, 0, 0)) }
    }

    @Test(arguments: Fixtures.manifest.bad.map(\.file))
    func badInputGivesATypedError(_ name: String) throws {
        let expected = Fixtures.manifest.bad.first { $0.file == name }!.error
        let url = Fixtures.url(name)
        do {
            _ = try ImageDecoder().decode(contentsOf: url)
            Issue.record("\(name) decoded without an error")
        } catch {
            #expect(Self.caseName(error) == expected, "\(name): \(error)")
            #expect(error.description.hasPrefix(url.path), "the message names the file: \(error)")
        }
    }

    @Test func truncatedJPEGCanBeAcceptedWhenTheCallerOptsIn() throws {
        var options = ImageDecoder.Options()
        options.allowsDamagedData = true
        let image = try ImageDecoder(options: options).decode(contentsOf: Fixtures.url("bad-truncated.jpg"))
        #expect(image.width == 64 && image.height == 48)
    }

    @Test func pixelLimitIsConfigurable() throws {
        var options = ImageDecoder.Options()
        options.maxPixels = 13 * 9 - 1
        #expect(throws: ImageError.tooLarge(file: Fixtures.url("png-rgb8.png").path, width: 13, height: 9, limit: 116)) {
            try ImageDecoder(options: options).decode(contentsOf: Fixtures.url("png-rgb8.png"))
        }
    }

    @Test func missingFilesAndFoldersAreUnreadable() {
        for url in [URL(fileURLWithPath: "/nonexistent/dog.jpg"), Fixtures.folder] {
            do {
                _ = try ImageDecoder().decode(contentsOf: url)
                Issue.record("\(url.path) decoded")
            } catch {
                #expect(Self.caseName(error) == "unreadable", "\(error)")
            }
        }
    }

    /// The grid bomb and the self-referencing grid the fuzzer found, with every byte set in turn to 0x00, 0x7F and
    /// 0xFF: sizes, counts, offsets and references of every box take absurd values. Each variant decodes or throws;
    /// none crashes, recurses without end, or allocates a grid over the limit (it is 1 megapixel here).
    @Test(arguments: ["heic-grid-bomb.heic", "heic-grid-loop.heic"])
    func mutatedHEIFBoxesNeverCrash(_ file: String) throws {
        let url = SharedData.packageRoot.appendingPathComponent("Fuzz/regressions/image/\(file)")
        let original = Array(try Data(contentsOf: url))
        let decoder = ImageDecoder(options: .init(maxPixels: 1_000_000))
        var outcomes: [String: Int] = [:]
        for i in 0..<original.count {
            for value: UInt8 in [0x00, 0x7F, 0xFF] where original[i] != value {
                var bytes = original
                bytes[i] = value
                do {
                    _ = try decoder.decode(bytes)
                    outcomes["ok", default: 0] += 1
                } catch {
                    outcomes[Self.caseName(error), default: 0] += 1
                }
            }
        }
        #expect((outcomes["tooLarge"] ?? 0) + (outcomes["corrupt"] ?? 0) > 0, "\(outcomes)")
    }

    /// A grid's tile turned into an overlay item whose canvas is 21506×32504 (found by the image fuzzer from the grid
    /// seeds): libheif would allocate the 2.1 GB canvas before anything else; the overlay's own data refuses it.
    @Test func anOverlayBombIsRefusedBeforeLibheifRuns() throws {
        let url = SharedData.packageRoot.appendingPathComponent("Fuzz/regressions/image/heic-overlay-bomb.heic")
        do {
            _ = try ImageDecoder().decode(contentsOf: url)
            Issue.record("the overlay bomb decoded")
        } catch {
            guard case .tooLarge(_, let width, let height, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(width == 21506 && height == 32504)
        }
    }

    @Test func hostileEXIFNeverCrashes() {
        // An APP1 Exif segment whose IFD offset and entry count point far outside the data.
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x16]
        bytes += Array("Exif\0\0".utf8) + [0x49, 0x49, 0x2A, 0x00, 0xF0, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0, 0]
        bytes += [0xFF, 0xD9]
        #expect(EXIFOrientation.read(fromJPEG: bytes) == nil)
        for cut in 0..<bytes.count { _ = EXIFOrientation.read(fromJPEG: Array(bytes.prefix(cut))) }
    }

    static func caseName(_ error: ImageError) -> String {
        String(String(describing: Mirror(reflecting: error).children.first?.label ?? "\(error)"))
    }
}
