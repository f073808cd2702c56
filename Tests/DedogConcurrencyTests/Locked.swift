import Foundation

/// A value behind an `NSLock`, for tests that count what threads do. `NSLock` is a pthread mutex, which
/// ThreadSanitizer (`scripts/asan-test`) sees as a lock; `Synchronization.Mutex` waits on a futex in the standard
/// library, built without the sanitizer, so every access to a value behind it is reported as a race.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
