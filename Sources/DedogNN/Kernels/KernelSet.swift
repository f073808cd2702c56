import DedogKernels
import Foundation

/// Which build of the C kernels runs: the best the CPU supports unless the caller names another, so that every
/// path can be tried and tested on one machine. Weights are packed once, in one layout (panels of
/// `DEDOG_PANEL` outputs) that every set reads, so a model's packed weights do not depend on the set chosen.
/// The VNNI sets run the float kernels of AVX2 and AVX-512 and multiply bytes with `vpdpbusd`; AVX2 and AVX-512
/// multiply bytes with `vpmaddubsw`, which the layers a network makes let them do exactly, one operand of each in 7
/// bits (`QuantizedNetwork`); layers with both operands in 8 bits they run on inputs less 128, their sign moved onto
/// the weights (`vpsignb`). Every set runs the same 8-bit layers to the same bytes: a model answers alike on every CPU.
public enum KernelSet: String, CaseIterable, Sendable, CustomStringConvertible {
    case portable
    case avx2
    case avxVnni = "avx-vnni"
    case avx512
    case avx512Vnni = "avx512-vnni"

    /// Whether this CPU can run the set (the portable one always can).
    public var isSupported: Bool { dedog_isa_supported(isa) != 0 }

    /// The fastest set this CPU supports.
    public static let best: KernelSet = allCases.last(where: \.isSupported) ?? .portable

    /// The sets this CPU supports, slowest first.
    public static var supported: [KernelSet] { allCases.filter(\.isSupported) }

    /// The set called `name` (`portable`, `avx2`, `avx-vnni`, `avx512` or `avx512-vnni`, any case), or `best` when
    /// `name` is nil or empty.
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

    /// The same ceiling for the 8-bit kernels' multiply: `vpdpbusd` for the VNNI sets, `vpmaddubsw` then
    /// `vpmaddwd` for AVX2 and AVX-512, plain integer vectors for the portable set.
    public func measuredPeakByteMultiplyAdds() -> Double {
        dedog_int8_peak(isa, 20_000_000)
    }

    /// How this set's 8-bit kernels multiply, for benchmark tables.
    public var byteMultiply: String {
        switch self {
        case .portable: "portable"
        case .avx2, .avx512: "vpmaddubsw"
        case .avxVnni: "AVX-VNNI vpdpbusd"
        case .avx512Vnni: "AVX-512 VNNI vpdpbusd"
        }
    }

    var isa: dedog_isa {
        switch self {
        case .portable: DEDOG_ISA_PORTABLE
        case .avx2: DEDOG_ISA_AVX2
        case .avxVnni: DEDOG_ISA_AVX_VNNI
        case .avx512: DEDOG_ISA_AVX512
        case .avx512Vnni: DEDOG_ISA_AVX512_VNNI
        }
    }
}
