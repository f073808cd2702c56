import DedogKernels
import Foundation

/// Which build of the C kernels runs: the best the CPU supports unless `DEDOG_KERNELS` names another, so that
/// every path can be tried and tested on one machine. Packed weights are the same for every set.
public enum KernelSet: String, CaseIterable, Sendable, CustomStringConvertible {
    case portable
    case avx2
    case avx512

    /// Whether this CPU can run the set (the portable one always can).
    public var isSupported: Bool { dedog_isa_supported(isa) != 0 }

    /// The fastest set this CPU supports.
    public static let best: KernelSet = allCases.last(where: \.isSupported) ?? .portable

    /// The sets this CPU supports, slowest first.
    public static var supported: [KernelSet] { allCases.filter(\.isSupported) }

    /// `DEDOG_KERNELS` when it names a set this CPU supports, else `best`; read once per process. Use
    /// `fromEnvironment()` to be told what is wrong with the variable.
    public static let automatic: KernelSet = (try? fromEnvironment()) ?? best

    /// The set `DEDOG_KERNELS` asks for (`portable`, `avx2` or `avx512`), or `best` when it is unset or empty.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(ModelError) -> KernelSet {
        guard let name = environment["DEDOG_KERNELS"], !name.isEmpty else { return best }
        guard let set = KernelSet(rawValue: name.lowercased()) else {
            throw .unknownKernelSet(name: name, supported: supported.map(\.rawValue))
        }
        guard set.isSupported else { throw .unsupportedKernelSet(name: set.rawValue, supported: supported.map(\.rawValue)) }
        return set
    }

    public var description: String { rawValue }

    /// Multiply-adds per second one core reaches with this set's vectors when nothing but FMAs run (about
    /// a quarter of a second of measuring): the ceiling to read kernel speeds against.
    public func measuredPeakMultiplyAdds() -> Double {
        dedog_fma_peak(isa, 20_000_000)
    }

    var isa: dedog_isa {
        switch self {
        case .portable: DEDOG_ISA_PORTABLE
        case .avx2: DEDOG_ISA_AVX2
        case .avx512: DEDOG_ISA_AVX512
        }
    }
}
