// swift-tools-version:6.0
// libFuzzer harnesses for the code that reads files from strangers. Separate from the main package because a
// fuzzer executable has no main of its own (libFuzzer provides it). Built and run by scripts/fuzz.
import PackageDescription

let package = Package(
    name: "dedog-fuzz",
    dependencies: [.package(name: "dedog", path: "..")],
    targets: [
        .executableTarget(name: "DedogFuzz", dependencies: [
            .product(name: "Dedog", package: "dedog"),
            .product(name: "DedogCatalogue", package: "dedog"),
            .product(name: "DedogImage", package: "dedog"),
            .product(name: "DedogNN", package: "dedog"),
            .product(name: "DedogBreedModel", package: "dedog"),
        ]),
    ]
)
