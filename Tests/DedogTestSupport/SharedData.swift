import Foundation
import Testing

/// The read-only data beside the repository (`../shared`): datasets and golden reference tensors.
/// Tests that need it skip with a message when it is absent, so a fresh clone's test run still passes.
public enum SharedData {
    /// `../shared`, or `$DEDOG_SHARED` when set.
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["DEDOG_SHARED"] { return URL(fileURLWithPath: path) }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }()

    /// The folder holding Package.swift.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let reference = root.appendingPathComponent("reference/efficientnet-lite0")
    public static let stanfordDogs = root.appendingPathComponent("datasets/stanford-dogs-224")
    public static let breedFacts = root.appendingPathComponent("breed-facts")
    public static let petsReal = root.appendingPathComponent("datasets/pets-real")
    /// Owners' photos of their own dogs, of breeds the bundled models know (for checks only: nothing is fitted on them).
    public static let amateurPets = root.appendingPathComponent("datasets/amateur-pets/known")
    /// A real cat photo of pets-real, answered "no dog, it looks like a cat" by both bundled models (a tabby on a
    /// sofa; the ImageNet heads alone put 7 % on dogs).
    public static let cat = petsReal.appendingPathComponent("cats/cat.1.jpg")

    public static var hasReference: Bool {
        FileManager.default.fileExists(atPath: reference.appendingPathComponent("input.f32").path)
    }

    /// A raw little-endian float32 file.
    public static func floats(_ url: URL) throws -> [Float] {
        let data = try Data(contentsOf: url)
        return data.withUnsafeBytes { raw in
            (0..<data.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    /// A reference tensor by file name, e.g. `"logits.f32"`.
    public static func referenceTensor(_ name: String) throws -> [Float] {
        try floats(reference.appendingPathComponent(name))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when ../shared/reference/efficientnet-lite0 is present.
    public static var needsReference: Self {
        .enabled(if: SharedData.hasReference, "../shared/reference/efficientnet-lite0 is absent: golden test skipped")
    }

    /// Runs the test only when ../shared/datasets/pets-real is present.
    public static var needsPetsReal: Self {
        .enabled(if: FileManager.default.fileExists(atPath: SharedData.cat.path),
                 "../shared/datasets/pets-real is absent: test on its real cat photo skipped")
    }

    /// Runs the test only when ../shared/datasets/amateur-pets is present.
    public static var needsAmateurPets: Self {
        .enabled(if: FileManager.default.fileExists(atPath: SharedData.amateurPets.path),
                 "../shared/datasets/amateur-pets is absent: test on owners' photos skipped")
    }

    /// Runs the test only when ../shared/datasets/stanford-dogs-224 is present.
    public static var needsStanfordDogs: Self {
        .enabled(if: FileManager.default.fileExists(atPath: SharedData.stanfordDogs.appendingPathComponent("splits/train.txt").path),
                 "../shared/datasets/stanford-dogs-224 is absent: test on its photos skipped")
    }
}
