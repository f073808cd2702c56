import Foundation

/// Admission and the inference threads. At most `workers + queue` requests hold a slot at once (a request takes
/// one before its body is read, so bodies waiting in memory are bounded too); photos are classified on `workers`
/// threads of the server's own, never on Swift's cooperative pool, which a forward pass of tens of milliseconds
/// would starve.
final class InferenceQueue: @unchecked Sendable {
    let workers: Int
    let capacity: Int
    private let condition = NSCondition()
    private var admitted = 0  // guarded by `condition`, as is everything below
    private var running = 0
    /// Waiting jobs from `next` on; taken ones are nil (they hold the request's photos) until the front is dropped.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var next = 0
    private var stopping = false

    init(workers: Int, queue: Int) {
        self.workers = max(1, workers)
        capacity = self.workers + max(0, queue)
        for i in 0..<self.workers {
            // The threads hold the queue until `shutdown()` lets them end (the service calls it when it goes).
            let thread = Thread { self.work() }
            thread.name = "dedog-inference-\(i)"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// A slot for one request, or nil when every slot is taken (answer 503). Give it back with `release()`.
    func admit() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard admitted < capacity, !stopping else { return false }
        admitted += 1
        return true
    }

    func release() {
        condition.lock()
        admitted -= 1
        condition.unlock()
    }

    /// Requests holding a slot that are not being classified (reading their body, or waiting for a thread).
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return admitted - running
    }

    /// Runs `work` on an inference thread and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        // The result crosses from our thread to the awaiting task through a lock, which ThreadSanitizer sees as
        // the ordering it is (a continuation's resume from a foreign thread it does not).
        let result = Handoff<T>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            jobs.append {
                result.put(work())
                continuation.resume()
            }
            condition.signal()
            condition.unlock()
        }
        return result.take()
    }

    /// Lets the threads finish what is queued, then end.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count && !stopping { condition.wait() }
            if next == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[next]
            jobs[next] = nil
            next += 1
            // Under steady load the queue never empties: drop the taken front now and then, or it grows forever.
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            } else if next >= 64 && next * 2 >= jobs.count {
                jobs.removeFirst(next)
                next = 0
            }
            running += 1
            condition.unlock()
            job?()
            condition.lock()
            running -= 1
            condition.unlock()
        }
    }
}

/// One value passed from an inference thread to the task awaiting it.
private final class Handoff<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?  // guarded by `lock`

    func put(_ value: T) {
        lock.lock()
        self.value = value
        lock.unlock()
    }

    func take() -> T {
        lock.lock()
        defer { lock.unlock() }
        return value!
    }
}
