import CSQLite
@_spi(Testing) import DedogRecord
import Foundation
import Testing

/// The record of photos looked at: what is saved is read back, a folder is forgotten with everything under it and
/// nothing beside it, two writers at once lose nothing, and a damaged or later file is refused with its reason.
final class SeenPhotosTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-record-\(UUID().uuidString)")
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    var file: String { folder.appendingPathComponent("sub/seen.sqlite").path }

    static func photo(_ path: String, tags: [String] = []) -> SeenPhoto {
        SeenPhoto(path: path, state: FileState(size: 1234, modified: 1_700_000_000_123_456_789), looker: "model abc | en", tags: tags)
    }

    @Test func whatIsSavedIsReadBackAfterReopening() throws {
        do {
            let record = try SeenPhotos(path: file)  // its folder is made
            try record.save(Self.photo("/photos/a.jpg", tags: ["Animals/Dogs", "Animals/Dogs/Beagle"]))
            try record.save(Self.photo("/photos/b.jpg"))
            #expect(try record.lookup("/photos/c.jpg") == nil)
        }
        let again = try SeenPhotos(path: file)
        #expect(try again.lookup("/photos/a.jpg") == Self.photo("/photos/a.jpg", tags: ["Animals/Dogs", "Animals/Dogs/Beagle"]))
        #expect(try again.lookup("/photos/b.jpg") == Self.photo("/photos/b.jpg"))
        #expect(try again.count() == 2)
        // Saved again: replaced, not added.
        var changed = Self.photo("/photos/b.jpg")
        changed.state.size = 99
        try again.save(changed)
        #expect(try again.lookup("/photos/b.jpg")?.state.size == 99)
        #expect(try again.count() == 2)
    }

    @Test func aFolderIsForgottenWithWhatIsUnderItAndNothingBesideIt() throws {
        let record = try SeenPhotos(path: file)
        for path in ["/p/2025/a.jpg", "/p/2025/deep/b.jpg", "/p/2025.jpg", "/p/2025-old/c.jpg", "/p/2024/d.jpg", "/q/e.jpg"] {
            try record.save(Self.photo(path))
        }
        #expect(try record.forget("/p/2025/") == 2)
        #expect(try record.lookup("/p/2025.jpg") != nil && record.lookup("/p/2025-old/c.jpg") != nil)
        #expect(try record.forget("/p/2024/d.jpg") == 1)
        #expect(try record.forget("/nothing") == 0)
        #expect(try record.forget("/") == 3)
        #expect(try record.count() == 0)
    }

    @Test func twoWritersAtOnceLoseNothing() async throws {
        let first = try SeenPhotos(path: file), second = try SeenPhotos(path: file)
        await withTaskGroup(of: Void.self) { group in
            for (name, record) in [("one", first), ("two", second)] {
                group.addTask {
                    for i in 0..<300 { try? record.save(Self.photo("/\(name)/\(i).jpg")) }
                }
            }
        }
        #expect(try first.count() == 600)
        #expect(try second.lookup("/one/299.jpg") != nil && first.lookup("/two/0.jpg") != nil)
    }

    @Test func aFileThatIsNoRecordIsRefusedAndLeftAsItIs() throws {
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: URL(fileURLWithPath: file))
        #expect {
            _ = try SeenPhotos(path: file)
        } throws: { error in
            guard case let .damaged(path, _) = error as? RecordError else { return false }
            return path == file
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == garbage)
    }

    @Test func aRecordOfALaterLayoutIsRefused() throws {
        _ = try SeenPhotos(path: file)
        var db: OpaquePointer?
        #expect(sqlite3_open(file, &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "PRAGMA user_version = 7", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
        #expect(throws: RecordError.newerLayout(path: file, version: 7)) { _ = try SeenPhotos(path: file) }
    }

    @Test func networkSharesAreToldFromLocalDisks() {
        #expect(SeenPhotos.networkFileSystem(magic: 0x6969) == "NFS")
        #expect(SeenPhotos.networkFileSystem(magic: 0xFF53_4D42) == "CIFS")
        #expect(SeenPhotos.networkFileSystem(magic: 0xFE53_4D42) == "SMB2")
        // ext4, XFS, btrfs, tmpfs, overlayfs
        for local: UInt32 in [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x794C_7630] {
            #expect(SeenPhotos.networkFileSystem(magic: local) == nil)
        }
    }

    @Test func aFileStateIsItsSizeAndModificationTime() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("x.jpg").path
        try Data(count: 10).write(to: URL(fileURLWithPath: path))
        var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 5), timespec(tv_sec: 1_600_000_000, tv_nsec: 5)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(FileState(of: path) == FileState(size: 10, modified: 1_600_000_000_000_000_005))
        #expect(FileState(of: folder.path) == nil)
        #expect(FileState(of: path + ".none") == nil)
    }
}
