import Foundation
import Synchronization

/// `parts − 1` threads that run one job at a time, each job split into `parts` parts, the caller running part 0
/// itself: what an inference session runs a forward pass's layers on (about 50 jobs of 20–500 µs each).
///
/// Guarantees:
/// - `run(body)` returns once `body(p)` has returned for every part p in 0..<parts, each called exactly once, part 0
///   on the calling thread; what the parts wrote is visible to the caller afterwards. One `run` at a time.
/// - Waking a sleeping thread for each job would cost more than many jobs are worth, so between jobs a worker
///   keeps looking for the next one for at most `workerBudget`, and the caller looks for the workers' end for at
///   most `callerBudget` (the parts of one job end close together), before either sleeps on a condition. While
///   they look, they yield their core (`sched_yield`) to any other thread that is ready to run: they never hold a
///   core another thread could use.
/// - The threads end when the pool does.
public final class WorkerPool: Sendable {
    public let parts: Int
    private let state: State

    /// How long a worker keeps looking for the next job before it sleeps.
    public static let workerBudget: Duration = .microseconds(200)
    /// How long the caller keeps looking for the workers' end of a job before it sleeps.
    public static let callerBudget: Duration = .milliseconds(2)

    public init(parts: Int) {
        self.parts = max(1, parts)
        state = State()
        for part in 1..<self.parts {
            let state = self.state
            let thread = Thread { state.work(part) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    deinit {
        state.stop()
    }

    /// Runs `body(part)` for every part and returns when all have returned.
    public func run(_ body: @escaping @Sendable (Int) -> Void) {
        state.start(body, workers: parts - 1)
        body(0)
        state.finish()
    }

    /// Whether `condition` became true within `budget`, yielding the core between looks.
    static func lookBriefly(for budget: Duration, until condition: () -> Bool) -> Bool {
        let clock = ContinuousClock(), deadline = clock.now.advanced(by: budget)
        while !condition() {
            if clock.now >= deadline { return false }
            sched_yield()
        }
        return true
    }

    /// What the workers share with the pool; they keep it alive until they have left their loop.
    ///
    /// A job reaches a worker without a lock: the caller writes `job`, then raises `generation` (releasing), and a
    /// worker that sees the new generation (acquiring) reads `job`; the caller writes `job` again only once every
    /// worker has counted itself out of `remaining`, after its read. The lock and the condition are only for
    /// sleeping: a worker that once took the lock to read each job could find the caller still holding it and go to
    /// sleep on the mutex, a futex sleep and wake-up per layer, which on a virtual machine cost more than many layers.
    private final class State: @unchecked Sendable {
        private let generation = Atomic<Int>(0)
        private let remaining = Atomic<Int>(0)
        private let stopping = Atomic<Bool>(false)
        /// Workers asleep on the condition, or about to be: the caller wakes them only when there are some.
        private let sleepers = Atomic<Int>(0)
        /// The caller sleeps, waiting for the last worker of the job to wake it.
        private let callerSleeps = Atomic<Bool>(false)
        private let condition = NSCondition()
        /// Written by the caller only while no worker runs a job (see above).
        private var job: (@Sendable (Int) -> Void)?

        func start(_ body: @escaping @Sendable (Int) -> Void, workers: Int) {
            job = body
            remaining.store(workers, ordering: .sequentiallyConsistent)
            raiseGeneration()
        }

        /// Publishes the job (or the stop) and wakes the workers that sleep. A worker counts itself in `sleepers`
        /// before it looks at the generation a last time, and the caller looks at `sleepers` after it raised the
        /// generation (both sequentially consistent), so one of the two sees the other.
        private func raiseGeneration() {
            generation.add(1, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                condition.lock()
                condition.broadcast()
                condition.unlock()
            }
        }

        /// Waits until every worker has run its part, then forgets the job.
        func finish() {
            if !WorkerPool.lookBriefly(for: WorkerPool.callerBudget, until: { remaining.load(ordering: .acquiring) == 0 }) {
                condition.lock()
                callerSleeps.store(true, ordering: .sequentiallyConsistent)
                while remaining.load(ordering: .sequentiallyConsistent) > 0 { condition.wait() }
                callerSleeps.store(false, ordering: .sequentiallyConsistent)
                condition.unlock()
            }
            job = nil
        }

        func stop() {
            stopping.store(true, ordering: .sequentiallyConsistent)
            raiseGeneration()
        }

        func work(_ part: Int) {
            var seen = 0
            while true {
                if !WorkerPool.lookBriefly(for: WorkerPool.workerBudget, until: { generation.load(ordering: .acquiring) != seen }) {
                    condition.lock()
                    sleepers.add(1, ordering: .sequentiallyConsistent)
                    while generation.load(ordering: .sequentiallyConsistent) == seen { condition.wait() }
                    sleepers.subtract(1, ordering: .sequentiallyConsistent)
                    condition.unlock()
                }
                seen = generation.load(ordering: .acquiring)
                if stopping.load(ordering: .acquiring) { return }
                job?(part)
                // The last part of the job wakes the caller if it has gone to sleep (it sets `callerSleeps` under
                // the lock before it checks `remaining`, so one of the two sees the other).
                if remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
                   callerSleeps.load(ordering: .sequentiallyConsistent) {
                    condition.lock()
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
    }
}
