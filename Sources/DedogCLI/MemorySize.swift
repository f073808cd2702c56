import ArgumentParser
import Dedog

/// A `--max-memory` value: bytes, or a number with K, M or G (powers of 1024), e.g. `512M`, `1.5G`.
public struct MemorySize: ExpressibleByArgument, Equatable {
    public let bytes: Int

    public init(bytes: Int) { self.bytes = bytes }

    public init?(argument: String) {
        var text = argument.uppercased()
        if text.hasSuffix("B") { text.removeLast() }
        let scale: Double
        switch text.last {
        case "K": scale = 1024
        case "M": scale = 1024 * 1024
        case "G": scale = 1024 * 1024 * 1024
        default: scale = 1
        }
        if scale != 1 { text.removeLast() }
        guard let value = Double(text), value.isFinite, value > 0, value * scale < 1e18 else { return nil }
        bytes = Int(value * scale)
    }
}
