import Foundation
import Testing
import DedogConcurrency

/// `OrderedWork` (what `dedog classify` runs photos through): results come back in the order the jobs were given,
/// however long each takes, with at most `concurrency` jobs running and that many running when there is work.
@Suite struct OrderedWorkTests {
    /// Counts jobs running now and the most ever running at once.
    final class Gauge: Sendable {
        private let state = Locked((now: 0, most: 0))
        func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { state.withLock { $0.now -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    @Test(arguments: [1, 2, 3])
    func deliversInOrderAndRunsSideBySide(concurrency: Int) {
        let work = OrderedWork<Int>(concurrency: concurrency)
        let gauge = Gauge()
        var delivered: [Int] = []
        // Later jobs finish sooner: job i sleeps (40 − i) ms, so that out-of-order completion is the rule.
        for i in 0..<40 {
            work.submit({
                gauge.enter()
                usleep(useconds_t((40 - i) * 1000))
                gauge.leave()
                return i
            }, deliver: { delivered.append($0) })
        }
        work.finish { delivered.append($0) }
        #expect(delivered == Array(0..<40))
        #expect(gauge.most == concurrency)
    }

    /// Results delivered during `submit` are those already finished and next in order; `finish` with nothing
    /// pending delivers nothing, and the work can go on after it.
    @Test func finishDrainsAndWorkGoesOn() {
        let work = OrderedWork<String>(concurrency: 2)
        var delivered: [String] = []
        work.finish { delivered.append($0) }
        #expect(delivered.isEmpty)
        for name in ["a", "b", "c"] { work.submit({ name }, deliver: { delivered.append($0) }) }
        work.finish { delivered.append($0) }
        work.submit({ "d" }, deliver: { delivered.append($0) })
        work.finish { delivered.append($0) }
        #expect(delivered == ["a", "b", "c", "d"])
    }
}
