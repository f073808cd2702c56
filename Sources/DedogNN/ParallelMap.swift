import Dispatch
import Foundation

/// `body(i)` for i in 0..<count on up to `threads` threads (striding, so neighbours go to different threads), the
/// results in order. Each result is stored by the one worker that computed it.
public func parallelMap<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Int) -> T) -> [T] {
    if threads <= 1 || count <= 1 { return (0..<count).map(body) }
    let results = ParallelResults<T>(count: count)
    let workers = min(threads, count)
    DispatchQueue.concurrentPerform(iterations: workers) { w in
        for i in stride(from: w, to: count, by: workers) { results.set(i, body(i)) }
    }
    return results.all
}

/// `parallelMap`'s results, written under a lock.
private final class ParallelResults<T: Sendable>: @unchecked Sendable {
    private var values: [T?]
    private let lock = NSLock()

    init(count: Int) { values = Array(repeating: nil, count: count) }

    func set(_ i: Int, _ value: T) {
        lock.lock(); defer { lock.unlock() }
        values[i] = value
    }

    /// Every result; each index was set exactly once by the time `concurrentPerform` returned.
    var all: [T] {
        lock.lock(); defer { lock.unlock() }
        return values.map { $0! }
    }
}
