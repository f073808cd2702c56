import ArgumentParser
import DedogNN

extension Precision: ExpressibleByArgument {
    /// The `--precision` help every command that runs the network shows.
    static let help = ArgumentHelp("The network's arithmetic: int8 (8-bit, about twice as fast) or fp32. int8 is the "
                                   + "default and runs where the model file has the activation ranges it needs "
                                   + "(the bundled models and those `dedog train` writes); other files run fp32.",
                                   valueName: "int8|fp32")
}
