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

/// One JSON line per photo of `list` for choosing `ZoomPolicy.heldBackNamedFrom` (issue 70;
/// scripts/experiments/held-back-look): the whole photo's `verdict`, `breed` and `p1`, whether the standard zoom
/// takes its closer look instead (`zooms`), and, for a photo held back that is not zoomed, the dog's own look as
/// classify takes it — its `lookVerdict`, `lookBreed` and `lookP1` (absent: no look, e.g. no box, or a box filling
/// the photo) — or `error`.
func heldBackLookStudy(model: URL, list: URL, threads: Int) throws {
    let classifier = try Classifier(modelURL: model, configuration: ClassifierConfiguration(workers: threads, threadsPerWorker: 1))
    // Every held-back dog's look is taken and kept in `closer`, whatever it says (it replaces the answer from 0 on).
    var probe = ZoomPolicy.standard
    probe.heldBackNamedFrom = 0
    printPhotoRows(try photoPaths(list), threads: threads, options: classifier.decoderOptions) { [probe] _, image, row throws(ClassifierError) in
        let looks = try classifier.looks(at: image, top: 2, zoom: probe)
        let whole = looks.whole
        row["verdict"] = whole.verdict.rawValue
        row["breed"] = whole.breeds.first?.key ?? ""
        row["p1"] = whole.breeds.first?.probability ?? 0
        let zooms = looks.dogs.isEmpty && looks.extent.map { probe.wants(whole, extent: $0) } == true
        row["zooms"] = zooms
        if !zooms, looks.dogs.isEmpty, whole.verdict == .otherBreed, let look = looks.closer {
            row["lookVerdict"] = look.verdict.rawValue
            row["lookBreed"] = look.breeds.first?.key ?? ""
            row["lookP1"] = look.breeds.first?.probability ?? 0
        }
    }
}
