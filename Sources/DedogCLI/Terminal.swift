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

extension CommandLine {
    /// The arguments that are not valid UTF-8, as Swift repaired them (which is what the parser hands us):
    /// such a path names no file, and the message should say why.
    static let invalidUTF8Arguments: Set<String> = {
        var found = Set<String>()
        for i in 0..<Int(argc) {
            guard let argument = unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                                            count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { found.insert(String(decoding: bytes, as: UTF8.self)) }
        }
        return found
    }()
}
