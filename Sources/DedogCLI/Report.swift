import Dedog
import DedogCatalogue
import Foundation

/// Human-readable training and evaluation reports (stdout).
enum Report {
    static func percent(_ x: Float) -> String { String(format: "%.1f %%", x * 100) }

    static func evaluation(_ r: EvaluationReport, title: String = "Evaluation") {
        Terminal.out("\(title): \(r.samples) images")
        Terminal.out("  top-1 \(percent(r.top1))   top-5 \(percent(r.top5))   loss \(String(format: "%.4f", r.loss))")
        Terminal.out("  calibration error \(percent(r.expectedCalibrationError)) (temperature \(String(format: "%.3f", r.temperature)))")
        if let v = r.verdicts {
            Terminal.out("  verdicts: \(percent(Float(v.dog) / Float(max(1, v.total)))) named a breed (top-1 \(percent(v.confidentTop1)) "
                         + "of those), \(percent(v.unsureShare)) unsure, \(percent(v.noDogShare)) no dog"
                         + (v.otherBreed > 0 ? ", \(percent(Float(v.otherBreed) / Float(v.total))) a breed it does not know" : ""))
        }
        if let o = r.otherBreeds {
            let share = { (n: Int) in percent(Float(n) / Float(max(1, o.total))) }
            Terminal.out("  \(o.total) photos of breeds the model does not know: \(share(o.dog)) confidently named one of its "
                         + "breeds (wrong), \(share(o.otherBreed)) called a breed it does not know, \(share(o.unsure)) unsure, "
                         + "\(share(o.noDog)) no dog")
        }
        if let ms = r.millisecondsPerPhoto {
            Terminal.out("  time per photo: " + String(format: "%.1f ms", ms) + " (network and heads, one thread)")
        }
        if let same = r.agreement { Terminal.out("  top-1 answers the same as in fp32: \(percent(same))") }
        let worst = r.perClass.filter { $0.samples > 0 }.sorted { $0.top1 != $1.top1 ? $0.top1 < $1.top1 : $0.label < $1.label }
        if !worst.isEmpty {
            Terminal.out("  weakest classes:")
            for c in worst.prefix(10) { Terminal.out("    \(percent(c.top1).leftPadded(to: 7))  \(c.label) (\(c.samples) images)") }
        }
        if !r.mostConfused.isEmpty {
            Terminal.out("  most confused (actual → predicted):")
            for p in r.mostConfused { Terminal.out("    \(String(p.count).leftPadded(to: 4))×  \(p.actual) → \(p.predicted)") }
        }
    }

    /// `dedog evaluate --looks`: the answers as classify gives them.
    static func looks(_ r: LookReport, title: String) {
        let share = { (n: Int) in percent(Float(n) / Float(max(1, r.photos))) }
        Terminal.out("\(title): \(r.photos) photos, each answered as dedog classify answers it")
        Terminal.out("  top-1 \(share(r.top1))   a breed named and right \(share(r.namedRight))")
        let verdicts = [("dog", "named a breed"), ("unsure", "unsure"), ("noDog", "no dog"), ("otherBreed", "a breed it does not know")]
        Terminal.out("  verdicts: " + verdicts.map { "\(share(r.verdicts[$0.0] ?? 0)) \($0.1)" }.joined(separator: ", "))
        Terminal.out("  answered with a closer look at the dog (small, or held back by the whole photo): \(share(r.lookedCloser)) "
                     + "(\(r.lookedCloser) photos)")
        Terminal.out("  answered per dog: \(share(r.answeredPerDog)) (\(r.answeredPerDog) photos; false splits where each "
                     + "photo shows one dog), the folder's breed among the dogs in \(r.folderBreedAmongDogs)")
        if r.otherFolders > 0 { Terminal.out("  \(r.otherFolders) photos in folders of breeds the model does not know, not counted") }
        for (path, reason) in r.unreadable.sorted(by: { $0.key < $1.key }).prefix(50) { Terminal.out("  unreadable: \(path): \(reason)") }
    }

    /// One line per model: the numbers docs/accuracy.md's table shows.
    static func comparison(_ reports: [(name: String, report: EvaluationReport)]) {
        Terminal.out("")
        let agreement = reports.contains { $0.report.agreement != nil }
        let width = max(9, reports.map(\.name.count).max() ?? 0)
        Terminal.out("model".padding(toLength: width + 1, withPad: " ", startingAt: 0)
                     + " top-1    top-5    calibration  unsure   top-1 named  ms/photo" + (agreement ? "  same top-1" : ""))
        for (name, r) in reports {
            let v = r.verdicts
            let columns = [name.padding(toLength: width, withPad: " ", startingAt: 0),
                           percent(r.top1).leftPadded(to: 7), percent(r.top5).leftPadded(to: 8),
                           percent(r.expectedCalibrationError).leftPadded(to: 12),
                           (v.map { percent($0.unsureShare) } ?? "–").leftPadded(to: 8),
                           (v.map { percent($0.confidentTop1) } ?? "–").leftPadded(to: 12),
                           (r.millisecondsPerPhoto.map { String(format: "%.1f", $0) } ?? "–").leftPadded(to: 9)]
                + (agreement ? [(r.agreement.map { percent($0) } ?? "").leftPadded(to: 12)] : [])
            Terminal.out(columns.joined(separator: " "))
        }
    }

