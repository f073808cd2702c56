import Dedog
import DedogFiles
import Foundation

/// Results go to stdout; warnings, errors and progress to stderr.
///
/// Text from outside (file names, catalogue strings) may hold terminal control sequences; they are shown escaped,
/// never sent to the terminal. If stdout cannot be written (a full disk, `> /dev/full`), dedog says so on stderr
/// and exits with status 3 rather than crashing or working on with nowhere to put the results. (A closed pipe,
/// as with `| head`, ends dedog by SIGPIPE, as it does any Unix tool.)
public enum Terminal {
    public static func out(_ line: String) {
        write(STDOUT_FILENO, visible(line, keepingNewlines: true) + "\n")
    }

    public static func warning(_ message: String) {
        write(STDERR_FILENO, "dedog: warning: \(visible(message))\n")
    }

    public static func progress(_ message: String) {
        write(STDERR_FILENO, "\(visible(message))\n")
    }

    public static func error(_ message: String) {
        write(STDERR_FILENO, "dedog: error: \(visible(message))\n")
    }

    /// `text` with control characters (ESC and the rest of C0 and C1, DEL) written as `\u{1B}`; tabs stay.
    static func visible(_ text: String, keepingNewlines: Bool = false) -> String {
        func isControl(_ u: Unicode.Scalar) -> Bool {
            (u.value < 0x20 && u != "\t" && !(keepingNewlines && u == "\n")) || (0x7F...0x9F).contains(u.value)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            if isControl(u) {
                out.append(contentsOf: "\\u{\(String(u.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(u)
            }
        }
        return String(out)
    }

    /// Writes all of `text`; on failure, reports and exits (status 3).
    private static func write(_ fd: Int32, _ text: String) {
        let failure: Int32? = Array(text.utf8).withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
                if n > 0 {
                    done += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return n < 0 ? errno : EIO
                }
            }
            return nil
        }
        guard let failure else { return }
        if fd == STDOUT_FILENO {
            let message = "dedog: error: cannot write the results to standard output (\(FileError.from(errno: failure))).\n"
            _ = Array(message.utf8).withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress!, $0.count) }
        }
        exit(Status.outputFailed.rawValue)
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
