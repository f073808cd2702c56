import DedogCatalogue
import Dedog

/// What to do about a library's error on the command line. The libraries say what is wrong; which flag, variable
/// or command changes it is the command line's to say (the HTTP API names request fields instead).
enum Advice {
    /// `error`'s description, followed by the command-line advice for it when there is one.
    static func message(for error: any Error) -> String {
        let description = "\(error)"
        return advice(for: error).map { description + " " + $0 } ?? description
    }

    static func advice(for error: any Error) -> String? {
        switch error {
        case let error as ClassifierError:
            switch error {
            case .image:
                return error.photoProblem == .tooManyPixels ? "Shrink it first or raise the limit with --max-megapixels." : nil
            case .noModel: return "Pass a model file with --model FILE or set DEDOG_MODEL, or reinstall dedog."
            case .notACatalogueBreed:
                return "To teach a new breed of that name, add --new-breed."
            case .emptyBreedName, .ambiguousBreed:
                return nil
            case .unknownBreed:
                return "To add a breed, put its photos in a folder of the dataset and run dedog train --resume."
            case .model, .unknownModel, .notTrainable, .quiz, .outsideTree, .watch, .alreadyTrained, .notASharedBreed: return nil
            case .notTaught: return "See which breeds the model was taught with dedog forget --list --model FILE."
            case .otherBackbones: return "Import it into a model of those backbones, or teach the breed anew from photos."
            case .noCarefulMode: return "Leave out --careful, or classify with a bundled model (--model default or fast)."
            case let .sidecar(problem):
                if case .notXMP = problem { return "Move it aside (or rename it) and run dedog tag again to write a new one." }
                if case .unwritable = problem { return "Make the folder writable, or tag a copy of the photos." }
                return nil
            case .record:
                return "Keep the record elsewhere with --record FILE (on a local disk), or go without one with --no-record."
            }
        case let error as TrainingError:
            switch error {
            case .cache: return "Delete the folder or pass --cache elsewhere."
            case .memoryLimit: return "Use fewer images (--split) or views (--augment none), or raise --max-memory."
            case .inputTooLarge: return "Choose a smaller --test-size-increase."
            default: return nil
            }
        case let error as CatalogueError:
            if case .notInstalled = error { return "Reinstall dedog or pass --catalogue FILE." }
            return nil
        default:
            return nil
        }
    }
}

extension Terminal {
    /// Prints a library's error with what to do about it (`Advice`).
    public static func error(_ error: any Error) {
        self.error(Advice.message(for: error))
    }
}
