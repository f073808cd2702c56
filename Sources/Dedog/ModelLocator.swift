import Foundation

/// Where dedog finds its model when none is given: `$DEDOG_MODEL`, then `share/dedog/` beside an installed
/// binary, then `models/` in the source checkout the binary was built in. A trained breed model is preferred
/// over the plain ImageNet one.
public enum ModelLocator {
    public static let breedsFileName = "dedog-breeds.safetensors"
    public static let baseFileName = "efficientnet-lite0-imagenet.safetensors"
    public static let fileNames = [breedsFileName, baseFileName]

    /// The folders searched, in order.
    public static func searchFolders(executable: URL = URL(fileURLWithPath: CommandLine.arguments.first ?? ".")) -> [URL] {
        let exe = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        var folders = [exe.appendingPathComponent("../share/dedog").standardized]
        var dir = exe
        for _ in 0..<5 {  // .build/<triple>/release/dedog → checkout root
            folders.append(dir.appendingPathComponent("models"))
            dir = dir.deletingLastPathComponent()
        }
        return folders
    }

    /// The model to classify with; with `preferring`, that file name is looked for first (training wants the
    /// plain pretrained base, not a trained model).
    public static func defaultModel(preferring preferred: String? = nil,
                                    environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ClassifierError) -> URL {
        if preferred == nil, let path = environment["DEDOG_MODEL"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let folders = searchFolders()
        let names = preferred.map { [$0] + fileNames.filter { $0 != preferred } } ?? fileNames
        for folder in folders {
            for name in names {
                let url = folder.appendingPathComponent(name)
                if FileManager.default.isReadableFile(atPath: url.path) { return url }
            }
        }
        throw .noModel(searched: folders.map(\.path))
    }
}
