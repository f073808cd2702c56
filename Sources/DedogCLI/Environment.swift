import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

/// What dedog takes from the environment, read here, in the front end; the libraries take it as arguments.
public enum Environment {
    public static var variables: [String: String] { ProcessInfo.processInfo.environment }

    /// `--kernels`, else `DEDOG_KERNELS`: which build of the C kernels a command runs (the best this CPU supports when
    /// neither says), so that each path can be tried on one machine.
    public static func kernels(_ option: String? = nil) throws(ClassifierError) -> Kernels {
        try Kernels.named(option ?? variables["DEDOG_KERNELS"])
    }

    /// `kernels(option)`, or nil after saying on stderr what is wrong and where the name came from (`--kernels` or
    /// `DEDOG_KERNELS`): the front ends' one way to read it.
    public static func kernelsOrReport(_ option: String?) -> Kernels? {
        do throws(ClassifierError) {
            return try kernels(option)
        } catch {
            let source = option.map { "--kernels \($0)" } ?? "DEDOG_KERNELS=\(variables["DEDOG_KERNELS"] ?? "")"
            Terminal.error("\(source): \(error) Name one of those, or leave it out for the fastest.")
            return nil
        }
    }

    /// The `--kernels` help of every command that runs the network.
    public static let kernelsHelp = ArgumentHelp(
        "Which build of the compute kernels runs: portable, avx2, avx-vnni, avx512 or avx512-vnni (default: "
        + "DEDOG_KERNELS, else the fastest this CPU runs). For comparing them; a build the CPU lacks is refused.",
        valueName: "set")

    /// The model `--model` names, or `DEDOG_MODEL`'s, or the bundled default.
    public static func model(_ argument: String?) throws(ClassifierError) -> URL {
        try ModelLocator.model(argument, environment: variables)
    }

    /// The language the locale asks for (LC_ALL, LC_MESSAGES, LANG).
    public static var language: Language { .fromLocale(variables) }
}
