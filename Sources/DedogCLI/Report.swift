import Dedog
import Foundation

/// Human-readable training and evaluation reports (stdout).
enum Report {
    static func percent(_ x: Float) -> String { String(format: "%.1f %%", x * 100) }

    static func evaluation(_ r: EvaluationReport, title: String = "Evaluation") {
        Terminal.out("\(title): \(r.samples) images")
        Terminal.out("  top-1 \(percent(r.top1))   top-5 \(percent(r.top5))   loss \(String(format: "%.4f", r.loss))")
        Terminal.out("  calibration error \(percent(r.expectedCalibrationError)) (temperature \(String(format: "%.3f", r.temperature)))")
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

    static func training(_ r: TrainingReport, output: String) {
        Terminal.out("Trained on \(r.trainImages) images of \(r.classes.count) classes, validated on \(r.validationImages).")
        Terminal.out("  features: \(r.featuresComputed) computed, \(r.featuresFromCache) from cache, "
                     + String(format: "%.1f s", r.extractionSeconds) + "; head: " + String(format: "%.1f s", r.trainingSeconds)
                     + ", \(r.history.count) epochs")
        Terminal.out("  validation top-1: \(percent(r.validationTop1CenterOnly)) as is, \(percent(r.validationTop1MirrorAveraged)) "
                     + "averaged with the mirror image → \(r.averagesMirror ? "averaging kept" : "not averaging")")
        evaluation(r.validation, title: "Validation")
        for (title, list) in [("skipped \(r.unreadable.count) unreadable image(s)", r.unreadable),
                              ("ignored \(r.notImages.count) file(s) that are not images", r.notImages)] where !list.isEmpty {
            Terminal.out("  \(title):")
            for s in list.prefix(50) { Terminal.out("    \(s.path): \(s.reason)") }
            if list.count > 50 { Terminal.out("    … and \(list.count - 50) more") }
        }
        Terminal.out("Model written to \(output)")
    }
}
