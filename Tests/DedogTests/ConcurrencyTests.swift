import Foundation
import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTestSupport

/// One loaded classifier shared by many tasks gives every answer exactly as a serial run does: workspaces are
/// never shared, and nothing a classification writes is seen by another.
@Suite struct ConcurrencyTests {
    /// Sixteen different photos: the sample beagle in four formats, and mirrored, cropped and scaled versions.
    static func photos() throws -> [(name: String, image: RGBImage)] {
        let samples = SharedData.packageRoot.appendingPathComponent("datasets/samples")
        var photos: [(String, RGBImage)] = []
        for format in ["jpg", "heic", "avif", "webp"] {
            let image = try ImageDecoder().decode(contentsOf: samples.appendingPathComponent("beagle.\(format)"))
            photos.append(("beagle.\(format)", image))
            photos.append(("beagle.\(format) mirrored", image.mirrored()))
            let w = image.width, h = image.height
            photos.append(("beagle.\(format) left", try crop(image, x: 0, y: 0, width: w * 2 / 3, height: h)))
            photos.append(("beagle.\(format) top", try crop(image, x: 0, y: 0, width: w, height: h * 3 / 4)))
        }
        return photos
    }

    static func crop(_ image: RGBImage, x: Int, y: Int, width: Int, height: Int) throws -> RGBImage {
        var pixels = [UInt8](); pixels.reserveCapacity(width * height * 3)
        for row in y..<(y + height) {
            let start = (row * image.width + x) * 3
            pixels += image.pixels[start..<(start + width * 3)]
        }
        return try RGBImage(width: width, height: height, pixels: pixels)
    }

    /// 8 tasks each classify all 16 photos, each starting at another photo, on one classifier with fewer
    /// workspaces than tasks (so that tasks wait for one and workspaces change hands), with one and with two
    /// threads inside each classification.
    @Test(arguments: [(workers: 3, threads: 1), (workers: 2, threads: 2)])
    func concurrentAnswersAreTheSerialOnes(_ setup: (workers: Int, threads: Int)) async throws {
        let photos = try Self.photos()
        let model = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")
        let classifier = try Classifier(modelURL: model, configuration: .init(workers: setup.workers, threadsPerWorker: setup.threads))
        let serial = try photos.map { try classifier.classify($0.image, top: 5) }
        #expect(Set(serial.map { $0.breeds.first?.key }).count >= 1)
        let tasks = 8
        let answers = try await withThrowingTaskGroup(of: (Int, [Classification]).self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var answers = [Classification?](repeating: nil, count: photos.count)
                    for k in 0..<photos.count {
                        let i = (t * 5 + k) % photos.count
                        answers[i] = try classifier.classify(photos[i].image, top: 5)
                    }
                    return (t, answers.map { $0! })
                }
            }
            var all = [[Classification]](repeating: [], count: tasks)
            for try await (t, answers) in group { all[t] = answers }
            return all
        }
        for (t, answers) in answers.enumerated() {
            for (i, answer) in answers.enumerated() {
                #expect(answer == serial[i], "task \(t), \(photos[i].name): \(answer.breeds.map(\.probability)) ≠ \(serial[i].breeds.map(\.probability))")
            }
        }
    }

    /// Bytes received over the network are held to the same limits as files: too many bytes are refused
    /// before decoding, and a picture declaring too many pixels from its header.
    @Test func bytesHaveTheFileLimits() throws {
        let beagle = try FileManager.default.contents(atPath: SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg").path)!
        let model = SharedData.packageRoot.appendingPathComponent("models/efficientnet-lite0-imagenet.safetensors")
        let ok = try Classifier(modelURL: model).classify(bytes: [UInt8](beagle), name: "upload", top: 1)
        #expect(ok.breeds.first?.key == "n02088364-beagle")
        let small = try Classifier(modelURL: model, configuration: .init(maxFileBytes: beagle.count - 1))
        #expect(throws: ClassifierError.image(.tooManyBytes(file: "upload", bytes: beagle.count, limit: beagle.count - 1))) {
            try small.classify(bytes: [UInt8](beagle), name: "upload")
        }
        let few = try Classifier(modelURL: model, configuration: .init(maxPixels: 1000))
        #expect {
            try few.classify(bytes: [UInt8](beagle), name: "upload")
        } throws: { error in
            guard case .image(.tooLarge(file: "upload", _, _, limit: 1000))? = error as? ClassifierError else { return false }
            return true
        }
    }
}
