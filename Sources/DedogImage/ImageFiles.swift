import Foundation
import DedogFiles

/// Finds images among files and folders by their content, not their names.
public enum ImageFiles {
    /// Paths are as the caller gave them, with the part below a given folder appended (relative stays relative).
    public enum Found: Sendable, Equatable {
        /// A JPEG or PNG file.
        case image(String)
        /// A file that is not an image (or cannot be opened), with the reason; callers usually warn and go on.
        case skipped(String, reason: String)
    }

    /// Calls `visit` for every file given and every file under every folder given (recursively, in sorted order,
    /// skipping hidden files and folders such as `.DS_Store`), as it goes. Files named directly are always
    /// reported, as `.image` or `.skipped`; inside folders, files that are not images are reported as `.skipped`.
    /// Symbolic links to folders are not followed, so link loops cannot make the walk endless.
    public static func find(_ paths: [String], visit: (Found) -> Void) {
        let fm = FileManager.default
        for path in paths {
            let url = URL(fileURLWithPath: path)
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isFolder) else {
                visit(.skipped(path, reason: whyMissing(path)))
                continue
            }
            if !isFolder.boolValue {
                visit(classify(path))
                continue
            }
            let unlisted = Unlisted()
            guard let walker = fm.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey],
                                             options: [.skipsHiddenFiles], errorHandler: { failed, _ in
                                                 unlisted.urls.append(failed)
                                                 return true
                                             }) else {
                visit(.skipped(path, reason: "cannot list the folder"))
                continue
            }
            var files: [URL] = []
            for case let file as URL in walker {
                let values = try? file.resourceValues(forKeys: [.isRegularFileKey])
                if values?.isRegularFile == true { files.append(file) }
            }
            // Shown as the given folder plus the path below it.
            let root = url.standardizedFileURL.path
            let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
            func shown(_ file: URL) -> String {
                let full = file.standardizedFileURL.path
                return full.hasPrefix(root + "/") ? folder + full.dropFirst(root.count) : full
            }
            for failed in unlisted.urls { visit(.skipped(shown(failed), reason: "cannot list the folder")) }
            for file in files.map(shown).sorted() { visit(classify(file)) }
        }
    }

    /// Why a path that `fileExists` denies is not there: a link loop and a dangling link say so.
    static func whyMissing(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return "no such file or folder" }
        return stat(path, &info) != 0 && errno == ELOOP ? FileError.linkLoop.description
            : "no such file (it is a symbolic link to a missing file)"
    }

    private final class Unlisted: @unchecked Sendable { var urls: [URL] = [] }

    /// Whether the file at `path` starts like a JPEG or PNG.
    static func classify(_ path: String) -> Found {
        let head: [UInt8]
        do {
            head = try FileReader.head(path, count: 64)
        } catch {
            return .skipped(path, reason: error.description)
        }
        if head.isEmpty { return .skipped(path, reason: "empty file") }
        if ImageFormat.detect(head) != nil { return .image(path) }
        return .skipped(path, reason: ImageFormat.whyUnsupported(ImageFormat.recognise(head)))
    }
}
