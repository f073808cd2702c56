#if canImport(Glibc)
import Glibc
#endif
import CSidecar
import DedogFiles
import Foundation

/// A photo's XMP sidecar, read, changed in memory and written back whole and atomically: the keywords dedog
/// writes (as paths, `["Animals", "Dogs", "Beagle"]`) go into every property a photo manager reads them from,
/// and everything else in the file (the user's keywords, darktable's edit history, any other namespace) is
/// kept as it was. dedog records in its own namespace what it added, so it can replace or remove exactly that.
///
/// The file: `photo.jpg.xmp` when it exists (digiKam, darktable and Immich read it), else `photo.xmp` when that
/// exists (digiKam and Immich also read it), else a new `photo.jpg.xmp`.
public final class Sidecar {
    /// Where a keyword path goes: the property, its array form, and how a path is written in it (joined with a
    /// separator, or only its last part).
    struct KeywordProperty {
        let namespace: String
        let name: String
        let form: XMPPacket.Form
        let separator: String?
        /// The property of dedog's namespace that lists the values dedog added here.
        let record: String
    }

    /// The properties dedog writes keywords to, in the order the managers look (digiKam and Immich stop at the
    /// first one present, so TagsList must have them all).
    static let keywordProperties = [
        KeywordProperty(namespace: XMPNamespace.digiKam, name: "TagsList", form: .sequence, separator: "/", record: "TagsList"),
        KeywordProperty(namespace: XMPNamespace.lightroom, name: "hierarchicalSubject", form: .bag, separator: "|", record: "HierarchicalSubject"),
        KeywordProperty(namespace: XMPNamespace.microsoftPhoto, name: "LastKeywordXMP", form: .bag, separator: "/", record: "LastKeywordXMP"),
        KeywordProperty(namespace: XMPNamespace.dublinCore, name: "subject", form: .bag, separator: nil, record: "Subject"),
    ]

    /// The largest sidecar read (darktable's histories of heavily edited photos reach a few hundred kB).
    public static let maxBytes = 16 << 20

    public let path: String
    /// Whether the file existed when it was read.
    public let existed: Bool
    private let packet: XMPPacket

    /// The sidecar of `photo` (see the type's note on which file); empty when there is none yet.
    public init(photo: String) throws(SidecarError) {
        let names = Self.names(for: photo)
        let found = names.lazy.compactMap { path in Self.kind(of: path).map { (path, $0) } }.first
        let chosen = found?.0 ?? names[0]
        path = chosen
        switch found?.1 {
        case nil:
            existed = false
            guard let empty = XMPPacket() else { throw .library }
            packet = empty
        case S_IFLNK?:
            throw .symbolicLink(path: chosen)
        case S_IFREG?:
            existed = true
            let bytes: [UInt8]
            do throws(FileError) { bytes = try FileReader.read(chosen, limit: Self.maxBytes) } catch { throw .unreadable(path: chosen, error) }
            guard Self.startsLikeXMP(bytes), let parsed = XMPPacket(parsing: bytes) else { throw .notXMP(path: chosen) }
            packet = parsed
        default:
            throw .unreadable(path: chosen, .notRegularFile(kind: "a folder or special file"))
        }
    }

    /// Where `photo`'s sidecar may be, in the order it is looked for: `photo.jpg.xmp` (where a new one goes), then
    /// `photo.xmp`.
    public static func names(for photo: String) -> [String] {
        let dot = photo.lastIndex(of: ".").flatMap { photo[$0...].contains("/") ? nil : $0 }
        return [photo + ".xmp"] + (dot.map { [String(photo[..<$0]) + ".xmp"] } ?? [])
    }

