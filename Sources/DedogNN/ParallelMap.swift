import Dispatch
import Foundation

/// `body(i)` for i in 0..<count on up to `threads` threads, the results in order. The calling thread takes part and
/// the other workers are Dispatch's global queue's; each takes the next index not yet taken, so that uneven jobs
/// balance, and a worker that starts late (every core busy) finds nothing left and returns. Unlike
/// `concurrentPerform`, which runs serially inside another `concurrentPerform`, this also spreads a map made inside a
/// map (a model's backbones built side by side, each quantizing its layers side by side) over idle cores.
public func parallelMap<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Int) -> T) -> [T] {
    if threads <= 1 || count <= 1 { return (0..<count).map(body) }
    return withoutActuallyEscaping(body) { body in
        let work = ParallelWork<T>(count: count, body: body)
        let group = DispatchGroup()
        for _ in 1..<min(threads, count) {
            DispatchQueue.global().async(group: group) { work.run() }
        }
        work.run()
        group.wait()
        // Every worker has returned; the blocks Dispatch may still hold keep only `work`, now without `body`.
        return work.finish()
    }
}

/// `parallelMap`'s shared state: the next index, the results, and the body until the map is over.
private final class ParallelWork<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var values: [T?]
    private var body: (@Sendable (Int) -> T)?

    init(count: Int, body: @escaping @Sendable (Int) -> T) {
        values = Array(repeating: nil, count: count)
        self.body = body
    }

    /// Takes indices until none is left.
    func run() {
        while let (i, body) = claim() {
            let value = body(i)
            lock.lock()
            values[i] = value
            lock.unlock()
        }
    }

    private func claim() -> (Int, @Sendable (Int) -> T)? {
        lock.lock()
        defer { lock.unlock() }
        guard next < values.count, let body else { return nil }
        next += 1
        return (next - 1, body)
    }

    /// Every result (each index was taken once and its value stored before `run` returned), and the body released.
    func finish() -> [T] {
        lock.lock()
        defer { lock.unlock() }
        body = nil
        return values.map { $0! }
    }
}
