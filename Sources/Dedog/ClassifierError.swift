import DedogImage
import DedogNN

/// What can go wrong between a photo and its ranked breeds.
public enum ClassifierError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The photo could not be read or decoded.
    case image(ImageError)
    /// The model file could not be loaded.
    case model(ModelError)
    /// The bundled model `name` was not found where dedog looks for it.
    case noModel(name: String, searched: [String])
    /// `--model` named no bundled model and no file.
    case unknownModel(name: String, known: [String])
    /// `learn --breed` named none of the model's breeds.
    case unknownBreed(name: String, known: [String])
    /// The model cannot learn confirmed photos.
    case notTrainable(reason: String)
    /// A quiz file (or upload) that is not a valid quiz, or a folder no quiz could be made from.
    case quiz(file: String, reason: String)

    public var description: String {
        switch self {
        case let .image(error): return error.description
        case let .model(error): return error.description
        case let .noModel(name, searched):
            return "the bundled model \"\(name)\" was not found; looked for \(searched.joined(separator: ", "))."
        case let .unknownModel(name, known):
            return "no bundled model is called \"\(name)\"; the bundled ones are \(known.joined(separator: ", ")). "
                + "For a file, give its path (./\(name))."
        case let .unknownBreed(name, known):
            let list = known.count > 12 ? known.prefix(12).joined(separator: ", ") + ", … (\(known.count) in all)"
                : known.joined(separator: ", ")
            return "the model knows no breed called \"\(name)\"; its breeds are \(list). A confirmed photo must show one "
                + "of them."
        case let .notTrainable(reason):
            return "this model cannot learn confirmed photos: \(reason)."
        case let .quiz(file, reason):
            return "\(file): not a usable quiz: \(reason)."
        }
    }
}
