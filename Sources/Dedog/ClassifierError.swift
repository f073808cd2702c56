import DedogFiles
import DedogImage
import DedogNN
import DedogBreedModel
import DedogSidecar
import DedogRecord

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
    /// `learn` was given an empty breed name.
    case emptyBreedName
    /// `learn --breed` named several catalogue breeds (`candidates`).
    case ambiguousBreed(name: String, candidates: [String])
    /// `learn --breed` named no breed of the model's or the catalogue's (`closest`: the nearest catalogue names): a
    /// typo, or a new breed, which must be said so (`--new-breed`).
    case notACatalogueBreed(name: String, closest: [String])
    /// The model cannot learn confirmed photos.
    case notTrainable(reason: String)
    /// A quiz file (or upload) that is not a valid quiz, or a folder no quiz could be made from.
    case quiz(file: String, reason: String)
    /// `dedog tag`: a photo's XMP sidecar could not be read or written (it is left as it was).
    case sidecar(SidecarError)
    /// `dedog tag`: the photo lies outside the folders given, through a symbolic link (`within`: the folder).
    case outsideTree(path: String, within: String)
    /// Careful mode was asked of a model that has no careful point (`Classifier.carefulMode()`).
    case noCarefulMode(model: String)
    /// `dedog tag`: the record of the photos looked at could not be opened, read or written (`PhotoRecord`).
    case record(RecordError)
    /// `dedog tag --watch`: the folders could not be watched.
    case watch(FileError)
    /// `learn --export`: the breed is one the model was trained on, not taught (only taught breeds travel).
    case notTaught(name: String)
    /// `learn --import`: the taught breed's file was made on other backbones than the model's (each as
    /// "architecture (fingerprint)").
    case otherBackbones(file: String, taughtOn: [String], model: [String])
    /// `learn --import`: the model was trained on that breed already.
    case alreadyTrained(name: String)
    /// `learn --import`: the file is not a taught breed's file this dedog can read (`reason`: what is wrong).
    case notASharedBreed(file: String, reason: String)

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
        case .emptyBreedName:
            return "the breed's name is empty; say which breed the photos show."
        case let .ambiguousBreed(name, candidates):
            return "\"\(name)\" names several breeds: \(candidates.joined(separator: ", ")); name one of them."
        case let .notACatalogueBreed(name, closest):
            return closest.isEmpty ? "no breed in the catalogue is called \"\(name)\"."
                : "no breed in the catalogue is called \"\(name)\"; the closest names are \(closest.joined(separator: ", "))."
        case let .notTrainable(reason):
            return "this model cannot learn confirmed photos: \(reason)."
        case let .quiz(file, reason):
            return "\(file): not a usable quiz: \(reason)."
        case let .sidecar(error): return error.description
        case let .record(error): return error.description
        case let .watch(error): return "cannot watch for new photos: \(error)."
        case let .noCarefulMode(model):
            return "\(model) has no careful mode: only a model whose rule of \"a breed this model does not know\" was "
                + "fitted on breeds held out of its training has one (the bundled models do; those `dedog train` writes do not)."
        case let .notTaught(name):
            return "\(name) is one of the breeds the model was trained on, not a taught one; only a breed taught with "
                + "dedog learn can be exported (a trained breed comes with the model file itself)."
        case let .otherBackbones(file, taughtOn, model):
            return "\(file) was taught on \(taughtOn.joined(separator: " + ")), and this model's backbones are "
                + "\(model.joined(separator: " + ")); a taught breed moves only between models of the same backbones."
        case let .alreadyTrained(name):
            return "the model was trained on \(name) already; teach it more photos with dedog learn instead."
        case let .notASharedBreed(file, reason):
            return "\(file) is not a taught breed's file that dedog can read: \(reason). Such files are made by dedog learn --export."
        case let .outsideTree(path, within):
            return "\(path) leads outside \(within) through a symbolic link; dedog tag writes sidecars only inside the folders "
                + "it is given (name the photo or its folder itself to tag it)."
        }
    }
}

/// What is wrong with a photo that could not be classified, for front ends that answer with a code of their own
/// (the API's status and error code) or advice (the command line's flag to change).
public enum PhotoProblem: Sendable, Equatable {
    /// Not a JPEG, PNG, HEIC, AVIF or WebP photo.
    case unsupportedFormat
    /// It declares more pixels than the limit allows.
    case tooManyPixels
    /// The file or body is larger than the limit allows.
    case tooManyBytes
    case empty
    /// It ends before its picture does.
    case truncated
    /// Anything else in it that cannot be decoded.
    case damaged
}

extension ClassifierError {
    /// What is wrong with the photo, when it is the photo that could not be used.
    public var photoProblem: PhotoProblem? {
        guard case let .image(image) = self else { return nil }
        switch image {
        case .unsupportedFormat: return .unsupportedFormat
        case .tooLarge: return .tooManyPixels
        case .tooManyBytes: return .tooManyBytes
        case .empty: return .empty
        case .truncated: return .truncated
        case .corrupt, .unsupportedCoding, .unreadable, .invalidArgument: return .damaged
        }
    }
}

