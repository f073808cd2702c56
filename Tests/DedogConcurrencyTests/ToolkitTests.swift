import Foundation
import Synchronization
import Testing
import DedogConcurrency

/// The guarantees each primitive documents, checked by running it.
@Suite struct ToolkitTests {
    /// Every part of every job runs exactly once, part 0 on the caller's thread, and what the parts wrote is there
    /// when `run` returns: with jobs back to back (the workers still looking) and with pauses past the spin budget
    /// between them (the workers asleep, and the caller sleeping for the last one).
    @Test(arguments: [1, 2, 3, 5])
    func workerPoolRunsEveryPartOnce(_ parts: Int) {
        let pool = WorkerPool(parts: parts)
        let counts = Locked([Int](repeating: 0, count: parts))
        let caller = pthread_self()
        for job in 0..<300 {
            let seen = Locked([Bool](repeating: false, count: parts))
            pool.run { part in
                if part == 0 { #expect(pthread_equal(pthread_self(), caller) != 0) }
                if part == parts - 1 && job % 50 == 7 { Thread.sleep(forTimeInterval: 0.005) }  // the caller waits asleep
                seen.withLock { $0[part] = true }
                counts.withLock { $0[part] += 1 }
            }
            #expect(seen.withLock { $0 }.allSatisfy { $0 }, "job \(job)")
            if job % 100 == 99 { Thread.sleep(forTimeInterval: 0.001) }  // the workers go to sleep
        }
        #expect(counts.withLock { $0 } == [Int](repeating: 300, count: parts))
    }

    /// No two callers hold the same resource, and no more than `capacity` are made, however many callers there are.
    @Test func resourcePoolLendsEachResourceToOneCallerAtATime() {
        let made = Atomic<Int>(0)
        let pool = ResourcePool<Int>(capacity: 3) { made.add(1, ordering: .relaxed).newValue }
        let held = Locked(Set<Int>()), clashes = Atomic<Int>(0), mostAtOnce = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            pool.use { resource in
                let count = held.withLock { set -> Int in
                    if !set.insert(resource).inserted { clashes.add(1, ordering: .relaxed) }
                    return set.count
                }
                _ = mostAtOnce.max(count, ordering: .relaxed)
                Thread.sleep(forTimeInterval: 0.0005)
                held.withLock { _ = $0.remove(resource) }
            }
        }
        let (clashed, madeCount, most) = (clashes.load(ordering: .relaxed), made.load(ordering: .relaxed), mostAtOnce.load(ordering: .relaxed))
        #expect(clashed == 0)
        #expect(madeCount <= 3 && most <= 3)
    }

    /// A resource comes back when the body throws, too.
    @Test func resourcePoolTakesBackAfterAThrow() throws {
        struct Failure: Error {}
        let pool = ResourcePool<Int>(capacity: 1) { 7 }
        #expect(throws: Failure.self) { try pool.use { _ throws(Failure) in throw Failure() } }
        #expect(pool.use { $0 } == 7, "the one resource was given back")
    }

    /// One thread runs jobs in the order given; `run` hands each result back to its task; after `shutdown` a job
    /// still runs (on the caller's thread), none is lost.
    @Test func threadPoolRunsInOrderAndHandsResultsBack() async {
        let pool = ThreadPool(threads: 1, name: "test")
        let order = Locked([Int]())
        for i in 0..<100 { pool.submit { order.withLock { $0.append(i) } } }
        let sum = await pool.run { (0..<10).reduce(0, +) }
        #expect(sum == 45)
        #expect(order.withLock { $0 } == Array(0..<100), "jobs given before a run have run before it returns")
        let results = await withTaskGroup(of: Int.self) { group in
            for i in 0..<20 { group.addTask { await pool.run { i * i } } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == (0..<20).map { $0 * $0 })
        pool.shutdown()
        let after = Atomic<Bool>(false)
        pool.submit { after.store(true, ordering: .relaxed) }
        let ran = after.load(ordering: .relaxed)
        #expect(ran, "a job given after shutdown runs at once")
    }

    /// The value is computed once, on a thread of its own, and every reader gets it.
    @Test func eventualComputesOnceForEveryReader() {
        let computed = Atomic<Int>(0)
        let eventual = Eventual<Int> {
            Thread.sleep(forTimeInterval: 0.01)
            return computed.add(1, ordering: .relaxed).newValue * 42
        }
        let values = Locked([Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let v = eventual.value
            values.withLock { $0.append(v) }
        }
        #expect(values.withLock { $0 } == [Int](repeating: 42, count: 8))
        let computations = computed.load(ordering: .relaxed)
        #expect(computations == 1)
    }
}
