#if canImport(Glibc)
import Glibc
#endif

/// Lists the regular files under a folder, safely: links to folders are not followed (no loops); links to files
/// are, unless the file is listed already (by its own entry or another link); hidden entries are skipped; and
/// every entry that cannot be used is reported with the reason instead of vanishing — including names that are
/// not valid UTF-8, which Swift strings cannot hold.
public enum FolderWalk {
    public struct Listing: Sendable {
        /// Paths of regular files, `folder` + "/" + the path below it, sorted.
        public var files: [String] = []
        /// Entries that are not usable files, with the reason, sorted by path.
        public var problems: [(path: String, reason: String)] = []
        /// The folders walked, `folder` itself among them, sorted (what a watch on the whole tree watches).
        public var folders: [String] = []
    }

    public static func list(_ folder: String) -> Listing {
        var listing = Listing()
        var direct = Set<FileID>()
        var linked: [(path: String, id: FileID)] = []
        var pending = [folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder]
        while let dir = pending.popLast() {
            guard let handle = opendir(dir) else {
                listing.problems.append((dir, "cannot list the folder (\(FileError.from(errno: errno)))"))
                continue
            }
            defer { closedir(handle) }
            listing.folders.append(dir)
            while let entry = readdir(handle) {
                // Up to the NUL only: glibc allocates a directory entry just long enough for its name, so loading
                // the whole 256-byte d_name field reads past the end of the stream's buffer (AddressSanitizer
                // caught it on a folder of 3,000 files).
                let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
                let bytes = Array(UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self))))
                if bytes.first == UInt8(ascii: ".") { continue }  // ".", "..", and hidden entries such as .DS_Store
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    listing.problems.append((join(dir, String(decoding: bytes, as: UTF8.self)),
                                             FileError.nameNotUTF8.description))
                    continue
                }
                let path = join(dir, name)
                var info = stat()
                guard lstat(path, &info) == 0 else {
                    listing.problems.append((path, FileError.from(errno: errno).description))
                    continue
                }
                let isLink = info.st_mode & S_IFMT == S_IFLNK
                if isLink {
                    guard stat(path, &info) == 0 else {
                        listing.problems.append((path, whyMissing(path)))
                        continue
                    }
                    if info.st_mode & S_IFMT == S_IFDIR { continue }  // links to folders are not followed
                }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    pending.append(path)
                case S_IFREG:
                    let id = FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                    if isLink { linked.append((path, id)) } else { listing.files.append(path); direct.insert(id) }
                default:
                    let kind = OpenKind.describe(info.st_mode) ?? "a special file"
                    listing.problems.append((path, FileError.notRegularFile(kind: kind).description))
                }
            }
        }
        // Files reached only through links: the first link in sorted order is listed (the same answer on every run).
        var seen = direct
        listing.files += linked.sorted { $0.path < $1.path }.filter { seen.insert($0.id).inserted }.map(\.path)
        listing.files.sort()
        listing.folders.sort()
        listing.problems.sort { $0.path < $1.path }
        return listing
    }

    private static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// Why `path` cannot be found: a link loop and a dangling link say so.
    /// Whether `path` is a folder (following a symbolic link given by name, as the walk does for named paths).
    public static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    public static func whyMissing(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return "no such file or folder" }
        return stat(path, &info) != 0 && errno == ELOOP ? FileError.linkLoop.description
            : "no such file (it is a symbolic link to a missing file)"
    }

    private struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64
    }
}

/// The words for a file's type in messages; nil for a regular file.
enum OpenKind {
    static func describe(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a named pipe"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "a special file"
        }
    }
}
