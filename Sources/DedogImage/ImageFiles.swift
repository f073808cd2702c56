import Foundation
import DedogFiles

/// Finds images among files and folders by their content, not their names.
public enum ImageFiles {
    /// Paths are as the caller gave them, with the part below a given folder appended (relative stays relative).
    public enum Found: Sendable, Equatable {
        /// A file in one of the formats `ImageDecoder` reads.
        case image(String)
        /// A file that is not an image (or cannot be opened), with the reason; callers usually warn and go on.
        case skipped(String, reason: String)

        /// The file's path.
        public var path: String {
            switch self {
            case let .image(path), let .skipped(path, _): path
            }
        }
    }

    /// Calls `visit` for every file given and every file under every folder given (recursively, in sorted order,
    /// skipping hidden files and folders such as `.DS_Store`), as it goes. Files named directly are always
    /// reported, as `.image` or `.skipped`; inside folders, files that are not images are reported as `.skipped`,
    /// except photos' sidecars, which are passed over (`isSidecar`).
    /// Symbolic links to folders are not followed, so link loops cannot make the walk endless (see `FolderWalk`).
    /// Files `known` vouches for (a record of photos looked at says they were photos and have not changed since) are
    /// reported as `.image` without being opened.
    public static func find(_ paths: [String], known: (String) -> Bool = { _ in false }, visit: (Found) -> Void) {
        let fm = FileManager.default
        for path in paths {
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isFolder) else {
                visit(.skipped(path, reason: FolderWalk.whyMissing(path)))
                continue
            }
            if !isFolder.boolValue {
                visit(known(path) ? .image(path) : classify(path))
                continue
            }
            let listing = FolderWalk.list(path)
            for problem in listing.problems { visit(.skipped(problem.path, reason: problem.reason)) }
            for file in listing.files where !isSidecar(file) { visit(known(file) ? .image(file) : classify(file)) }
        }
    }

    /// Whether `path` is a photo's metadata companion, which a folder of photos is expected to hold and a walk
    /// passes over without a word: XMP sidecars (`photo.jpg.xmp`, `photo.xmp`, as `dedog tag` and the photo managers
    /// write them) and Apple's edit files (`IMG_0042.AAE`).
    public static func isSidecar(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".xmp") || lower.hasSuffix(".aae")
    }

    /// Whether the file at `path` starts like an image `ImageDecoder` reads.
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
