import DedogCatalogue
import Foundation

/// The bundled breed catalogue, read on a thread of its own from the start of the process when the command will
/// want it.
///
/// Parsing the command line keeps one core busy for about 5 ms (ArgumentParser reflects on every option), and
/// reading the catalogue takes about 4 ms; `classify` and `breeds` need the catalogue, so `main` starts reading it
/// before parsing (`start`), while the other core is idle, and those commands take that reading (`load`) instead of
/// making their own. A catalogue file given with `--catalogue` is read when asked for, as before.
enum EarlyCatalogue {
    private static let state = State()

    /// Starts reading the bundled catalogue.
    static func start() { state.start() }

    /// The catalogue at `path`, or the bundled one: from the reading `start` began, if it did.
    static func load(_ path: String?) throws(CatalogueError) -> Catalogue {
        if path == nil, let early = state.take() { return try early.get() }
        return try Catalogue.load(path)
    }

    private final class State: @unchecked Sendable {
        private let condition = NSCondition()
        private var started = false  // guarded by `condition`
        private var result: Result<Catalogue, CatalogueError>?  // guarded by `condition`

        func start() {
            condition.lock()
            defer { condition.unlock() }
            guard !started else { return }
            started = true
            Thread { [self] in
                let read = Result { () throws(CatalogueError) in try Catalogue.bundled() }
                condition.lock()
                result = read
                condition.broadcast()
                condition.unlock()
            }.start()
        }

        /// The reading `start` began, once it is done; nil if it was not started.
        func take() -> Result<Catalogue, CatalogueError>? {
            condition.lock()
            defer { condition.unlock() }
            guard started else { return nil }
            while result == nil { condition.wait() }
            return result
        }
    }
}
