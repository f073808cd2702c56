/// Bytes that start on a 64-byte boundary, written once when made and only read afterwards: the packed weights of
/// the 8-bit kernels, which load them 64 bytes at a time. An array's storage starts 16 bytes into a line, so that
/// every such load would straddle two cache lines.
final class AlignedBytes: @unchecked Sendable {
    // Sendable: the memory is written only inside `init`, before the object is shared, and freed by `deinit`.
    let count: Int
    private let base: UnsafeMutableRawPointer

    static let alignment = 64

    /// `fill` writes all `count` bytes.
    init(count: Int, fill: (UnsafeMutableRawPointer) -> Void) {
        self.count = count
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: Self.alignment)
        fill(base)
    }

    deinit { base.deallocate() }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy as an array, for tests that compare layouts.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
