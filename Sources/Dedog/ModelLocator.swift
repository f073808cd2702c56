import Foundation
import DedogFiles
import DedogNN

/// Where dedog finds its models. A model is given by file, or by the name of a bundled one (`ModelLocator.bundled`);
/// bundled files are looked for in `share/dedog/` beside an installed binary, then in `models/` of the source
/// checkout the binary was built in.
public enum ModelLocator {
    /// A model that ships with dedog.
    public struct Bundled: Sendable, Equatable {
        /// What users type: `dedog classify --model fast`.
        public let name: String
        public let fileName: String
        /// One line for `--help` and listings.
        public let summary: String
    }

    /// The bundled models, the default first. The ImageNet-only bases are what `dedog train --backbone` starts from.
    public static let bundled: [Bundled] = [
        Bundled(name: "default", fileName: "dedog-breeds.safetensors",
                summary: "133 breeds, EfficientNet-Lite1 and Lite2 combined: the most accurate"),
        Bundled(name: "fast", fileName: "dedog-breeds-fast.safetensors",
                summary: "133 breeds, EfficientNet-Lite0 alone: about 3 times faster, 3 to 4 points less accurate"),
        Bundled(name: "lite0", fileName: "efficientnet-lite0-imagenet.safetensors",
                summary: "EfficientNet-Lite0's ImageNet classifier (a base for training)"),
        Bundled(name: "lite1", fileName: "efficientnet-lite1-imagenet.safetensors",
                summary: "EfficientNet-Lite1's ImageNet classifier (a base for training)"),
        Bundled(name: "lite2", fileName: "efficientnet-lite2-imagenet.safetensors",
                summary: "EfficientNet-Lite2's ImageNet classifier (a base for training)"),
    ]

    /// The dog detector files found (`dog-detector-lite1.safetensors`, …), one per backbone they were trained for:
    /// the first of the search folders that has it; `dedog train` puts the one of its model's first backbone into
    /// the model.
    public static func detectors() -> [URL] {
        let folders = searchFolders()
        return Backbone.all.compactMap { b in
            let name = detectorFileName(b.description)
            return folders.map { $0.appendingPathComponent(name) }.first { FileManager.default.fileExists(atPath: $0.path) }
        }
    }

    /// The detector file of backbone `short` (`lite1`).
    public static func detectorFileName(_ short: String) -> String { "dog-detector-\(short).safetensors" }

    /// The folders searched, in order.
    public static func searchFolders() -> [URL] {
        var folders = [InstalledData.sharedFolder]
        var dir = InstalledData.binaryFolder
        for _ in 0..<5 {  // .build/<triple>/release/dedog → checkout root
            folders.append(dir.appendingPathComponent("models"))
            dir = dir.deletingLastPathComponent()
        }
        return folders
    }

    /// Whether `argument` names a bundled model rather than a file (`./fast` is a file).
    public static func isName(_ argument: String) -> Bool {
        bundled.contains { $0.name == argument }
    }

    /// The model `argument` stands for: a bundled model by name (`fast`), otherwise a file path (`./fast` for a
    /// file that happens to have a bundled model's name). Nil means the default: `DEDOG_MODEL` in the front end's
    /// `environment` (the library reads none), else `default`.
    public static func model(_ argument: String?, environment: [String: String]) throws(ClassifierError) -> URL {
        if let argument {
            return isName(argument) ? try url(ofBundled: argument) : URL(fileURLWithPath: argument)
        }
        if let path = environment["DEDOG_MODEL"], !path.isEmpty {
            return isName(path) ? try url(ofBundled: path) : URL(fileURLWithPath: path)
        }
        return try url(ofBundled: "default")
    }

    /// Whether `url` is one of the bundled model files, however it is reached (another path, a symbolic or hard
    /// link): dedog never changes those. A copy is a file of its own.
    public static func isBundledFile(_ url: URL) -> Bool {
        guard let target = identity(url.path) else { return false }
        return searchFolders().contains { folder in
            bundled.contains { identity(folder.appendingPathComponent($0.fileName).path) == target }
        }
    }

    /// The device and inode of the file at `path` (after links), or nil when there is none.
    private static func identity(_ path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    /// The file of the bundled model called `name`.
    public static func url(ofBundled name: String) throws(ClassifierError) -> URL {
        guard let model = bundled.first(where: { $0.name == name }) else {
            throw .unknownModel(name: name, known: bundled.map(\.name))
        }
        let folders = searchFolders()
        for folder in folders {
            let url = folder.appendingPathComponent(model.fileName)
            if FileManager.default.isReadableFile(atPath: url.path) { return url }
        }
        throw .noModel(name: name, searched: folders.map { $0.appendingPathComponent(model.fileName).path })
    }
}
