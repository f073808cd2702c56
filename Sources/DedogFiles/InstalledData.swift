import Foundation

/// Where an installed dedog keeps its data: `share/dedog/` beside the `bin/` that holds the binary, as
/// scripts/install lays it out (`/usr/local/bin/dedog` reads `/usr/local/share/dedog/`).
public enum InstalledData {
    /// The running program's file with symbolic links resolved. On Linux this is /proc/self/exe, so that a `dedog`
    /// found through PATH, or through a link to it, still knows where it lives.
    public static let executable: URL = {
        let proc = URL(fileURLWithPath: "/proc/self/exe")
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: proc.path) {
            return URL(fileURLWithPath: target)
        }
        return (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments.first ?? "."))
            .resolvingSymlinksInPath()
    }()

    /// The folder holding the binary.
    public static var binaryFolder: URL { executable.deletingLastPathComponent() }

    /// `<prefix>/share/dedog` for a binary in `<prefix>/bin`.
    public static var sharedFolder: URL { binaryFolder.appendingPathComponent("../share/dedog").standardized }
}
