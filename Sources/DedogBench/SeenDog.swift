// What `SeenDogRule` weighs (issue 70), per photo: for scripts/experiments/seen_dog_rule.py, which chooses the rule
// on photos with and without a dog made from ../shared. Not a test: it measures.
import DedogImage
@_spi(Testing) @_spi(Benchmarks) import Dedog
import Foundation

/// One JSON line per photo of `list` (one path per line) on stdout, from `model`'s whole-photo look: `file`,
/// `verdict`, `dog` (the ImageNet heads' share on dogs), `p1` (the top breed's probability), `cat` (the cat rule
/// said "no dog"), `detector` (the detector's best box's score; absent: none) — or `error`.
func seenDogStudy(model: URL, list: URL, threads: Int) throws {
    let classifier = try Classifier(modelURL: model, configuration: ClassifierConfiguration(workers: threads, threadsPerWorker: 1))
    printPhotoRows(try photoPaths(list), threads: threads, options: classifier.decoderOptions) { _, image, row throws(ClassifierError) in
        let look = try classifier.wholeLook(at: image, top: 1)
        row["verdict"] = look.answer.verdict.rawValue
        row["dog"] = look.answer.dogProbability ?? 1
        row["p1"] = look.answer.breeds.first?.probability ?? 0
        row["breed"] = look.answer.breeds.first?.key ?? ""
        row["cat"] = look.answer.looksLike == .cat
        if let score = look.detector { row["detector"] = score }
    }
}
