import CSQLite
import Foundation

/// A photo file as it stood when it was looked at: a photo whose size or modification time differs since is looked
/// at again (photo managers and editors rewrite a file, or replace it, whenever they change it).
public struct FileState: Sendable, Hashable {
    public var size: Int64
    /// Nanoseconds since 1970.
    public var modified: Int64

    public init(size: Int64, modified: Int64) {
        self.size = size
        self.modified = modified
    }

    /// The state of the regular file at `path` (a link is followed); nil when there is none.
    public init?(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}

/// One photo in the record: where it is, how it stood, who looked at it and what they found.
public struct SeenPhoto: Sendable, Equatable {
    /// The photo's absolute path.
    public var path: String
    public var state: FileState
    /// Who looked: the model's identity and whatever else changes the answer (`PhotoTagger.looker`); a photo
    /// looked at by another is looked at again.
    public var looker: String
    /// What was found: the keyword paths written (`Animals/Dogs/Beagle`); none for a photo without a dog.
    public var tags: [String]

    public init(path: String, state: FileState, looker: String, tags: [String]) {
        self.path = path
        self.state = state
        self.looker = looker
        self.tags = tags
    }
}

/// The record of every photo `dedog tag` has looked at, so that a run over a library with nothing new only lists
/// its files: a SQLite database, one file per user (the CLI keeps it in `$XDG_DATA_HOME/dedog`).
///
/// - Two runs at once: the database is in WAL mode (readers never wait for the writer) and a writer waits up to
///   `busyTimeout` for another's write to end; each photo is one short transaction.
/// - A killed run: SQLite's transactions are atomic, so the record holds every photo recorded before the kill and
///   nothing half-written; `synchronous=NORMAL` may lose the last photos recorded before a power cut (they are
///   looked at again), never the database.
/// - Never on a network share: SQLite's locks and WAL's shared memory are not safe over NFS or SMB, and two machines
///   sharing one file would corrupt it; the file is refused there (`RecordError.networkShare`).
///
/// Safe to use from several threads (one connection behind a lock).
public final class SeenPhotos: @unchecked Sendable {
    /// The layout this dedog writes (SQLite's `user_version`).
    public static let layout = 1
    /// How long a write waits for another run's write to end.
    public static let busyTimeout: Int32 = 10_000

    public let path: String
    private let lock = NSLock()
    private var db: OpaquePointer?
    private var lookupStatement: OpaquePointer?
    private var saveStatement: OpaquePointer?
    private var forgetStatement: OpaquePointer?
    private var countStatement: OpaquePointer?

    /// Opens the record at `path`, making it (and its folder) when there is none.
    public init(path: String) throws(RecordError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            if let share = Self.networkFileSystem(at: folder) { throw .networkShare(path: path, fileSystem: share) }
        }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            db = nil
            throw .cannotOpen(path: path, reason: reason)
        }
        sqlite3_busy_timeout(db, Self.busyTimeout)
        do {
            try prepareLayout()
            lookupStatement = try prepare("SELECT size, modified, looker, tags FROM photo WHERE path = ?1")
            saveStatement = try prepare("INSERT OR REPLACE INTO photo (path, size, modified, looker, tags, seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            // A path, and every path under it as a folder ('0' follows '/' in UTF-8): a range of the primary key.
            forgetStatement = try prepare("DELETE FROM photo WHERE path = ?1 OR (path >= ?1 || '/' AND path < ?1 || '0')")
            countStatement = try prepare("SELECT count(*) FROM photo")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func close() {
        for statement in [lookupStatement, saveStatement, forgetStatement, countStatement] { sqlite3_finalize(statement) }
        (lookupStatement, saveStatement, forgetStatement, countStatement) = (nil, nil, nil, nil)
        sqlite3_close(db)
        db = nil
    }

    /// The photo at `path` as recorded; nil when it never was.
    public func lookup(_ path: String) throws(RecordError) -> SeenPhoto? {
        lock.lock(); defer { lock.unlock() }
        guard let statement = lookupStatement else { return nil }
        defer { sqlite3_reset(statement) }
        bind(path, 1, statement)
        switch sqlite3_step(statement) {
        case SQLITE_ROW:
            let state = FileState(size: sqlite3_column_int64(statement, 0), modified: sqlite3_column_int64(statement, 1))
            let tags = text(statement, 3)
            return SeenPhoto(path: path, state: state, looker: text(statement, 2), tags: tags.isEmpty ? [] : tags.components(separatedBy: "\n"))
        case SQLITE_DONE: return nil
        case let code: throw problem(code)
        }
    }

    /// Records `photo`, in place of what was recorded of its path before.
    public func save(_ photo: SeenPhoto) throws(RecordError) {
        lock.lock(); defer { lock.unlock() }
        guard let statement = saveStatement else { return }
        defer { sqlite3_reset(statement) }
        bind(photo.path, 1, statement)
        sqlite3_bind_int64(statement, 2, photo.state.size)
        sqlite3_bind_int64(statement, 3, photo.state.modified)
        bind(photo.looker, 4, statement)
        bind(photo.tags.joined(separator: "\n"), 5, statement)
        sqlite3_bind_int64(statement, 6, Int64(Date().timeIntervalSince1970))
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw problem(code) }
    }

    /// Forgets the photo at `path`, or every photo under it when it is a folder; returns how many were forgotten.
    @discardableResult
    public func forget(_ path: String) throws(RecordError) -> Int {
        lock.lock(); defer { lock.unlock() }
        guard let statement = forgetStatement else { return 0 }
        defer { sqlite3_reset(statement) }
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        // The root itself: every path is under it.
        bind(trimmed == "/" ? "" : trimmed, 1, statement)
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw problem(code) }
        return Int(sqlite3_changes(db))
    }

