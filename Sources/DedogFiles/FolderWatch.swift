import Foundation
import Glibc

/// Files as they are added or changed under folders (and their subfolders), through Linux's inotify: a file is
/// reported once its writer has closed it (or it was moved in whole) and nothing has happened to it for a settling
/// time, so that a photo still being written is never read half-way. Hidden files and folders (`.name`) are passed
/// over, as the folder walk passes over them: editors' and copy tools' temporary files are hidden.
///
/// A folder given that is removed is waited for; when it is made again it is watched again, and every file already
/// in it is reported. When the kernel's queue overflows, every file under every folder is reported (the record of
/// photos looked at makes that cheap).
///
/// Not thread-safe: one caller drives it with `next`.
public final class FolderWatch {
    private let fd: Int32
    private let roots: [String]
    /// Each watch's folder.
    private var folders: [Int32: String] = [:]
    /// Roots gone (removed or moved away), waited for.
    private var missing: Set<String> = []
    /// Files that changed, with when they last did.
    private var pending: [String: Double] = [:]

    /// The events a folder is watched for: a file closed after writing, moved in, its times or mode changed
    /// (`touch`), written to (which postpones a pending file); a folder made or moved in; the folder itself removed
    /// or moved.
    /// (IN_ONLYDIR and IN_DONTFOLLOW, which Swift's Glibc module leaves out, from linux/inotify.h.)
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        | 0x0100_0000 | 0x0200_0000

    /// Watches `folders` (each must be a folder) and everything under them.
    public init(_ folders: [String]) throws(FileError) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .system("cannot watch folders: \(String(cString: strerror(errno)))") }
        roots = folders.map { $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        for root in roots {
            guard FolderWalk.isFolder(root) else {
                close(fd)
                if FileManager.default.fileExists(atPath: root) {
                    throw .system("\(root) is a file, not a folder; only folders can be watched")
                }
                throw .noFolder(path: root)
            }
            do { try addTree(root, reportingFiles: false) } catch {
                close(fd)
                throw error
            }
        }
    }

    deinit { close(fd) }

    /// The files that became complete, sorted, waiting at most `timeout` seconds for one; empty when none did. A
    /// file counts as complete `settle` seconds after its last event.
    public func next(timeout: Double, settle: Double = 1) -> [String] {
        let deadline = Self.now() + timeout
        while true {
            readEvents(waiting: min(0.25, max(0, deadline - Self.now())))
            lookForMissingRoots()
            let now = Self.now()
            let ready = pending.filter { now - $0.value >= settle }.map(\.key).sorted()
            if !ready.isEmpty {
                for path in ready { pending[path] = nil }
                // A file removed again before it settled is no news.
                let present = ready.filter { FileManager.default.fileExists(atPath: $0) }
                if !present.isEmpty { return present }
            }
            if now >= deadline { return [] }
        }
    }

    /// How many folders are watched (for tests).
    public var watchedFolders: Int { folders.count }

    // MARK: Events

    private func readEvents(waiting seconds: Double) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return }
        let size = 64 * 1024
        var buffer = [UInt8](repeating: 0, count: size)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, size) }
            guard count > 0 else { return }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                let nameStart = offset + MemoryLayout<inotify_event>.size, nameLength = Int(event.len)
                let name = nameLength == 0 ? "" : buffer[nameStart..<min(count, nameStart + nameLength)]
                    .prefix { $0 != 0 }.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
                handle(event, name: name)
                offset = nameStart + nameLength
            }
        }
    }

    private func handle(_ event: inotify_event, name: String) {
        let mask = Int32(bitPattern: event.mask)
        if mask & Int32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: every file is news.
            for root in roots where !missing.contains(root) { try? addTree(root, reportingFiles: true) }
            return
        }
        guard let folder = folders[event.wd] else { return }
        if mask & Int32(IN_IGNORED) != 0 || mask & Int32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            // The folder is gone: its watch ends; a root is waited for.
            if mask & Int32(IN_MOVE_SELF) != 0 { inotify_rm_watch(fd, event.wd) }
            folders[event.wd] = nil
            if roots.contains(folder) { missing.insert(folder) }
            return
        }
        guard !name.isEmpty, !name.hasPrefix(".") else { return }
        let path = folder + "/" + name
        if mask & Int32(IN_ISDIR) != 0 {
            if mask & Int32(IN_CREATE | IN_MOVED_TO) != 0 { try? addTree(path, reportingFiles: true) }
        } else if mask & Int32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB) != 0 {
            pending[path] = Self.now()
        } else if mask & Int32(IN_MODIFY) != 0, pending[path] != nil {
            // Written to again before it settled: it settles from now.
            pending[path] = Self.now()
        }
    }

    /// Roots made again since they went: watched again, their files reported.
    private func lookForMissingRoots() {
        for root in missing where FolderWalk.isFolder(root) {
            if (try? addTree(root, reportingFiles: true)) != nil { missing.remove(root) }
        }
    }

    /// Watches `folder` and every folder under it, as the folder walk finds them (`FolderWalk`: links to folders
    /// not followed, hidden ones passed over); with `reportingFiles`, every file already in them is pending (it may
    /// have arrived before the watch did).
    private func addTree(_ folder: String, reportingFiles: Bool) throws(FileError) {
        let listing = FolderWalk.list(folder)
        for path in listing.folders {
            let wd = inotify_add_watch(fd, path, Self.mask)
            guard wd >= 0 else {
                if errno == ENOSPC {
                    throw .system("cannot watch \(path): the system's limit of watched folders is reached "
                                  + "(fs.inotify.max_user_watches)")
                }
                continue  // gone already, or unreadable: nothing to watch
            }
            folders[wd] = path
        }
        if reportingFiles {
            let now = Self.now()
            for file in listing.files { pending[file] = now }
        }
    }

    private static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }
}