    /// Whether `bytes` start as a sidecar must for Exiv2 (digiKam's and darktable's reader, `isXmpType`): after an
    /// optional byte order mark, white space and XML declaration, `<?xpacket` or `<x:xmpmeta`. Exempi alone would
    /// also take any XML, or nothing, for an empty packet.
    static func startsLikeXMP(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        func skipSpace() { rest = rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } }
        skipSpace()
        if rest.starts(with: Array("<?xml ".utf8)), let end = rest.firstRange(of: Array("?>".utf8)) {
            rest = rest[end.upperBound...]
            skipSpace()
        }
        return rest.starts(with: Array("<?xpacket".utf8)) || rest.starts(with: Array("<x:xmpmeta".utf8))
    }

    /// The file type bits of `path` itself (a link is a link), nil when there is nothing there.
    private static func kind(of path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    /// What dedog recorded as the writer of its keywords (a model's name and content hash), nil when it has
    /// written none here.
    public var writer: String? { packet.text(XMPNamespace.dedog, "Writer") }

    /// Whether dedog made this file (then `remove` deletes it when nothing else is left in it).
    public var createdByDedog: Bool { packet.text(XMPNamespace.dedog, "Created") == "True" }

    /// The keyword paths dedog added to digiKam's TagsList (`Animals/Dogs/Beagle`).
    public var dedogTags: [String] { packet.items(XMPNamespace.dedog, "TagsList")?.values ?? [] }

    /// The values of `property` (for tests and `--dry-run`); empty when absent.
    public func values(_ namespace: String, _ name: String) -> [String] { packet.items(namespace, name)?.values ?? [] }

    /// Takes out the keywords dedog added before and adds `tags` (paths of names), recording `writer`. A value
    /// already in a property (the user's own "Beagle") is left where it is and not recorded as dedog's, so
    /// removing dedog's keywords later keeps it. Returns whether the file's content changed.
    @discardableResult
    public func replaceDedogTags(with tags: [[String]], writer: String) throws(SidecarError) -> Bool {
        let before = snapshot()
        try takeOutDedogTags()
        for property in Self.keywordProperties {
            let existing = packet.items(property.namespace, property.name)
            var values = existing?.values ?? []
            var added: [String] = []
            for tag in tags {
                let value = Self.text(of: tag, separator: property.separator)
                guard !value.isEmpty, !values.contains(value) else { continue }
                values.append(value)
                added.append(value)
            }
            guard !added.isEmpty else { continue }
            guard packet.setItems(property.namespace, property.name, values, form: existing?.form ?? property.form),
                  packet.setItems(XMPNamespace.dedog, property.record, added, form: .bag) else { throw .library }
        }
        guard packet.setText(XMPNamespace.dedog, "Writer", writer),
              existed && !createdByDedog || packet.setText(XMPNamespace.dedog, "Created", "True") else { throw .library }
        return snapshot() != before
    }

    /// Takes out every keyword dedog added and its own record. Returns whether the file's content changed.
    @discardableResult
    public func removeDedogTags() throws(SidecarError) -> Bool {
        let before = snapshot()
        try takeOutDedogTags()
        for name in ["Writer", "Created"] { packet.setText(XMPNamespace.dedog, name, nil) }
        return snapshot() != before
    }

    /// Whether, apart from dedog's own record, the file holds nothing.
    public var isEmptyApartFromDedog: Bool { !packet.hasProperties(outside: XMPNamespace.dedog) }

    private func takeOutDedogTags() throws(SidecarError) {
        for property in Self.keywordProperties {
            let added = packet.items(XMPNamespace.dedog, property.record)?.values ?? []
            guard !added.isEmpty, let existing = packet.items(property.namespace, property.name) else {
                packet.setText(XMPNamespace.dedog, property.record, nil)
                continue
            }
            var values = existing.values
            for value in added { if let i = values.firstIndex(of: value) { values.remove(at: i) } }
            guard packet.setItems(property.namespace, property.name, values, form: existing.form) else { throw .library }
            packet.setText(XMPNamespace.dedog, property.record, nil)
        }
    }

    /// Everything dedog may change, to tell whether a change changed anything (the serialised bytes would not do:
    /// a property taken out and put back moves to the end of the packet).
    private func snapshot() -> [[String]] {
        Self.keywordProperties.flatMap { [values($0.namespace, $0.name), values(XMPNamespace.dedog, $0.record)] }
            + [[writer ?? "", packet.text(XMPNamespace.dedog, "Created") ?? ""]]
    }

    /// A path as `property` writes it: its parts joined with the separator (a separator inside a name becomes
    /// "-", so that it cannot make a level of its own), or its last part.
    static func text(of tag: [String], separator: String?) -> String {
        let parts = tag.map { $0.replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: "|", with: "-") }
        guard let separator else { return parts.last ?? "" }
        return parts.joined(separator: separator)
    }

    /// The file as it is in memory now.
    public func bytes() throws(SidecarError) -> [UInt8] {
        guard let bytes = packet.serialized() else { throw .library }
        return bytes
    }

    /// Writes the file: a temporary file beside it, renamed over it, so an interrupted run leaves it as it was or
    /// complete. `durable`: flushed to the disk before this returns; without it, `Sidecar.flush` flushes many at once.
    public func save(durable: Bool = true) throws(SidecarError) {
        let bytes = try bytes()
        do throws(FileError) { try AtomicFile.write(bytes, to: path, durable: durable) } catch { throw .unwritable(path: path, error) }
    }

    /// Flushes to the disk every file system that holds one of `paths` (one `syncfs` each): what sidecars saved
    /// without `durable` need before a run is over. Writing each durably costs a disk flush per photo.
    public static func flush(_ paths: [String]) {
        var done = Set<UInt64>()
        for path in paths {
            let folder = (path as NSString).deletingLastPathComponent
            var info = stat()
            guard stat(folder.isEmpty ? "." : folder, &info) == 0, done.insert(UInt64(info.st_dev)).inserted else { continue }
            let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            _ = dedog_syncfs(fd)
            close(fd)
        }
    }

    /// Deletes the file.
    public func delete() throws(SidecarError) {
        guard unlink(path) == 0 else { throw .unwritable(path: path, .from(errno: errno)) }
    }
}
