import DedogConcurrency
import DedogNN
import DedogImage

// The facade's own words for how the engine runs: front ends choose with these and never see the engine's types.

/// Which build of the C kernels runs: the best this CPU supports unless a front end names another (`dedog` reads
/// `DEDOG_KERNELS`), so that every path can be tried on one machine.
public struct Kernels: Sendable, Equatable, CustomStringConvertible {
    let kernelSet: KernelSet

    /// The fastest build this CPU runs.
    public static let best = Kernels(kernelSet: .best)

    /// The build called `name` (`portable`, `avx2`, `avx-vnni`, `avx512` or `avx512-vnni`, any case), or `best` when
    /// `name` is nil or empty;
    /// a name this CPU cannot honour is refused with what it can.
    public static func named(_ name: String?) throws(ClassifierError) -> Kernels {
        do {
            return Kernels(kernelSet: try KernelSet.named(name))
        } catch {
            throw .model(error)
        }
    }

    /// `portable`, `avx2`, `avx-vnni`, `avx512` or `avx512-vnni`.
    public var name: String { kernelSet.rawValue }
    public var description: String { name }
}

/// The network's arithmetic.
public enum Precision: String, Sendable, CaseIterable, CustomStringConvertible {
    /// 32-bit floats throughout.
    case fp32
    /// 8-bit activations and weights with 32-bit sums, where the model file has the activation ranges it needs;
    /// 32-bit floats otherwise.
    case int8

    /// What runs when nobody says: int8 with every build of the kernels (each computes the same integers, so every
    /// CPU gives the same answers; faster than floats, top-1 within 0.3 points of them).
    public static func preferred(for kernels: Kernels) -> Precision {
        Precision(DedogNN.Precision.preferred(for: kernels.kernelSet))
    }

    public var description: String { rawValue }

    init(_ engine: DedogNN.Precision) {
        switch engine {
        case .fp32: self = .fp32
        case .int8: self = .int8
        }
    }

    var engine: DedogNN.Precision {
        switch self {
        case .fp32: .fp32
        case .int8: .int8
        }
    }
}

/// How a photo that is not square becomes the network's square.
public enum PhotoFit: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The shorter side resized, the centre cropped: a long photo's ends are cut off.
    case crop
    /// Padded to a square with grey bars: the whole photo is seen (the bundled models' choice).
    case pad
    /// Stretched to a square.
    case squeeze

    public var description: String { rawValue }

    init(_ engine: InputDescription.Fit) {
        switch engine {
        case .crop: self = .crop
        case .pad: self = .pad
        case .squeeze: self = .squeeze
        }
    }

    var engine: InputDescription.Fit {
        switch self {
        case .crop: .crop
        case .pad: .pad
        case .squeeze: .squeeze
        }
    }
}

/// Finds photos among files and folders by their content, not their names.
public typealias PhotoFiles = DedogImage.ImageFiles

extension PhotoFiles {
    /// The formats dedog reads, for messages ("JPEG, PNG, HEIC, AVIF or WebP").
    public static var readableFormats: String { ImageFormat.readable }
}

/// Runs jobs on threads of their own and hands their results back in the order given (`dedog classify` over a
/// folder).
public typealias OrderedWork = DedogConcurrency.OrderedWork
/// Threads for blocking work, with an `async` way in (`dedog serve` classifies on them).
public typealias ThreadPool = DedogConcurrency.ThreadPool