    /// How many photos the record holds.
    public func count() throws(RecordError) -> Int {
        lock.lock(); defer { lock.unlock() }
        guard let statement = countStatement else { return 0 }
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW else { throw problem(code) }
        return Int(sqlite3_column_int64(statement, 0))
    }

    // MARK: The database

    /// Makes the table in a new file, checks the layout of an old one, and turns WAL on (it stays on in the file).
    private func prepareLayout() throws(RecordError) {
        // Reading the layout is the first read: a file that is no database fails here.
        let version = try integer("PRAGMA user_version")
        guard version <= Self.layout else { throw .newerLayout(path: path, version: version) }
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
        if version < Self.layout {
            try execute("""
                BEGIN IMMEDIATE;
                CREATE TABLE IF NOT EXISTS photo (
                    path TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    modified INTEGER NOT NULL,
                    looker TEXT NOT NULL,
                    tags TEXT NOT NULL,
                    seen INTEGER NOT NULL
                ) WITHOUT ROWID;
                PRAGMA user_version = \(Self.layout);
                COMMIT;
                """)
        }
    }

    private func execute(_ sql: String) throws(RecordError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(db, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw problem(code, message.map { String(cString: $0) })
        }
    }

    private func integer(_ sql: String) throws(RecordError) -> Int {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW else { throw problem(code) }
        return Int(sqlite3_column_int64(statement, 0))
    }

    private func prepare(_ sql: String) throws(RecordError) -> OpaquePointer? {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK else { throw problem(code) }
        return statement
    }

    private func bind(_ text: String, _ index: Int32, _ statement: OpaquePointer) {
        sqlite3_bind_text(statement, index, text, -1, dedog_sqlite_transient())
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }

    /// The error for SQLite's result `code`: a damaged file apart from other failures.
    private func problem(_ code: Int32, _ message: String? = nil) -> RecordError {
        let reason = message ?? db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        switch code & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .damaged(path: path, reason: reason)
        case SQLITE_CANTOPEN: return .cannotOpen(path: path, reason: reason)
        default: return .failed(path: path, reason: reason)
        }
    }

    // MARK: Network shares

    /// The network file system `folder` is on (NFS, SMB …), nil when it is on none of them.
    static func networkFileSystem(at folder: String) -> String? {
        let type = dedog_file_system_type(folder)
        return type < 0 ? nil : networkFileSystem(magic: UInt32(truncatingIfNeeded: type))
    }

    /// The name of the network file system whose `statfs` type is `magic`; nil for a local one. From Linux's
    /// include/uapi/linux/magic.h and fs/smb/client.
    @_spi(Testing) public static func networkFileSystem(magic: UInt32) -> String? {
        switch magic {
        case 0x6969: "NFS"
        case 0x517B: "SMB"
        case 0xFF53_4D42: "CIFS"
        case 0xFE53_4D42: "SMB2"
        case 0x5346_414F: "AFS"
        case 0x7375_7245: "Coda"
        case 0x00C3_6400: "Ceph"
        default: nil
        }
    }
}
