import Foundation

/// Writes files the safe way: a temporary file in the same folder, flushed, then renamed over the target.
/// A crash at any moment leaves the old file or the new one, never a mixture. `durable` also flushes the data
/// to the disk before the rename (for model files; caches that check their entries can skip the cost).
public enum AtomicFile {
    public static func write(_ data: Data, to url: URL, durable: Bool = true) throws {
        let folder = url.deletingLastPathComponent()
        let temp = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        guard FileManager.default.createFile(atPath: temp.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: folder.path])
        }
        do {
            let handle = try FileHandle(forWritingTo: temp)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            if durable { try handle.synchronize() }
        } catch {
            try? FileManager.default.removeItem(at: temp)
            throw error
        }
        guard rename(temp.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temp)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: reason])
        }
    }
}