    /// What each class folder became: its catalogue breed, or why it has none.
    static func classes(_ r: TrainingReport) {
        let matched = r.matches.compactMap { $0?.breed }.count
        guard r.matches.contains(where: { $0 != nil }) else { return }
        Terminal.out("Classes: \(matched) of \(r.classes.count) folders name a catalogue breed.")
        for (folder, match) in zip(r.classes, r.matches) {
            switch match {
            case let .breed(breed, matched)? where r.classes.count <= 30:
                Terminal.out("  \(folder) → \(breed.name.en) (\(breed.name.cs ?? "–"))"
                             + (Catalogue.sameName(matched, folder) ? "" : ", as \"\(matched)\""))
            case let .ambiguous(breeds)?:
                Terminal.out("  \(folder) → several breeds: \(breeds.map(\.name.en).joined(separator: ", ")); rename the folder "
                             + "to one of them to get its details and its ImageNet start")
            case let .unknown(closest)?:
                Terminal.out("  \(folder) → no catalogue breed\(closest.isEmpty ? "" : " (closest: \(closest.map(\.name.en).joined(separator: ", ")))"); "
                             + "trained under its folder name, without breed details")
            default: break
            }
        }
    }

    static func training(_ r: TrainingReport, output: String, detectorLeftOut: Bool) {
        classes(r)
        if let folds = r.crossValidationFolds {
            Terminal.out("Trained on \(r.trainImages) images of \(r.classes.count) classes, checked by \(folds)-fold cross-validation.")
        } else {
            Terminal.out("Trained on \(r.trainImages) images of \(r.classes.count) classes, validated on \(r.validationImages).")
        }
        if r.resumedClasses > 0 {
            Terminal.out("  continued from the base model's heads for \(r.resumedClasses) of \(r.classes.count) classes"
                         + (r.confirmedPhotosKept > 0 ? "; kept its \(r.confirmedPhotosKept) confirmed photo(s)" : ""))
        }
        if !r.taughtBreedsKept.isEmpty {
            Terminal.out("  taught again from their confirmed photos (dedog learn): " + r.taughtBreedsKept.joined(separator: ", "))
        }
        Terminal.out("  features: \(r.featuresComputed) computed, \(r.featuresFromCache) from cache, "
                     + String(format: "%.1f s", r.extractionSeconds) + "; heads: " + String(format: "%.1f s", r.trainingSeconds))
        for b in r.backbones {
            Terminal.out("  \(ModelInfo.Backbone.shortName(b.architecture)): \(b.epochs) epochs; validation top-1 "
                         + "\(percent(b.validationTop1CenterOnly)) as is, \(percent(b.validationTop1MirrorAveraged)) "
                         + "averaged with the mirror image → \(b.averagesMirror ? "averaging kept" : "not averaging")")
        }
        evaluation(r.validation, title: r.backbones.count > 1 ? "Validation, backbones combined" : "Validation")
        if let share = r.validationNoDogShare {
            Terminal.out("  \"no dog\" below a dog probability of \(percent(r.noDogBelow)): \(percent(share)) of the validation photos answered so")
        }
        if let t = r.otherBreedBelow {
            Terminal.out("  \"not one of my breeds\" below a similarity of \(String(format: "%.3f", t)) to the breed's own photos"
                         + (r.breedsTheImageNetHeadKnows.map { known in known == 0 ? "" : ", unless the ImageNet head, which knows "
                            + "\(known) of the \(r.classes.count) breeds, says otherwise" } ?? ""))
        }
        if let d = r.detector {
            Terminal.out("Dog detector: the one of \(d.architecture) (a dog from a score of \(percent(d.threshold)))")
        } else {
            // Why a photo of two dogs will get one answer: say it now rather than leave the user to find out.
            let why = detectorLeftOut ? "left out (--no-detector)" : "none for \(r.backbones.first?.architecture ?? "this backbone")"
            Terminal.out("Dog detector: \(why); classify locates one dog per photo, from the breed's activation map")
        }
        for w in r.warnings { Terminal.warning(w.description) }
        for (title, list) in [("skipped \(r.unreadable.count) unreadable image(s)", r.unreadable),
                              ("ignored \(r.notImages.count) file(s) that are not images", r.notImages)] where !list.isEmpty {
            Terminal.out("  \(title):")
            for s in list.prefix(50) { Terminal.out("    \(s.path): \(s.reason)") }
            if list.count > 50 { Terminal.out("    … and \(list.count - 50) more") }
        }
        Terminal.out("Model written to \(output)")
    }
}
