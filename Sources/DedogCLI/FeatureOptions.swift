import ArgumentParser
import Dedog
import Foundation

/// The options of the commands that run photos through the backbone (train, evaluate): cache, threads, memory.
struct FeatureOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Feature cache folder (default: ~/.cache/dedog/features).", valueName: "folder"))
    var cache: String?

    @Flag(help: "Do not read or write the feature cache.")
    var noCache = false

    @Option(help: "Threads for feature extraction.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Refuse to start if the run would need more memory than this, e.g. 2G or 500M "
                               + "(default: 80 % of the memory available).", valueName: "size"))
    var maxMemory: MemorySize?

    @Option(help: Environment.kernelsHelp)
    var kernels: String?

    func validate() throws {
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be between 1 and 256.") }
    }

    /// `--kernels` or `DEDOG_KERNELS`, or the CLI's error and exit status for a value this CPU cannot honour.
    func kernelSet() throws -> Kernels {
        guard let set = Environment.kernelsOrReport(kernels) else { throw Status.modelUnavailable }
        return set
    }

    /// Where the feature cache lives, or nil for none.
    var cacheRoot: URL? {
        noCache ? nil : (cache.map { URL(fileURLWithPath: $0) } ?? Training.defaultCacheRoot(environment: Environment.variables))
    }

    /// `--max-memory`, or 80 % of the memory this process can still take.
    var memoryLimit: Int? {
        maxMemory?.bytes ?? Training.availableMemory.map { $0 / 5 * 4 }
    }
}
