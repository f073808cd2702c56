/// One of N parts of a set of inputs, so that N machines (a Kubernetes Indexed Job's pods, say) each classify
/// one part and together every input exactly once: an input belongs to part `index` when the FNV-1a hash of its
/// path, modulo `count`, is `index`. Every machine given the same paths makes the same split, with no coordination.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 0-based, as `JOB_COMPLETION_INDEX` is.
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `K/N`, e.g. `0/4` … `3/4`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: k, count: n)
    }

    public func contains(_ path: String) -> Bool {
        Int(Self.hash(path) % UInt64(count)) == index
    }

    /// 64-bit FNV-1a of the path's UTF-8 bytes: stable across machines, runs and Swift versions (unlike `Hasher`).
    static func hash(_ path: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    public var description: String { "\(index)/\(count)" }
}
