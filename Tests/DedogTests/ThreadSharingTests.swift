import Testing
import Dedog

/// How `dedog classify` shares its threads out (`ClassifierConfiguration.share`).
@Suite struct ThreadSharingTests {
    @Test(arguments: [(threads: 2, many: false, workers: 1, each: 2), (threads: 2, many: true, workers: 2, each: 1),
                      (threads: 1, many: true, workers: 1, each: 1), (threads: 20, many: true, workers: 8, each: 2),
                      (threads: 0, many: true, workers: 1, each: 1)])
    func share(_ c: (threads: Int, many: Bool, workers: Int, each: Int)) {
        var configuration = ClassifierConfiguration()
        configuration.share(threads: c.threads, manyPhotos: c.many)
        #expect(configuration.workers == c.workers)
        #expect(configuration.threadsPerWorker == c.each)
    }
}
