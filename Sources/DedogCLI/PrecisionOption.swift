import ArgumentParser
import Dedog

extension Precision: ExpressibleByArgument {
    /// The `--precision` help every command that runs the network shows.
    public static let help = ArgumentHelp("The network's arithmetic: int8 (8 bits, about twice as fast where the CPU has "
                                   + "AVX-512 VNNI, the default there) or fp32 (the default elsewhere: without VNNI "
                                   + "the 8-bit kernels are slower than the float ones). int8 needs the activation "
                                   + "ranges the bundled models and those `dedog train` writes have; other files run fp32.",
                                   valueName: "int8|fp32")
}

extension PhotoFit: ExpressibleByArgument {}
