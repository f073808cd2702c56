import Dedog
import Synchronization

/// Admission and the inference threads. At most `workers + queue` requests hold a slot at once (a request takes
/// one before its body is read, so bodies waiting in memory are bounded too); photos are classified on `workers`
/// threads of the server's own (`ThreadPool`), never on Swift's cooperative pool, which a forward pass of tens of
/// milliseconds would starve.
final class InferenceQueue: Sendable {
    let workers: Int
    let capacity: Int
    private let admitted = Mutex(0)
    private let threads: ThreadPool

    init(workers: Int, queue: Int) {
        self.workers = max(1, workers)
        capacity = self.workers + max(0, queue)
        threads = ThreadPool(threads: self.workers, name: "dedog-inference")
    }

    /// A slot for one request, or false when every slot is taken (answer 503). Give it back with `release()`.
    func admit() -> Bool {
        admitted.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
    }

    func release() {
        admitted.withLock { $0 -= 1 }
    }

    /// Requests holding a slot that are not being classified (reading their body, or waiting for a thread).
    var waiting: Int { max(0, admitted.withLock { $0 } - threads.busy) }

    /// Runs `work` on an inference thread and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await threads.run(work)
    }

    /// Lets the threads finish what is queued, then end.
    func shutdown() {
        threads.shutdown()
    }
}
