/// A 128-bit non-cryptographic hash (two independent 64-bit FNV-1a lanes with different offsets and a final
/// mix) used to key cached features by file content. Collisions among a user's photos are vanishingly unlikely;
/// the cache also stores and checks each entry's length, so a damaged entry is detected, not trusted.
public struct ContentHash: Sendable {
    private var a: UInt64 = 0xCBF2_9CE4_8422_2325
    private var b: UInt64 = 0x6C62_272E_07BB_0142
    private var count: UInt64 = 0

    public init() {}

    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 &+ 0x9E37_79B9
        }
        count &+= UInt64(bytes.count)
    }

    public mutating func update(_ text: String) { update(Array(text.utf8)) }

    /// 32 hex digits.
    public var hex: String {
        func mix(_ x: UInt64) -> UInt64 {
            var z = x ^ count
            z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
            z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
            return z ^ (z >> 33)
        }
        return [mix(a), mix(b)].map { v in
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }

    public static func of<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var h = ContentHash()
        h.update(bytes)
        return h.hex
    }
}
