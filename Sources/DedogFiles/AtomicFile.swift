#if canImport(Glibc)
import Glibc
#endif
import protocol Foundation.ContiguousBytes

/// Writes files the safe way: a temporary file in the same folder, flushed, then renamed over the target.
/// A crash at any moment leaves the old file or the new one, never a mixture; a failed write (full or
/// read-only disk, size limit) removes the temporary file and leaves the old one as it was.
/// `durable` also flushes the data and the folder entry to the disk (for model files; caches that check
/// their entries can skip the cost).
public enum AtomicFile {
    public static func write(_ bytes: some ContiguousBytes, to path: String, durable: Bool = true) throws(FileError) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temp = (folder == "/" ? "" : folder) + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"

        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            var info = stat()
            if code == ENOENT || (stat(folder, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR) {
                throw .noFolder(path: folder)
            }
            throw .from(errno: code)
        }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
                if n > 0 {
                    written += n
                } else if n == 0 {
                    failure = EIO
                    return
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        if failure == 0, durable, fsync(fd) != 0 { failure = errno }
        // close() reports late write errors on some file systems (NFS, quotas).
        if Glibc.close(fd) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temp, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temp)
            throw .from(errno: failure)
        }
        if durable {
            let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dir >= 0 {
                fsync(dir)
                Glibc.close(dir)
            }
        }
    }
}
