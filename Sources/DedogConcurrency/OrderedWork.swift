import Foundation

/// Runs jobs on other threads, at most `concurrency` at once, and hands their results back in the order the jobs
/// were given, on the thread that gives them: for a front end that classifies many photos and reports each answer
/// in turn (`dedog classify` over a folder) while the next photos are being worked on.
///
/// ```swift
/// let work = OrderedWork<Classification?>(concurrency: 2)
/// for url in photos {
///     work.submit({ try? classifier.classify(contentsOf: url) }) { print($0 as Any) }
/// }
/// work.finish { print($0 as Any) }   // the rest, in order
/// ```
///
/// Guarantees: one thread submits and receives; the jobs run on a `ThreadPool` of `concurrency` threads. A job's
/// result is delivered on the submitting thread, once every job given before it has been delivered; `finish`
/// delivers every result still pending. At most `2 × concurrency` results wait to be delivered (`submit` sleeps on
/// the oldest past that: nothing spins).
public final class OrderedWork<Value: Sendable> {
    /// How many jobs run at once.
    public let concurrency: Int
    /// Jobs given and not yet delivered, oldest first (at most `2 × concurrency`, so that finished jobs behind a
    /// slow one do not hold up the next ones for long).
    private var pending: [Slot] = []
    /// Threads of their own, not Dispatch's pool, whose few threads a job waiting inside it (for a workspace, say)
    /// would hold up.
    private let jobs: ThreadPool

    /// One job's result: written once by the thread that ran it, read by the receiving thread after `done`.
    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var value: Value?
    }

    public init(concurrency: Int) {
        self.concurrency = max(1, concurrency)
        jobs = ThreadPool(threads: self.concurrency, name: "dedog-work")
    }

    /// Queues `job` to run once fewer than `concurrency` jobs run. First hands `deliver` the results that are
    /// ready and next in order, waiting for the oldest when `2 × concurrency` jobs are pending.
    public func submit(_ job: @escaping @Sendable () -> Value, deliver: (Value) -> Void) {
        while let oldest = pending.first {
            if pending.count >= 2 * concurrency {
                oldest.done.wait()
            } else if oldest.done.wait(timeout: .now()) != .success {
                break
            }
            take(deliver)
        }
        let slot = Slot()
        pending.append(slot)
        jobs.submit {
            slot.value = job()
            slot.done.signal()
        }
    }

    /// Waits for every job given and hands `deliver` their results, in order.
    public func finish(deliver: (Value) -> Void) {
        while let oldest = pending.first {
            oldest.done.wait()
            take(deliver)
        }
    }

    /// Delivers the oldest pending job's result, which has finished (its `done` was waited for).
    private func take(_ deliver: (Value) -> Void) {
        let slot = pending.removeFirst()
        if let value = slot.value { deliver(value) }
    }
}
