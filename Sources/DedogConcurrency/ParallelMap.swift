import Dispatch
import Foundation

/// `body(i)` for i in 0..<count on up to `threads` threads, the results in order. The calling thread takes part and
/// the other workers are Dispatch's global queue's; each takes the next index not yet taken, so that uneven jobs
/// balance. Unlike `concurrentPerform`, which runs serially inside another `concurrentPerform`, this also spreads a
/// map made inside a map (a model's backbones built side by side, each quantizing its layers side by side) over
/// cores that come free.
/// The caller waits only for the workers that have started: one still waiting for a thread when the work runs out
/// (every pool thread busy, perhaps waiting in a map of its own) is not waited for, and does nothing when it starts.
/// Waiting for it made one process in six stall for a second until Dispatch added a thread.
public func parallelMap<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Int) -> T) -> [T] {
    if threads <= 1 || count <= 1 { return (0..<count).map(body) }
    return withoutActuallyEscaping(body) { body in
        let work = ParallelWork<T>(count: count, body: body)
        for _ in 1..<min(threads, count) {
            DispatchQueue.global().async { work.run() }
        }
        work.run()
        return work.finish()
    }
}

/// `parallelMap`'s shared state: the next index, the results, the workers inside, and the body until the map is over.
private final class ParallelWork<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var next = 0
    private var values: [T?]
    private var body: (@Sendable (Int) -> T)?
    private var working = 0  // workers between their start and their end, the caller's included
    private var closed = false  // the caller has finished: a worker starting now does nothing

    init(count: Int, body: @escaping @Sendable (Int) -> T) {
        values = Array(repeating: nil, count: count)
        self.body = body
    }

    /// Takes indices until none is left.
    func run() {
        condition.lock()
        guard !closed else {
            condition.unlock()
            return
        }
        working += 1
        while next < values.count, let body {
            let i = next
            next += 1
            condition.unlock()
            let value = body(i)
            condition.lock()
            values[i] = value
        }
        working -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Every result, once the workers inside have left (each index was taken once and its value stored before its
    /// worker left); the body is released and later workers do nothing.
    func finish() -> [T] {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        while working > 0 { condition.wait() }
        body = nil
        return values.map { $0! }
    }
}
