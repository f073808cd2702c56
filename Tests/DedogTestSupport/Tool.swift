import Foundation

/// A program of the system run to its end: its exit status and standard output (standard input empty, standard
/// error dropped). For tools the tests lean on (openssl, curl, script), not for dedog itself.
public enum Tool {
    public static func run(_ path: String, _ arguments: [String],
                           environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
