import Dispatch
import Glibc
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM, noticed between units of work (a photo classified, a batch of features, an
/// epoch) instead of ending the process wherever it is: what was printed stays whole, and the command says it
/// was interrupted and exits with 128 + the signal's number, as a shell expects.
enum Interruption {
    private static let received = Atomic<Int32>(0)
    /// The dispatch sources that listen; kept for the life of the process.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Starts listening (call once, before the long part); until then the signals keep their default action.
    static func catchSignals() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { received.store(number, ordering: .relaxed) }
            source.resume()
            sources.append(source)
        }
    }

    /// Whether a signal came (a command that ends on one as its normal way, `tag --watch`, asks).
    static var requested: Bool { received.load(ordering: .relaxed) != 0 }

    /// When a signal came: reports `message` and exits with 128 + its number, at once: output is written
    /// unbuffered (Terminal), and work other threads have in flight is abandoned, not finished, so no exit
    /// handler runs (LeakSanitizer's would count the abandoned work as leaks and change the status).
    static func exitIfRequested(_ message: @autoclosure () -> String, before leaving: () -> Void = {}) {
        let number = received.load(ordering: .relaxed)
        guard number != 0 else { return }
        leaving()
        Terminal.error(message())
        _exit(128 + number)
    }
}
