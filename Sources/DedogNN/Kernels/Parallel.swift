import DedogConcurrency
import Dispatch
import Foundation

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

/// The `part`-th of `parts` nearly equal slices of 0..<count, with slice boundaries on multiples of `align`.
func slice(_ count: Int, part: Int, of parts: Int, align: Int = 1) -> Range<Int> {
    let units = (count + align - 1) / align
    let lo = min(count, (units * part / parts) * align)
    let hi = min(count, (units * (part + 1) / parts) * align)
    return lo..<hi
}
