import DedogNN
import Foundation

/// `DEDOG_KERNELS`: which build of the C kernels every command runs (the best this CPU supports when unset), so
/// that each path can be tried on one machine. Read here, in the front end; the libraries take it as configuration.
enum Kernels {
    static func fromEnvironment() throws(ModelError) -> KernelSet {
        try KernelSet.named(ProcessInfo.processInfo.environment["DEDOG_KERNELS"])
    }
}
