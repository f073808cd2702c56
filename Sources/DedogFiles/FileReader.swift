#if canImport(Glibc)
import Glibc
#endif
import struct Foundation.Data

/// Reads files that strangers may have made: only regular files (a named pipe would block forever and
/// `/dev/zero` never ends), and only up to a size limit checked before anything is allocated.
public enum FileReader {
    /// The whole file at `path`, if it is a regular file of at most `limit` bytes.
    public static func read(_ path: String, limit: Int) throws(FileError) -> [UInt8] {
        let file = try OpenFile(path)
        defer { file.close() }
        let size = file.size
        guard size <= limit else { throw .tooLarge(bytes: size, limit: limit) }
        return try file.read(upTo: size)
    }

    /// As `read`, as `Data` (for parsers that take it), without an extra copy.
    public static func readData(_ path: String, limit: Int) throws(FileError) -> Data {
        let file = try OpenFile(path)
        defer { file.close() }
        let size = file.size
        guard size <= limit else { throw .tooLarge(bytes: size, limit: limit) }
        return try readData(file, size: size)
    }

    private static func readData(_ file: OpenFile, size: Int) throws(FileError) -> Data {
        guard size >= hugePage else {
            var data = Data(count: size)
            let filled = try data.withUnsafeMutableBytes { buffer in Result { () throws(FileError) in try file.fill(buffer) } }.get()
            if filled < size { data.removeSubrange(filled...) }
            return data
        }
        // A model file is tens of megabytes read once into fresh memory: on 2 MB pages that is a few page
        // faults instead of thousands (19 MB: about 10 ms less where the kernel grants huge pages on request).
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, hugePage, (size + hugePage - 1) / hugePage * hugePage) == 0, let memory else {
            throw .from(errno: ENOMEM)
        }
        _ = madvise(memory, size, MADV_HUGEPAGE)
        let filled: Int
        do {
            filled = try file.fill(UnsafeMutableRawBufferPointer(start: memory, count: size))
        } catch {
            free(memory)
            throw error
        }
        return Data(bytesNoCopy: memory, count: filled, deallocator: .free)
    }

    private static let hugePage = 2 << 20

    /// As `readData`, but a file of `mapFrom` bytes or more is mapped into memory instead of copied: its bytes are
    /// the page cache's, shared with every process reading the file, and nothing is copied (the 25 MB default model:
    /// 5 ms less in a warm process, about 2 ms in a whole one). For files read in full and kept while the program
    /// runs, whose writers replace them by renaming a new file into place (as dedog's do): a file cut shorter in
    /// place while it is mapped would stop the program (SIGBUS) when it touches the missing pages.
    public static func mappedData(_ path: String, limit: Int, mapFrom: Int = 2 << 20) throws(FileError) -> Data {
        let file = try OpenFile(path)
        defer { file.close() }
        let size = file.size
        guard size <= limit else { throw .tooLarge(bytes: size, limit: limit) }
        guard size >= max(mapFrom, 1) else { return try readData(file, size: size) }
        // MAP_POPULATE maps every page at once (reading ahead what is not cached yet) instead of on first touch.
        let memory = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file.fd, 0)
        guard let memory, memory != MAP_FAILED else { throw .from(errno: errno) }
        return Data(bytesNoCopy: memory, count: size, deallocator: .unmap)
    }

    /// The first `count` bytes (fewer if the file is shorter) of the regular file at `path`.
    public static func head(_ path: String, count: Int) throws(FileError) -> [UInt8] {
        let file = try OpenFile(path)
        defer { file.close() }
        return try file.read(upTo: min(count, file.size))
    }
}

/// A regular file opened for reading. Opening is non-blocking, so that a named pipe without a writer is
/// refused instead of waiting.
private struct OpenFile {
    let fd: Int32
    let size: Int

    init(_ path: String) throws(FileError) {
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .from(errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .from(errno: code)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            Glibc.close(fd)
            throw .isFolder
        }
        if let kind = OpenKind.describe(info.st_mode) {
            Glibc.close(fd)
            throw .notRegularFile(kind: kind)
        }
        size = Int(info.st_size)
    }

    /// Up to `count` bytes from the start; fewer if the file shrank since it was opened.
    func read(upTo count: Int) throws(FileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let filled = try bytes.withUnsafeMutableBytes { buffer in Result { () throws(FileError) in try fill(buffer) } }.get()
        if filled < count { bytes.removeSubrange(filled...) }
        return bytes
    }

    /// Reads from the start into `buffer` until it is full or the file ends; returns the bytes read.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled))
            if n > 0 {
                filled += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw .from(errno: errno)
            }
        }
        return filled
    }

    func close() { Glibc.close(fd) }
}
