import DedogKernels
import Foundation

/// Which build of the C kernels runs: the best the CPU supports unless the caller names another, so that every
/// path can be tried and tested on one machine. Weights are packed once, in one layout (panels of
/// `DEDOG_PANEL` outputs) that every set reads, so a model's packed weights do not depend on the set chosen.
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

    /// The set called `name` (`portable`, `avx2` or `avx512`, any case), or `best` when `name` is nil or empty.
    /// Front ends pass what the user asked for (`dedog` reads `DEDOG_KERNELS`); the library reads no environment.
    public static func named(_ name: String?) throws(ModelError) -> KernelSet {
        guard let name, !name.isEmpty else { return best }
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

    /// The same ceiling for the 8-bit kernels' multiply: AVX-512 VNNI's `vpdpbusd` for the AVX-512 set on a CPU that
    /// has it, 16-bit `vpmaddwd` for AVX2 (and AVX-512 without VNNI), plain integer vectors for the portable set.
    public func measuredPeakByteMultiplyAdds() -> Double {
        dedog_int8_peak(isa, 20_000_000)
    }

    /// Whether this set's 8-bit kernels have a byte dot product instruction on this CPU (AVX-512 VNNI), which makes
    /// them faster than the float ones.
    public var multipliesBytesNatively: Bool { self == .avx512 && isSupported && dedog_has_vnni() != 0 }

    /// How this set's 8-bit kernels multiply on this CPU, for benchmark tables.
    public var byteMultiply: String {
        switch self {
        case .portable: "portable"
        case .avx2: "AVX2 vpmaddwd"
        case .avx512: dedog_has_vnni() != 0 ? "AVX-512 VNNI" : "AVX2 vpmaddwd (no VNNI)"
        }
    }

    var isa: dedog_isa {
        switch self {
        case .portable: DEDOG_ISA_PORTABLE
        case .avx2: DEDOG_ISA_AVX2
        case .avx512: DEDOG_ISA_AVX512
        }
    }
}
