import Foundation

/// Results go to stdout; warnings, errors and progress to stderr.
enum Terminal {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("dedog: warning: \(message)\n".utf8))
    }

    static func progress(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("dedog: error: \(message)\n".utf8))
    }
}
