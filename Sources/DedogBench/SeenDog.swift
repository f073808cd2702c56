// What `SeenDogRule` weighs (issue 70), per photo: for scripts/experiments/seen_dog_rule.py, which chooses the rule
// on photos with and without a dog made from ../shared. Not a test: it measures.
import DedogConcurrency
import DedogImage
@_spi(Testing) @_spi(Benchmarks) import Dedog
import Foundation

/// One JSON line per photo of `list` (one path per line) on stdout, from `model`'s whole-photo look: `file`,
/// `verdict`, `dog` (the ImageNet heads' share on dogs), `p1` (the top breed's probability), `cat` (the cat rule
/// said "no dog"), `detector` (the detector's best box's score; absent: none) — or `error`.
func seenDogStudy(model: URL, list: URL, threads: Int) throws {
    let paths = try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    let classifier = try Classifier(modelURL: model, configuration: ClassifierConfiguration(workers: threads, threadsPerWorker: 1))
    let rows = parallelMap(paths.count, threads: threads) { i -> String in
        var row: [String: Any] = ["file": paths[i]]
        do throws(ClassifierError) {
            let image: RGBImage
            do throws(ImageError) {
                image = try ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: URL(fileURLWithPath: paths[i]))
            } catch {
                throw .image(error)
            }
            let look = try classifier.wholeLook(at: image, top: 1)
            row["verdict"] = look.answer.verdict.rawValue
            row["dog"] = look.answer.dogProbability ?? 1
            row["p1"] = look.answer.breeds.first?.probability ?? 0
            row["breed"] = look.answer.breeds.first?.key ?? ""
            row["cat"] = look.answer.looksLike == .cat
            if let score = look.detector { row["detector"] = score }
        } catch {
            row["error"] = error.description
        }
        let data = (try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
    for row in rows { print(row) }
}
