import Dedog
import DedogCatalogue
import Foundation

/// What dedog takes from the environment, read here, in the front end; the libraries take it as arguments.
public enum Environment {
    public static var variables: [String: String] { ProcessInfo.processInfo.environment }

    /// `DEDOG_KERNELS`: which build of the C kernels every command runs (the best this CPU supports when unset), so
    /// that each path can be tried on one machine.
    public static func kernels() throws(ClassifierError) -> Kernels { try Kernels.named(variables["DEDOG_KERNELS"]) }

    /// The model `--model` names, or `DEDOG_MODEL`'s, or the bundled default.
    public static func model(_ argument: String?) throws(ClassifierError) -> URL {
        try ModelLocator.model(argument, environment: variables)
    }

    /// The language the locale asks for (LC_ALL, LC_MESSAGES, LANG).
    public static var language: Language { .fromLocale(variables) }
}
