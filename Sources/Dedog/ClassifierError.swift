import DedogImage
import DedogNN

/// What can go wrong between a photo and its ranked breeds.
public enum ClassifierError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The photo could not be read or decoded.
    case image(ImageError)
    /// The model file could not be loaded.
    case model(ModelError)
    /// No model file was given and none was found where dedog looks for one.
    case noModel(searched: [String])

    public var description: String {
        switch self {
        case let .image(error): return error.description
        case let .model(error): return error.description
        case let .noModel(searched):
            return "no model file found; looked in: \(searched.joined(separator: ", ")). "
                + "Pass one with --model FILE or set DEDOG_MODEL."
        }
    }
}
