import DedogConcurrency

/// A catalogue (the file at `path`, or the bundled one) read on a thread of its own from the moment this is made: a
/// front end starts it before it knows it will need the catalogue (while it parses its command line, or loads a
/// model) and takes it when it does.
public struct CatalogueReading: Sendable {
    private let reading: Eventual<Result<Catalogue, CatalogueError>>

    public init(path: String? = nil) {
        reading = Eventual { Result { () throws(CatalogueError) in try Catalogue.load(path) } }
    }

    /// The catalogue, once read (waiting for the reading if it is not done).
    public func catalogue() throws(CatalogueError) -> Catalogue { try reading.value.get() }
}
