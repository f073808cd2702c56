import Foundation
import Testing
import DedogImage

/// Damaged data of every kind must give an image or a typed error — never a crash, a hang or a huge allocation.
@Suite struct HostileInputTests {
    static let sources = ["jpeg-baseline.jpg", "jpeg-progressive.jpg", "jpeg-cmyk.jpg", "jpeg-exif6.jpg",
                          "png-rgba16.png", "png-palette4-trns.png", "png-grey1.png"]

    @Test(arguments: sources)
    func truncationAtEveryOffsetIsHandled(_ name: String) throws {
        let bytes = Array(try Data(contentsOf: Fixtures.url(name)))
        var errors = 0
        for cut in 0..<bytes.count {
            do {
                _ = try ImageDecoder().decode(Array(bytes.prefix(cut)), name: name)
            } catch {
                errors += 1
            }
        }
        // Every strict prefix that stops before the image data ends must be refused.
        #expect(errors >= bytes.count / 2, "\(name): only \(errors) of \(bytes.count) prefixes refused")
    }

    /// A seeded mutation fuzzer in miniature: flipped bytes, overwritten runs, duplicated and dropped spans.
    @Test(arguments: sources)
    func mutatedBytesNeverCrash(_ name: String) throws {
        let original = Array(try Data(contentsOf: Fixtures.url(name)))
        var state: UInt64 = 0x5EED ^ UInt64(original.count)
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }
        var options = ImageDecoder.Options()
        options.maxPixels = 4_000_000  // mutated headers may declare huge sizes; refuse them cheaply
        for round in 0..<3000 {
            var bytes = original
            for _ in 0..<(1 + next(4)) {
                switch next(4) {
                case 0: bytes[next(bytes.count)] ^= UInt8(1 << next(8))
                case 1: let at = next(bytes.count); for i in at..<min(bytes.count, at + 1 + next(16)) { bytes[i] = UInt8(next(256)) }
                case 2: let at = next(bytes.count); bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + next(32))], at: next(bytes.count))
                default: let at = next(bytes.count); bytes.removeSubrange(at..<min(bytes.count, at + next(32)))
                }
                if bytes.isEmpty { bytes = original }
            }
            options.allowsDamagedData = round % 2 == 0
            // Either a whole picture within the limits, or an error that names the file: nothing else, no crash.
            do {
                let image = try ImageDecoder(options: options).decode(bytes, name: name)
                #expect(image.width > 0 && image.height > 0 && image.width * image.height <= options.maxPixels
                        && image.pixels.count == image.width * image.height * 3, "round \(round): \(image.width)×\(image.height)")
            } catch {
                #expect(error.description.hasPrefix(name + ":") || { if case .invalidArgument = error { true } else { false } }(),
                        "round \(round): \(error)")
            }
        }
    }

    @Test func nonImageFilesAreRefusedByContent() {
        let samples: [[UInt8]] = [Array("GIF89a".utf8), Array("%PDF-1.7".utf8), [0x00], [0xFF, 0xD8], [0x89, 0x50, 0x4E],
                                  Array(repeating: 0xFF, count: 100)]
        for bytes in samples {
            let error = #expect(throws: ImageError.self) { try ImageDecoder().decode(bytes, name: "x") }
            guard case .unsupportedFormat(file: "x", _) = error else {
                Issue.record("\(bytes.prefix(8)): expected unsupportedFormat, got \(String(describing: error))")
                continue
            }
        }
    }
}
