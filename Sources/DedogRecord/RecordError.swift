/// What went wrong with the record of the photos looked at (`SeenPhotos`). The record is only a memory: the front
/// ends say how to go on without it (`--no-record`) or where to put another (`--record`).
public enum RecordError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or made (`reason`: SQLite's words).
    case cannotOpen(path: String, reason: String)
    /// The file is not a record dedog can use: damaged, or not a database at all.
    case damaged(path: String, reason: String)
    /// The record was written by a later dedog, whose layout this one does not know.
    case newerLayout(path: String, version: Int)
    /// The record would live on a network share (NFS, SMB): SQLite's locks are not safe there, and two machines
    /// writing one file would corrupt it.
    case networkShare(path: String, fileSystem: String)
    /// A read or write failed (`reason`: SQLite's words), after waiting for another run that held the record.
    case failed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open the record of photos looked at, \(path): \(reason)."
        case let .damaged(path, reason):
            "the record of photos looked at, \(path), is damaged (\(reason)); delete it (dedog then looks at every photo again)."
        case let .newerLayout(path, version):
            "the record of photos looked at, \(path), was written by a later dedog (layout \(version)); this one knows layout "
                + "\(SeenPhotos.layout) only."
        case let .networkShare(path, fileSystem):
            "the record of photos looked at, \(path), would be on a network share (\(fileSystem)); SQLite's locks are not safe "
                + "there, so each machine keeps its own record on a local disk."
        case let .failed(path, reason): "the record of photos looked at, \(path), could not be read or written: \(reason)."
        }
    }
}
