// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "dedog",
    products: [
        .executable(name: "dedog", targets: ["DedogCommand"]),
        .library(name: "Dedog", targets: ["Dedog"]),
        .library(name: "DedogImage", targets: ["DedogImage"]),
        .library(name: "DedogNN", targets: ["DedogNN"]),
        .library(name: "DedogBreedModel", targets: ["DedogBreedModel"]),
        .library(name: "DedogFiles", targets: ["DedogFiles"]),
        .library(name: "DedogCatalogue", targets: ["DedogCatalogue"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // dedog serve: the HTTP server, its shutdown on signals, one log line per request, Prometheus metrics, and the
        // multipart parser (Hummingbird has none).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
    ],
    targets: [
        // C libraries enter through thin system-library shims (Debian packages, see scripts/install-deps).
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux",
                       providers: [.apt(["libwebp-dev"])]),

        // SQLite, for the record of the photos `dedog tag` has looked at (DedogRecord): a dozen statements through its
        // C interface, where GRDB.swift would add 1.5 minutes to every fresh build on 2 cores for features unused.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),

        // Exempi, the Adobe XMP toolkit with a C interface (BSD licence): it parses and writes the XMP sidecars
        // `dedog tag` merges keywords into, keeping everything else in them (see DedogSidecar).
        .systemLibrary(name: "CExempi", pkgConfig: "exempi-2.0",
                       providers: [.apt(["libexempi-dev"])]),
        // Exempi prints each error it meets to std::cerr: a few lines of C++ silence it around exempi's calls; and
        // syncfs, which Swift's Glibc module does not declare.
        .target(name: "CSidecar"),

        // libheif, opened on first use rather than linked: it and its codecs cost every process some 4 ms at start.
        .target(name: "CHeif", linkerSettings: [.linkedLibrary("dl")]),

        // libjpeg's own error manager, to tell its harmless warnings from damage (TurboJPEG reports only text).
        .target(name: "CJPEGScan", linkerSettings: [.linkedLibrary("jpeg")]),

        // The engine's compute kernels in C: portable, AVX2 and AVX-512 builds of each, chosen at run time.
        .target(name: "DedogKernels"),

        // Files from strangers: bounded reads of regular files only; atomic writes with plain-words errors.
        .target(name: "DedogFiles"),
        // The few concurrency primitives dedog uses, each with the guarantee it gives: the engine's worker pool,
        // parallel maps, threads for blocking work, ordered results, a bounded pool of workspaces, a value read ahead.
        .target(name: "DedogConcurrency"),
        // XMP sidecars beside photos: keywords merged into what is there, written atomically; dedog's own record.
        .target(name: "DedogSidecar", dependencies: ["DedogFiles", "CExempi", "CSidecar"]),
        // What `dedog tag` has looked at, so that a re-run looks only at what is new: a SQLite file per user.
        .target(name: "DedogRecord", dependencies: ["CSQLite"]),
        // Pixels: decoding, orientation, resizing, cropping, normalisation.
        .target(name: "DedogImage", dependencies: ["DedogFiles", "CTurboJPEG", "CJPEGScan", "CPNG", "CHeif", "CWebP"]),
        // The inference engine: kernels, layers, execution plans, sessions, safetensors, EfficientNet-Lite backbones.
        // It knows networks, not breeds.
        .target(name: "DedogNN", dependencies: ["DedogFiles", "DedogKernels", "DedogConcurrency"]),
        // What a model file means: its description, the heads on each backbone's features and their labels, the
        // photos users confirmed, and the verdict (no dog, unsure, another breed, a breed) with its thresholds.
        .target(name: "DedogBreedModel", dependencies: ["DedogFiles", "DedogConcurrency", "DedogNN"]),
        // Transfer learning: dataset scan, feature cache, head training, calibration, metrics.
        .target(name: "DedogTrain", dependencies: ["DedogFiles", "DedogConcurrency", "DedogImage", "DedogNN", "DedogBreedModel", "DedogCatalogue"]),
        // The breed catalogue (English + Czech), built by scripts/build-catalogue, and its search.
        .target(name: "DedogCatalogue", dependencies: ["DedogFiles", "DedogConcurrency"], resources: [.copy("Resources/breeds.json")]),
        // The facade: image in, ranked breeds out; training and evaluation entry points.
        .target(name: "Dedog", dependencies: ["DedogFiles", "DedogConcurrency", "DedogImage", "DedogNN", "DedogBreedModel", "DedogTrain", "DedogCatalogue", "DedogSidecar", "DedogRecord"]),
        // The HTTP front end (`dedog serve`): routes, limits, auth, metrics, on the same facade as the CLI.
        .target(name: "DedogServer", dependencies: [
            "Dedog", "DedogFiles", "DedogCatalogue",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "MultipartKit", package: "multipart-kit"),
        ], resources: [.copy("Resources/openapi.json"), .copy("Resources/web")]),
        // The command line's commands: parse, print, set exit codes.
        .target(name: "DedogCLI", dependencies: [
            "Dedog", "DedogFiles", "DedogCatalogue",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The `dedog` executable: the command line's commands and `serve`, the two front ends side by side.
        .executableTarget(name: "DedogCommand", dependencies: [
            "DedogCLI", "DedogServer", "Dedog", "DedogCatalogue", "DedogFiles",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Timing probes for scripts/bench-*; not shipped as a product.
        .executableTarget(name: "DedogBench", dependencies: ["Dedog", "DedogConcurrency", "DedogImage", "DedogNN", "DedogBreedModel", "DedogTrain", "DedogCatalogue"]),

        .target(name: "DedogTestSupport", dependencies: ["DedogImage"], path: "Tests/DedogTestSupport"),
        .testTarget(name: "DedogFilesTests", dependencies: ["DedogFiles"]),
        .testTarget(name: "DedogConcurrencyTests", dependencies: ["DedogConcurrency"]),
        .testTarget(name: "DedogRecordTests", dependencies: ["DedogRecord", "CSQLite"]),
        .testTarget(name: "DedogSidecarTests", dependencies: ["DedogSidecar", "DedogTestSupport"]),
        .testTarget(name: "DedogImageTests", dependencies: ["DedogImage", "DedogTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "DedogNNTests", dependencies: ["DedogNN", "DedogBreedModel", "DedogImage", "DedogTestSupport"]),
        .testTarget(name: "DedogBreedModelTests", dependencies: ["DedogBreedModel", "DedogNN", "DedogFiles", "DedogTestSupport"],
                    exclude: ["Fixtures"]),  // read by path (SharedData.packageRoot), as the golden tests read ../shared
        .testTarget(name: "DedogCatalogueTests", dependencies: ["DedogCatalogue", "DedogTestSupport"]),
        .testTarget(name: "DedogTrainTests", dependencies: ["DedogTrain", "DedogNN", "DedogBreedModel", "DedogCatalogue", "DedogTestSupport"]),
        .testTarget(name: "DedogTests", dependencies: ["Dedog", "DedogFiles", "DedogImage", "DedogNN", "DedogBreedModel", "DedogTrain", "DedogCatalogue", "DedogTestSupport"]),
        .testTarget(name: "DedogServerTests", dependencies: [
            "DedogServer", "Dedog", "DedogNN", "DedogBreedModel", "DedogCatalogue", "DedogImage", "DedogTestSupport",
            .product(name: "HummingbirdTesting", package: "hummingbird"),
        ]),
        .testTarget(name: "DedogCLITests", dependencies: ["DedogCommand", "DedogCLI", "Dedog", "DedogFiles", "DedogImage", "DedogNN", "DedogBreedModel", "DedogTrain", "DedogCatalogue", "DedogTestSupport"]),
    ]
)
