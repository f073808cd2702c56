import DedogCatalogue
import Synchronization

/// The bundled breed catalogue, read on a thread of its own from the start of the process when the command will
/// want it.
///
/// Parsing the command line keeps one core busy for about 5 ms (ArgumentParser reflects on every option), and
/// reading the catalogue takes about 4 ms; `classify` and `breeds` need the catalogue, so `main` starts reading it
/// before parsing (`start`), while the other core is idle, and those commands take that reading (`load`) instead of
/// making their own. A catalogue file given with `--catalogue` is read when asked for, as before.
enum EarlyCatalogue {
    private static let reading = Mutex<CatalogueReading?>(nil)

    /// Starts reading the bundled catalogue.
    static func start() {
        reading.withLock { if $0 == nil { $0 = CatalogueReading() } }
    }

    /// The catalogue at `path`, or the bundled one: from the reading `start` began, if it did.
    static func load(_ path: String?) throws(CatalogueError) -> Catalogue {
        if path == nil, let early = reading.withLock({ $0 }) { return try early.catalogue() }
        return try Catalogue.load(path)
    }
}
