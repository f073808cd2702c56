import Dispatch
import Foundation
import Synchronization

/// A raw pointer that may cross into the worker closures of `Parallel`. Each worker writes only its own
/// disjoint part of the memory, which is what makes sharing it sound.
struct SharedPointer<T>: @unchecked Sendable {
    let base: UnsafeMutablePointer<T>
    init(_ base: UnsafeMutablePointer<T>) { self.base = base }
}

/// How a layer runs: which build of the kernels, and `parts` slices at once, on a session's worker pool when it
/// has one (threads stay awake between layers), else on Dispatch's.
struct Parallel: Sendable {
    let parts: Int
    let pool: WorkerPool?
    let kernels: KernelSet

    init(threads: Int, kernels: KernelSet) {
        parts = max(1, threads)
        pool = nil
        self.kernels = kernels
    }

    init(pool: WorkerPool, kernels: KernelSet) {
        parts = pool.parts
        self.pool = pool
        self.kernels = kernels
    }

    /// Runs `body(part)` for every part in 0..<parts and returns when all are done.
    func callAsFunction(_ body: @escaping @Sendable (Int) -> Void) {
        if parts <= 1 {
            body(0)
        } else if let pool {
            pool.run(body)
        } else {
            DispatchQueue.concurrentPerform(iterations: parts, execute: body)
        }
    }
}

/// `parts − 1` threads that wait for work by spinning briefly, then sleeping. A forward pass hands out ~50 jobs
/// of 20–500 µs each; waking a sleeping thread for each costs more than the job is worth, so workers spin for a
/// while after each job before they block. The caller runs part 0 itself. The threads end when the pool does.
final class WorkerPool: Sendable {
    let parts: Int
    private let state: State

    init(parts: Int) {
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

    func run(_ body: @escaping @Sendable (Int) -> Void) {
        state.start(body, workers: parts - 1)
        body(0)
        state.finish()
    }

    /// What the workers share with the pool; they keep it alive until they have left their loop.
    private final class State: @unchecked Sendable {
        private let generation = Atomic<Int>(0)
        private let remaining = Atomic<Int>(0)
        private let stopping = Atomic<Bool>(false)
        private let condition = NSCondition()
        private var job: (@Sendable (Int) -> Void)?  // guarded by `condition`

        func start(_ body: @escaping @Sendable (Int) -> Void, workers: Int) {
            condition.lock()
            job = body
            remaining.store(workers, ordering: .sequentiallyConsistent)
            generation.add(1, ordering: .sequentiallyConsistent)
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until every worker has run its part, then forgets the job.
        func finish() {
            while remaining.load(ordering: .acquiring) > 0 {}
            condition.lock()
            job = nil
            condition.unlock()
        }

        func stop() {
            condition.lock()
            stopping.store(true, ordering: .sequentiallyConsistent)
            generation.add(1, ordering: .sequentiallyConsistent)
            condition.broadcast()
            condition.unlock()
        }

        func work(_ part: Int) {
            var seen = 0
            while true {
                var spins = 0
                while generation.load(ordering: .acquiring) == seen && spins < 20_000 { spins += 1 }
                condition.lock()
                while generation.load(ordering: .acquiring) == seen { condition.wait() }
                seen = generation.load(ordering: .acquiring)
                let current = job
                let done = stopping.load(ordering: .acquiring)
                condition.unlock()
                if done { return }
                current?(part)
                remaining.subtract(1, ordering: .releasing)
            }
        }
    }
}

/// The `part`-th of `parts` nearly equal slices of 0..<count, with slice boundaries on multiples of `align`.
func slice(_ count: Int, part: Int, of parts: Int, align: Int = 1) -> Range<Int> {
    let units = (count + align - 1) / align
    let lo = min(count, (units * part / parts) * align)
    let hi = min(count, (units * (part + 1) / parts) * align)
    return lo..<hi
}
