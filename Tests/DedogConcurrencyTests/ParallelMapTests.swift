import Dispatch
import Foundation
import Testing
import DedogConcurrency

/// `parallelMap` gives every result in its place, from the calling thread and Dispatch's workers, also when it is
/// called inside another map that holds every thread of Dispatch's pool.
@Suite struct ParallelMapTests {
    @Test func resultsAreInOrderWhateverTheThreads() {
        for threads in [1, 2, 3, 8] {
            #expect(parallelMap(100, threads: threads) { $0 * $0 } == (0..<100).map { $0 * $0 }, "threads \(threads)")
        }
        #expect(parallelMap(0, threads: 4) { $0 }.isEmpty)
    }

    /// Every pool thread runs a map of its own, whose extra workers cannot get a thread until the others are done.
    /// A map must not wait for workers that have not started: Dispatch adds a thread only after about a second, and
    /// a version that waited for its late worker (ace1e48) stalled one process in six that long. The bound is far
    /// above a map's own time (microseconds) and below that second.
    @Test func aMapInsideMapsThatHoldEveryThreadDoesNotWaitForLateWorkers() {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        for _ in 0..<5 {
            let start = DispatchTime.now()
            let sums = Locked([Int](repeating: -1, count: cores))
            DispatchQueue.concurrentPerform(iterations: cores) { c in
                let sum = parallelMap(16, threads: 2) { $0 + c }.reduce(0, +)
                sums.withLock { $0[c] = sum }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            #expect(sums.withLock { $0 } == (0..<cores).map { 120 + 16 * $0 })
            #expect(seconds < 0.5, "\(seconds) s")
        }
    }
}
