import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog

@Suite struct ShardTests {
    @Test func parsesKOfN() {
        #expect(Shard("0/4") == Shard(index: 0, count: 4))
        #expect(Shard("3/4")?.description == "3/4")
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3", "", "/4", "1/"] { #expect(Shard(bad) == nil, "\(bad)") }
    }

    /// N parts together hold every path exactly once, in roughly equal shares, and the split is the same every
    /// time (FNV-1a, not Swift's per-process seeded Hasher).
    @Test func partsCoverEveryPathExactlyOnce() {
        let paths = (0..<3000).map { "photos/\($0 % 7)/IMG_\($0).jpg" }
        for n in [1, 2, 3, 8] {
            let shards = (0..<n).map { Shard(index: $0, count: n)! }
            for path in paths { #expect(shards.filter { $0.contains(path) }.count == 1) }
            let sizes = shards.map { s in paths.filter(s.contains).count }
            #expect(sizes.allSatisfy { abs($0 - paths.count / n) < paths.count / n / 5 }, "\(sizes)")
        }
        #expect(Shard(index: 1, count: 2)!.contains("photos/rex.jpg") == true)
        #expect(Shard(index: 0, count: 3)!.contains("photos/rex.jpg") == true)
        #expect(Shard(index: 1, count: 3)!.contains("photos/rex.jpg") == false)
    }
}
