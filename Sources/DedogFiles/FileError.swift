#if canImport(Glibc)
import Glibc
#endif

/// Why a file could not be read or written, in words a user can act on. The modules wrap it in their own
/// errors, which add the file's name and what to do next.
public enum FileError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFound
    case isFolder
    /// A named pipe, device or socket: reading it could block forever or never end.
    case notRegularFile(kind: String)
    case permissionDenied
    /// A name that is not valid UTF-8: Swift strings cannot hold it, so the file cannot be named to the system.
    case nameNotUTF8
    /// ELOOP: a symbolic link that leads back to itself.
    case linkLoop
    /// Bigger than the reader's limit; nothing was read.
    case tooLarge(bytes: Int, limit: Int)
    /// The folder a file was to be written in does not exist.
    case noFolder(path: String)
    /// ENOSPC or EDQUOT while writing.
    case diskFull
    /// EROFS while writing.
    case readOnly
    /// EFBIG: the process may not write files this large (`ulimit -f`).
    case fileSizeLimit
    case system(String)

    public var description: String {
        switch self {
        case .notFound: return "no such file"
        case .isFolder: return "it is a folder"
        case let .notRegularFile(kind): return "it is \(kind), not a regular file"
        case .permissionDenied: return "permission denied"
        case .linkLoop: return "it is a loop of symbolic links"
        case .nameNotUTF8: return "its name is not valid UTF-8, so dedog cannot open it; rename it"
        case let .tooLarge(bytes, limit):
            return "it has \(FileError.size(bytes)), over the limit of \(FileError.size(limit))"
        case let .noFolder(path): return "the folder \(path) does not exist"
        case .diskFull: return "the disk is full; free some space"
        case .readOnly: return "the file system is read-only; write somewhere else"
        case .fileSizeLimit: return "the file size limit of this process (ulimit -f) was reached"
        case let .system(reason): return reason
        }
    }

    /// The error for a failed system call's `errno`.
    public static func from(errno code: Int32) -> FileError {
        switch code {
        case ENOENT: return .notFound
        case EISDIR: return .isFolder
        case EACCES, EPERM: return .permissionDenied
        case ELOOP: return .linkLoop
        case ENOSPC, EDQUOT: return .diskFull
        case EROFS: return .readOnly
        case EFBIG: return .fileSizeLimit
        default: return .system(String(cString: strerror(code)))
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : bytes >= 1 << 10 ? "\(bytes >> 10) kB" : "\(bytes) bytes"
    }
}
