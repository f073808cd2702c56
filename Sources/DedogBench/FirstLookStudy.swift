// The first look's study (issue 71): for each photo, what the cheap first look sees (`FirstLook.Signals`) and
// whether the full look, as `dedog tag` runs it, finds a dog; from these scripts/bench-library chooses and checks the
// first look's thresholds. Not a test: it measures.
import DedogConcurrency
import DedogImage
@_spi(Testing) @_spi(Benchmarks) import Dedog
import Foundation

/// One JSON line per photo of `list` (one path per line) on stdout: `file`, the first look's `dogShare` and
/// `detector`, and `dog` (the full look's answer tags a dog: `PhotoTagger`'s rule) or `error`.
func firstLookStudy(list: URL, threads: Int) throws {
    let paths = try photoPaths(list)
    let configuration = ClassifierConfiguration(workers: threads, threadsPerWorker: 1)
    let full = try Classifier(configuration: configuration)
    let first = try FirstLook(configuration: configuration)
    printPhotoRows(paths, threads: threads, options: full.decoderOptions) { url, image, row throws(ClassifierError) in
        let signals = try first.signals(image)
        let answer = try full.classify(contentsOf: url)
        row["dogShare"] = signals.dogShare
        row["detector"] = signals.detector
        let dogs = answer.dogs.isEmpty ? [answer] : answer.dogs
        row["dog"] = dogs.contains { $0.verdict != .noDog }
    }
}

/// The photo paths of `list`, one a line.
func photoPaths(_ list: URL) throws -> [String] {
    try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
}

/// One JSON line per photo of `paths` on stdout, in their order, the photos looked at on `threads` threads: `file`,
/// then what `fill` adds for the photo decoded with `options`, or `error` where that fails.
func printPhotoRows(_ paths: [String], threads: Int, options: ImageDecoder.Options,
                    _ fill: @Sendable (URL, RGBImage, inout [String: Any]) throws(ClassifierError) -> Void) {
    let rows = parallelMap(paths.count, threads: threads) { i -> String in
        let url = URL(fileURLWithPath: paths[i])
        var row: [String: Any] = ["file": paths[i]]
        do throws(ClassifierError) {
            let image: RGBImage
            do throws(ImageError) { image = try ImageDecoder(options: options).decode(contentsOf: url) } catch { throw .image(error) }
            try fill(url, image, &row)
        } catch {
            row["error"] = error.description
        }
        let data = (try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
    for row in rows { print(row) }
}
