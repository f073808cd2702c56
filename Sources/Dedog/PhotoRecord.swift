import Foundation
import DedogRecord
import DedogSidecar

/// `dedog tag`'s memory of every photo it has looked at (`SeenPhotos`, a SQLite file): a photo without a dog gets no
/// sidecar, so without it every run would look at every such photo again. A photo is looked at again when its size
/// or modification time changed, when another model (or mode, root, language or minimum probability) looks, or when
/// the sidecar its keywords went to is gone.
public final class PhotoRecord: Sendable {
    private let seen: SeenPhotos

    public var path: String { seen.path }

    public init(path: String) throws(ClassifierError) {
        do throws(RecordError) { seen = try SeenPhotos(path: path) } catch { throw .record(error) }
    }

    /// Where a user's record lives: `$XDG_DATA_HOME/dedog/seen.sqlite`, else `~/.local/share/dedog/seen.sqlite`
    /// (`environment` is the front end's: the library reads none); nil when neither is known.
    public static func defaultPath(environment env: [String: String]) -> String? {
        if let xdg = env["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/dedog/seen.sqlite" }
        guard let home = env["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/share/dedog/seen.sqlite"
    }

    /// Forgets the photo at `path`, or every photo under it; returns how many were forgotten.
    public func forget(_ path: String) throws(ClassifierError) -> Int {
        do throws(RecordError) { return try seen.forget(Self.key(path)) } catch { throw .record(error) }
    }

    /// How many photos the record holds.
    public func count() throws(ClassifierError) -> Int {
        do throws(RecordError) { return try seen.count() } catch { throw .record(error) }
    }

    /// Whether the record holds the file at `path` as it is now (by whichever model): then it is a photo, known
    /// without opening it.
    public func holdsUnchanged(_ path: String) -> Bool {
        guard let state = FileState(of: path), let seen = try? lookup(Self.key(path)) else { return false }
        return seen.state == state
    }

    /// A photo as the record knows it: its absolute path, without `.` or `..` (links are not resolved: a photo is
    /// known by the path it is found at, as its sidecar is).
    static func key(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    func lookup(_ key: String) throws(ClassifierError) -> SeenPhoto? {
        do throws(RecordError) { return try seen.lookup(key) } catch { throw .record(error) }
    }

    func save(_ photo: SeenPhoto) throws(ClassifierError) {
        do throws(RecordError) { try seen.save(photo) } catch { throw .record(error) }
    }
}

/// What the record says of a photo (`PhotoTagger.recall`).
public enum Recall: Sendable {
    /// Looked at by this looker, and the file is as it was then: not looked at again.
    case unchanged(TagReport)
    /// Recorded, but changed since, or looked at by another: looked at again, whatever its sidecar says.
    case changed
    /// Never recorded (a first run, a record forgotten or kept elsewhere): its sidecar tells whether this model tagged it.
    case unknown
}

/// One photo on its way through a `dedog tag` run: where it is and how its file stood before it was looked at (a
/// photo changed while it is looked at is then looked at again next time).
public struct PhotoVisit: Sendable {
    public let photo: String
    let key: String
    let state: FileState?

    public init(photo: String) {
        self.photo = photo
        key = PhotoRecord.key(photo)
        state = FileState(of: photo)
    }
}

extension PhotoTagger {
    /// Who looks at a photo, as the record keeps it: the model (with careful mode) and the settings that change
    /// its keywords.
    public var looker: String {
        "\(writer) | root \(settings.root.joined(separator: "/")) | \(settings.language.rawValue)"
            + (settings.minProbability.map { " | from \($0)" } ?? "") + (firstLook ? " | first look" : "")
    }

    /// What `record` says of the photo of `visit`: seen by this looker as the file is now (its report), changed
    /// since (or looked at by another, or its keywords' sidecar is gone), or never recorded.
    public func recall(_ visit: PhotoVisit, in record: PhotoRecord, dryRun: Bool) throws(ClassifierError) -> Recall {
        guard let seen = try record.lookup(visit.key) else { return .unknown }
        guard let state = visit.state, seen.state == state, seen.looker == looker else { return .changed }
        let sidecars = Sidecar.names(for: visit.photo)
        let sidecar = sidecars.first { FileManager.default.fileExists(atPath: $0) }
        guard seen.tags.isEmpty || sidecar != nil else { return .changed }
        return .unchanged(TagReport(photo: visit.photo, sidecar: sidecar ?? sidecars[0], action: .seenBefore, tags: seen.tags,
                                    dogs: 0, dryRun: dryRun))
    }

    /// Records what `report` says of the photo of `visit`, when it was looked at (or found tagged by this model)
    /// and something was written, or nothing needed to be; a dry run records nothing.
    public func remember(_ visit: PhotoVisit, _ report: TagReport, in record: PhotoRecord) throws(ClassifierError) {
        guard !report.dryRun, let state = visit.state,
              [.created, .updated, .unchanged, .nothingToTag, .alreadyTagged].contains(report.action) else { return }
        try record.save(SeenPhoto(path: visit.key, state: state, looker: looker, tags: report.tags))
    }

}
