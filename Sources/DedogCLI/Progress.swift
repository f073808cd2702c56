import Foundation

/// A progress bar with ETA on a terminal; a plain line every 10 % otherwise (logs, pipes, CI). Always stderr.
final class ProgressBar {
    private let label: String
    private let interactive = isatty(STDERR_FILENO) == 1
    private let started = Date()
    private var lastTenth = -1
    private var lastDraw = Date.distantPast

    init(_ label: String) { self.label = label }

    func update(_ done: Int, of total: Int) {
        guard total > 0 else { return }
        let fraction = Double(done) / Double(total)
        let elapsed = Date().timeIntervalSince(started)
        let eta = done > 0 ? elapsed / Double(done) * Double(total - done) : 0
        if interactive {
            guard done == total || Date().timeIntervalSince(lastDraw) > 0.1 else { return }
            lastDraw = Date()
            let width = 30, filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
            let line = "\r\(label) \(bar) \(Int(fraction * 100))% \(done)/\(total)  "
                + (done == total ? "\(Self.duration(elapsed))   \n" : "ETA \(Self.duration(eta))   ")
            FileHandle.standardError.write(Data(line.utf8))
        } else {
            let tenth = Int(fraction * 10)
            guard tenth != lastTenth else { return }
            lastTenth = tenth
            FileHandle.standardError.write(Data("\(label): \(done)/\(total) (\(tenth * 10)%)\n".utf8))
        }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 60 ? "\(s / 60)m\(String(format: "%02d", s % 60))s" : "\(s)s"
    }
}
