import Foundation

/// `body(i)` for i in 0..<count on up to `threads` threads (the calling thread and threads of its own, each taking
/// the next index when done with one), the results in order. Each result is stored by the one worker that
/// computed it. Its own threads rather than Dispatch's: a map inside a map (a model's backbones loaded side by
/// side, each quantizing its layers side by side) would run serially on Dispatch, which narrows nested
/// `concurrentPerform`s to the width left by the outer one.
public func parallelMap<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Int) -> T) -> [T] {
    if threads <= 1 || count <= 1 { return (0..<count).map(body) }
    let results = ParallelResults<T>(count: count)
    let workers = min(threads, count)
    let finished = DispatchGroup()
    withoutActuallyEscaping(body) { body in
        // The threads hold the job, not `body`: a finished Thread may keep its block a while, and `body` must not
        // outlive this call.
        let job = Job(body)
        let work: @Sendable () -> Void = {
            while let i = results.next(), let body = job.body { results.set(i, body(i)) }
        }
        for _ in 1..<workers {
            finished.enter()
            Thread { work(); finished.leave() }.start()
        }
        work()
        finished.wait()
        job.body = nil
    }
    return results.all
}

/// `parallelMap`'s body, for its threads; emptied when every worker is done.
private final class Job<T>: @unchecked Sendable {
    var body: (@Sendable (Int) -> T)?
    init(_ body: @escaping @Sendable (Int) -> T) { self.body = body }
}

/// `parallelMap`'s next index and results, under a lock.
private final class ParallelResults<T: Sendable>: @unchecked Sendable {
    private var values: [T?]
    private var taken = 0
    private let lock = NSLock()

    init(count: Int) { values = Array(repeating: nil, count: count) }

    /// The next index no worker has taken, if any is left.
    func next() -> Int? {
        lock.lock(); defer { lock.unlock() }
        guard taken < values.count else { return nil }
        taken += 1
        return taken - 1
    }

    func set(_ i: Int, _ value: T) {
        lock.lock(); defer { lock.unlock() }
        values[i] = value
    }

    /// Every result; each index was set exactly once by the time every worker finished.
    var all: [T] {
        lock.lock(); defer { lock.unlock() }
        return values.map { $0! }
    }
}
