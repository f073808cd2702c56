import Foundation
import DedogFiles
import DedogImage

/// An ImageFolder tree: one sub-folder per class, images inside found by content (recursively).
public struct Dataset: Sendable {
    public struct Sample: Sendable, Equatable {
        /// Path relative to the dataset root, e.g. `n02085620-Chihuahua/n02085620_10074.jpg`.
        public let path: String
        public let label: Int

        public init(path: String, label: Int) {
            self.path = path
            self.label = label
        }
    }

    public let root: URL
    /// Class folder names, sorted; a label is an index into this.
    public let classes: [String]
    public let samples: [Sample]
    /// Files inside class folders that are not images, with the reason.
    public let skipped: [(path: String, reason: String)]

    /// Scans `root`. Hidden files and folders are ignored; empty class folders are not classes.
    public init(root: URL) throws(TrainError) {
        self.root = root
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw .datasetUnreadable(path: root.path, reason: "no such folder")
        }
        let entries: [String]
        do {
            entries = try fm.contentsOfDirectory(atPath: root.path).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            throw .datasetUnreadable(path: root.path, reason: "cannot list it")
        }
        var classes: [String] = []
        var samples: [Sample] = []
        var skipped: [(String, String)] = []
        for name in entries {
            var sub: ObjCBool = false
            guard fm.fileExists(atPath: root.appendingPathComponent(name).path, isDirectory: &sub), sub.boolValue else { continue }
            var found: [String] = []
            var notImages: [(String, String)] = []
            ImageFiles.find([root.appendingPathComponent(name).path]) { item in
                switch item {
                case let .image(path): found.append(path)
                case let .skipped(path, reason): notImages.append((Self.relative(path, to: root), reason))
                }
            }
            // A folder without images (e.g. `splits/`) is not a class, and its files are none of our business.
            guard !found.isEmpty else { continue }
            skipped += notImages
            let label = classes.count
            classes.append(name)
            samples += found.map { Sample(path: Self.relative($0, to: root), label: label) }
        }
        guard classes.count >= 2 else {
            throw .datasetTooSmall(path: root.path, detail: "found \(classes.count) class folder(s) with images")
        }
        self.classes = classes
        self.samples = samples
        self.skipped = skipped
    }

    static func relative(_ path: String, to root: URL) -> String {
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    public func url(_ sample: Sample) -> URL { root.appendingPathComponent(sample.path) }

    /// The samples listed in a split file (`<class>/<file><TAB><class>` per line), in the file's order.
    public func samples(listedIn file: URL) throws(TrainError) -> [Sample] {
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(file.path, limit: 256 << 20)
        } catch {
            throw .splitFile(path: file.path, line: 0, detail: "\(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .splitFile(path: file.path, line: 0, detail: "the file is not UTF-8 text")
        }
        let byPath = Dictionary(samples.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [Sample] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let path = String(trimmed.split(separator: "\t").first ?? "")
            guard let sample = byPath[path] else {
                throw .splitFile(path: file.path, line: i + 1, detail: "\(path) is not an image of the dataset")
            }
            out.append(sample)
        }
        return out
    }

    /// A stratified split: from each class, `fraction` of its samples (at least one, if it has two or more)
    /// chosen by a seeded shuffle go to validation. Same seed, same split.
    public func stratifiedSplit(validationFraction fraction: Double, seed: UInt64) -> (train: [Sample], validation: [Sample]) {
        Self.stratified(samples, classes: classes.count, fraction: fraction, seed: seed)
    }

    static func stratified(_ samples: [Sample], classes: Int, fraction: Double, seed: UInt64)
        -> (train: [Sample], validation: [Sample]) {
        var rng = SplitMix64(seed: seed)
        var train: [Sample] = [], validation: [Sample] = []
        for label in 0..<classes {
            var members = samples.filter { $0.label == label }
            rng.shuffle(&members)
            let count = members.count >= 2 ? max(1, Int((Double(members.count) * fraction).rounded())) : 0
            validation += members.prefix(count)
            train += members.dropFirst(count)
        }
        return (train, validation)
    }
}

/// A small, fast, seedable generator (Steele et al.'s SplitMix64): the only randomness training uses.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fisher–Yates with this generator (the standard library's shuffle may change between releases).
    public mutating func shuffle<T>(_ a: inout [T]) {
        guard a.count > 1 else { return }
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            let j = Int(next() % UInt64(i + 1))
            a.swapAt(i, j)
        }
    }

    /// A normal deviate (Box–Muller).
    public mutating func normal() -> Float {
        let u1 = max(Double(next() >> 11) / Double(1 << 53), 1e-300), u2 = Double(next() >> 11) / Double(1 << 53)
        return Float((-2 * Foundation.log(u1)).squareRoot() * Foundation.cos(2 * .pi * u2))
    }
}
