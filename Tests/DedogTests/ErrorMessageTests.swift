import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogImage
import DedogTrain

/// The libraries say what is wrong; which flag changes it is the command line's to say (`DedogCLI/Advice.swift`),
/// and which request field the API's. These are the errors whose messages named flags before.
@Suite struct ErrorMessageTests {
    static let errors: [any Error & CustomStringConvertible] = [
        ImageError.tooLarge(file: "big.png", width: 20_000, height: 20_000, limit: 100_000_000),
        ClassifierError.image(.tooLarge(file: "big.png", width: 20_000, height: 20_000, limit: 100_000_000)),
        ClassifierError.noModel(name: "default", searched: ["/usr/share/dedog/dedog-breeds.safetensors"]),
        ClassifierError.unknownBreed(name: "wolf", known: ["beagle"]),
        TrainError.cache(path: "/tmp/cache", reason: "disk full"),
        TrainError.memoryLimit(task: "training on 25 images", needed: 201 << 20, limit: 150 << 20),
        TrainError.inputTooLarge(backbone: "lite2", size: 1060, limit: 1024),
        CatalogueError.notInstalled(searched: ["/usr/share/dedog/breeds.json"]),
    ]

    @Test func libraryMessagesNameNoCommandLineFlags() {
        for error in Self.errors {
            #expect(!error.description.contains("--"), "\(error.description)")
            #expect(!error.description.contains("DEDOG_"), "\(error.description)")
            #expect(!error.description.contains("dedog "), "\(error.description)")
        }
        #expect(TrainError.inputTooLarge(backbone: "lite2", size: 1060, limit: 1024).description
                == "lite2 would classify at 1060 pixels, over the engine's 1024.")
    }
}
