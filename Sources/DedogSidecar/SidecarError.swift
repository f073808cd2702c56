import DedogFiles

/// Why a sidecar could not be read or written, naming the file.
public enum SidecarError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is there but is not XMP (not XML, or XML without an XMP packet): it is left as it is.
    case notXMP(path: String)
    /// The sidecar's name is a symbolic link: replacing it would replace the link, not the file it names.
    case symbolicLink(path: String)
    case unreadable(path: String, FileError)
    case unwritable(path: String, FileError)
    /// Exempi could not start, or could not write a packet it had read.
    case library

    public var description: String {
        switch self {
        case let .notXMP(path): return "\(path) is not an XMP sidecar (no XMP packet could be read from it); it was left as it is."
        case let .symbolicLink(path): return "\(path) is a symbolic link; dedog writes only sidecars that are files, and left it as it is."
        case let .unreadable(path, error): return "cannot read \(path): \(error)."
        case let .unwritable(path, error): return "cannot write \(path): \(error)."
        case .library: return "the XMP library (exempi) failed; the sidecar was left as it was."
        }
    }
}
