import Foundation

/// Threads of dedog's own that run jobs in the order they were given, for work that blocks (a forward pass of
/// tens of milliseconds, a wait for a workspace) and so must not run on Swift's cooperative pool or Dispatch's few
/// threads, which it would starve.
///
/// Guarantees:
/// - Jobs start in the order given, at most `threads` at once; each runs exactly once, unless the pool was shut
///   down before it was given (it then runs at once on the caller's thread, so that no job is lost).
/// - `run` hands a job's result back to an awaiting task through a lock, which orders the writes of the job
///   before the task's reads (ThreadSanitizer sees that ordering; a continuation resumed from a foreign thread
///   alone it does not).
/// - `shutdown()` lets the threads finish what is queued, then end; the pool shuts down when it is released.
/// - Idle threads sleep on a condition: nothing spins.
public final class ThreadPool: @unchecked Sendable {
    public let threads: Int
    private let condition = NSCondition()
    /// Waiting jobs from `next` on; taken ones are nil until the front is dropped (guarded by `condition`, as is
    /// everything below).
    private var jobs: [(@Sendable () -> Void)?] = []
    private var next = 0
    private var running = 0
    private var stopping = false

    /// `threads` threads named `name-0`, `name-1`, … with stacks of `stackSize` bytes.
    public init(threads: Int, name: String, stackSize: Int = 4 << 20) {
        self.threads = max(1, threads)
        for i in 0..<self.threads {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(i)"
            thread.stackSize = stackSize
            thread.start()
        }
    }

    deinit { shutdown() }

    /// Queues `job`.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            job()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `work` on one of the threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let result = Handoff<T>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            submit {
                result.put(work())
                continuation.resume()
            }
        }
        return result.take()
    }

    /// Jobs being run right now.
    public var busy: Int {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Lets the threads finish what is queued, then end.
    public func shutdown() {
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

/// One value passed from a pool thread to the task awaiting it.
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
        // `run` takes only after the job has put (the continuation resumes after `put`).
        guard let value else { fatalError("ThreadPool.run: a result taken before it was put") }
        return value
    }
}
