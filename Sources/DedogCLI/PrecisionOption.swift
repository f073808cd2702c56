import ArgumentParser
import Dedog

extension Precision: ExpressibleByArgument {
    /// The `--precision` help every command that runs the network shows.
    public static let help = ArgumentHelp("The network's arithmetic: int8 (8 bits, the default: the same answers on "
                                   + "every CPU, faster than floats, top-1 within 0.3 points of them) or fp32. int8 "
                                   + "needs the activation ranges the bundled models and those `dedog train` writes "
                                   + "have; other files run fp32.",
                                   valueName: "int8|fp32")
}

extension PhotoFit: ExpressibleByArgument {}
