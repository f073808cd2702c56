import DedogFiles
import DedogImage

/// Photos as they arrive in folders, for `dedog tag --watch`: each file added or changed under them, once its
/// writer has closed it and it has settled (`FolderWatch`), found as the folder walk finds photos (by content;
/// sidecars, dedog's own among them, passed over).
public final class PhotoWatch {
    private let watch: FolderWatch
    /// Seconds a file must be left alone after its last change before it is looked at.
    public let settle: Double

    /// Watches `folders` (each must be a folder) and every folder under them.
    public init(_ folders: [String], settle: Double = 1) throws(ClassifierError) {
        do throws(FileError) { watch = try FolderWatch(folders) } catch { throw .watch(error) }
        self.settle = settle
    }

    /// The photos (and other files, `.skipped`) that arrived or changed, waiting at most `timeout` seconds for one.
    public func next(timeout: Double) -> [PhotoFiles.Found] {
        var found: [PhotoFiles.Found] = []
        let paths = watch.next(timeout: timeout, settle: settle).filter { !PhotoFiles.isSidecar($0) }
        PhotoFiles.find(paths) { found.append($0) }
        return found
    }
}
