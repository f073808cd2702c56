import Foundation
import DedogNN

/// A taught breed as a file of its own (`dedog learn --export`), for another model of the same backbones (`dedog
/// learn --import`): a breed club teaches its breed once and hands it to every user. It holds what the breed's head
/// rows are made from (`TaughtBreed.write`): the breed's label, its confirmed photos' entries and each backbone's
/// unit feature rows of them, and the typical length of their features on each backbone; and which backbones those
/// features are of (`Backbone.fingerprint`: the weights and input), since another backbone's features mean nothing.
///
/// A safetensors file: the description below as JSON under the metadata key `dedog.taughtBreed`, and one F32 tensor
/// `features.<b>` of [photos × 1280] unit rows for each backbone b. Files come from strangers: reading checks every
/// field and value (`init(_:file:)`), and a file that is not one is refused with what is wrong, never half read.
public struct TaughtBreedFile: Sendable, Equatable {
    /// One backbone the features are of.
    public struct Backbone: Codable, Sendable, Equatable {
        /// The architecture's name (`efficientnet-lite1`), for messages.
        public var architecture: String
        /// The backbone's identity: a hash of its tensors and input (the training feature cache's key), equal in
        /// every model file that holds the same backbone.
        public var fingerprint: String
        /// The typical length of the photos' features on this backbone (`Taught.featureLength`).
        public var featureLength: Float

        public init(architecture: String, fingerprint: String, featureLength: Float) {
            self.architecture = architecture
            self.fingerprint = fingerprint
            self.featureLength = featureLength
        }
    }

    /// The breed: its key (the label the model names it by), name, catalogue id and kind. Its `taught` is set by
    /// the model that imports it, from `backbones`.
    public var label: Label
    public var backbones: [Backbone]
    /// The photos it was taught from, each with a row of unit features for every backbone.
    public var photos: ConfirmedPhotos

    public static let metadataKey = "dedog.taughtBreed"
    public static let formatVersion = 1
    /// More photos than this in one file are refused: a breed is taught from a few, and grows by tens.
    public static let mostPhotos = 10_000
    /// The longest name, key, catalogue id or photo entry a file may give.
    static let longestText = 300

    public init(label: Label, backbones: [Backbone], photos: ConfirmedPhotos) throws(ModelError) {
        self.label = Label(key: label.key, name: label.name, isDog: true, breed: label.breed, kind: label.kind)
        self.backbones = backbones
        self.photos = photos
        if let problem = problem() { throw .badInput(detail: "a taught breed's file cannot be made: \(problem)") }
    }

    /// The description as stored.
    private struct Description: Codable {
        var formatVersion: Int
        var label: Label
        var backbones: [Backbone]
        var photos: [ConfirmedPhoto]
    }

    /// The file's bytes.
    public func encoded() throws(ModelError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            let json = try encoder.encode(Description(formatVersion: Self.formatVersion, label: label, backbones: backbones,
                                                      photos: photos.photos))
            let tensors = backbones.indices.map { b in
                (name: "features.\(b)", shape: [photos.count, EfficientNetLite.featureCount], values: photos.features[b])
            }
            return try SafeTensors.encode(tensors, metadata: [Self.metadataKey: String(decoding: json, as: UTF8.self)])
        } catch {
            throw .invalidMetadata(file: label.name, detail: "cannot encode the taught breed: \(error)")
        }
    }

    /// Reads and checks a taught breed's file, `bytes` read from `file` (named in errors).
    public init(_ bytes: Data, file: String) throws(ModelError) {
        let tensors = try SafeTensors(bytes, file: file)
        guard let json = tensors.metadata[Self.metadataKey] else {
            throw .invalidMetadata(file: file, detail: "not a taught breed's file (no \"\(Self.metadataKey)\" in its metadata)")
        }
        struct Version: Decodable { var formatVersion: Int }
        guard let version = try? JSONDecoder().decode(Version.self, from: Data(json.utf8)).formatVersion else {
            throw .invalidMetadata(file: file, detail: "the taught breed's description is not valid JSON with a formatVersion")
        }
        guard version == Self.formatVersion else {
            throw .unsupportedVersion(file: file, version: version, supported: Self.formatVersion)
        }
        let description: Description
        do {
            description = try JSONDecoder().decode(Description.self, from: Data(json.utf8))
        } catch {
            throw .invalidMetadata(file: file, detail: "the taught breed's description is incomplete or of the wrong types")
        }
        let n = description.photos.count, width = EfficientNetLite.featureCount
        guard (1...Self.mostPhotos).contains(n) else {
            throw .invalidValue(file: file, field: "photos", value: "\(n)", requirement: "1 to \(Self.mostPhotos) photos")
        }
        let counts = ModelDescription.backboneCounts
        guard counts.contains(description.backbones.count) else {
            throw .invalidValue(file: file, field: "backbones", value: "\(description.backbones.count)",
                                requirement: "\(counts.lowerBound) to \(counts.upperBound) backbones")
        }
        let expected = Set(description.backbones.indices.map { "features.\($0)" })
        if let extra = tensors.entries.keys.sorted().first(where: { !expected.contains($0) }) {
            throw .unexpectedTensor(file: file, name: extra)
        }
        var features: [[Float]] = []
        for name in expected.sorted(by: { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }) {
            guard let entry = tensors.entries[name] else { throw .missingTensor(file: file, name: name) }
            guard entry.dtype == "F32" else { throw .wrongDType(file: file, name: name, found: entry.dtype) }
            guard entry.shape == [n, width] else { throw .wrongShape(file: file, name: name, expected: [n, width], found: entry.shape) }
            let rows = try tensors.floats(name, shape: [n, width])
            guard rows.allSatisfy(\.isFinite) else { throw .nonFiniteValues(file: file, name: name) }
            // Unit rows, as learning stores them: anything else was not made by dedog.
            for i in 0..<n {
                let length = rows[(i * width)..<((i + 1) * width)].reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
                guard abs(length - 1) < 1e-3 else {
                    throw .invalidValue(file: file, field: name, value: "a row of length \(length)", requirement: "unit rows")
                }
            }
            features.append(rows)
        }
        label = description.label
        backbones = description.backbones
        photos = ConfirmedPhotos(aligned: description.photos, features: features)
        if let problem = problem() { throw .invalidMetadata(file: file, detail: problem) }
    }

    /// What is wrong with the description, or nil.
    private func problem() -> String? {
        let texts = [label.key, label.name] + [label.breed].compactMap { $0 } + backbones.flatMap { [$0.architecture, $0.fingerprint] }
            + photos.photos.flatMap { [$0.label, $0.photo, $0.fingerprint, $0.added] }
        if label.key.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || label.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return "the breed has no key or name"
        }
        if texts.contains(where: { $0.count > Self.longestText || $0.contains(where: { $0.isNewline }) }) {
            return "a name or entry longer than \(Self.longestText) characters or of several lines"
        }
        if let p = photos.photos.first(where: { $0.label != label.key }) {
            return "the photo \"\(p.photo)\" is of \"\(p.label)\", not of the file's breed \"\(label.key)\""
        }
        if photos.backboneCount != backbones.count { return "features for \(photos.backboneCount) backbones, \(backbones.count) described" }
        if let b = backbones.first(where: { !($0.featureLength.isFinite && $0.featureLength > 0) }) {
            return "a backbone's feature length of \(b.featureLength) (a positive number is needed)"
        }
        if photos.isEmpty { return "no photos" }
        return nil
    }
}
