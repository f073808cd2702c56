import Foundation
import DedogFiles
import DedogNN
import DedogBreedModel
import DedogTrain
import DedogCatalogue

/// Taught breeds shared between models: `export` writes one to a file of its own (`TaughtBreedFile`), `import` adds it
/// to another model of the same backbones, as if its photos had been learned there: a breed club teaches its breed
/// once and hands it to every user.
extension Confirmations {
    public struct ExportReport: Sendable {
        /// The breed written.
        public var label: ModelInfo.Label
        public var photos: Int
        /// The file's size in bytes.
        public var bytes: Int
    }

    public struct ImportReport: Sendable {
        /// The breed added or grown.
        public var label: ModelInfo.Label
        /// Whether the model did not know the breed before (otherwise its taught breed took in the file's photos).
        public var taughtNewBreed: Bool
        /// The file's photos added, and those the model had already (by content).
        public var added: Int
        public var alreadyKnown: Int
        /// Confirmed photos in the model afterwards.
        public var confirmedCount: Int
    }

    /// The largest taught breed's file `import` reads (a file of `TaughtBreedFile.mostPhotos` photos on three
    /// backbones is about 150 MB; a breed of a few hundred photos, a few MB).
    public static let largestSharedBreed = 200 << 20

    /// What is wrong with a taught breed's file, without the words for model files a `ModelError` says.
    static func reason(_ error: ModelError) -> String {
        switch error {
        case let .unreadable(_, reason): return reason
        case let .malformedHeader(_, detail), let .invalidMetadata(_, detail): return detail
        case let .invalidValue(_, field, value, requirement): return "\(field) is \(value), where \(requirement) are needed"
        case let .unsupportedVersion(_, version, supported): return "it is of format \(version), and this dedog reads format \(supported)"
        case let .missingTensor(_, name): return "it has no tensor \(name)"
        case let .unexpectedTensor(_, name): return "it has a tensor \(name) that no taught breed has"
        case let .wrongShape(_, name, expected, found): return "its tensor \(name) is of shape \(found), not \(expected)"
        case let .wrongDType(_, name, found): return "its tensor \(name) is \(found), not F32"
        case let .nonFiniteValues(_, name): return "its tensor \(name) holds values that are not finite numbers"
        default: return error.description
        }
    }

    /// Each backbone's fingerprint in the model file `tensors` described by `spec` (`FeatureExtractor.fingerprint`):
    /// what a taught breed's file must have been made on.
    static func fingerprints(_ tensors: SafeTensors, _ spec: ModelDescription) -> [String] {
        spec.backbones.indices.map { FeatureExtractor.fingerprint(of: tensors, model: spec, backbone: $0) }
    }

    /// Writes the taught breed `breed` (any name `learn` takes for it) of the model at `url` to `file`, atomically.
    /// A breed the model was trained on is refused (`notTaught`): only taught breeds travel.
    public static func export(breed: String, model url: URL, catalogue: Catalogue?, to file: URL) throws(ClassifierError) -> ExportReport {
        let (tensors, model) = try load(url)
        let label = try label(named: breed.trimmingCharacters(in: .whitespacesAndNewlines), in: model, catalogue: catalogue)
        guard label.taught != nil else { throw .notTaught(name: catalogue?.breed(id: label.breed, label: label.key)?.name.en ?? label.name) }
        let photos = model.confirmedPhotos.filter { $0.label == label.key }
        let spec = model.specification
        let backbones = zip(spec.backbones, fingerprints(tensors, spec)).map { backbone, fingerprint in
            TaughtBreedFile.Backbone(architecture: backbone.architecture, fingerprint: fingerprint,
                                     featureLength: backbone.breedHead?.labels.first { $0.key == label.key }?.taught?.featureLength ?? 0)
        }
        let bytes: Data
        do {
            bytes = try TaughtBreedFile(label: label, backbones: backbones, photos: photos).encoded()
        } catch {
            throw .model(error)
        }
        do {
            try AtomicFile.write(bytes, to: file.path)
        } catch {
            throw .model(.cannotWrite(file: file.path, reason: error.description))
        }
        var reported = ModelInfo.Label(label)
        reported.taught = true
        return ExportReport(label: reported, photos: photos.count, bytes: bytes.count)
    }

    /// Adds the taught breed in `file` (from `export`) to the model at `url`, written back atomically: a breed the
    /// model does not know is taught from the file's photos, one it was taught already takes in those it lacks. A
    /// file made on other backbones (`otherBackbones`), a breed the model was trained on (`alreadyTrained`) and a file
    /// that is not a taught breed's are refused, the model left as it was.
    public static func importBreed(from file: URL, model url: URL) throws(ClassifierError) -> ImportReport {
        let shared: TaughtBreedFile
        do {
            shared = try TaughtBreedFile(try FileReader.readData(file.path, limit: largestSharedBreed), file: file.path)
        } catch let error as FileError {
            throw .notASharedBreed(file: file.path, reason: error.description)
        } catch let error as ModelError {
            throw .notASharedBreed(file: file.path, reason: Self.reason(error))
        } catch {
            throw .notASharedBreed(file: file.path, reason: "\(error)")
        }
        let (tensors, model) = try load(url)
        guard let labels = model.breedLabels else {
            throw .notTrainable(reason: "it has no breed head of its own (it is an ImageNet base); train one with dedog train first")
        }
        let spec = model.specification
        let ours = fingerprints(tensors, spec)
        guard shared.backbones.map(\.fingerprint) == ours else {
            throw .otherBackbones(file: file.lastPathComponent,
                                  taughtOn: shared.backbones.map { "\($0.architecture) (\($0.fingerprint))" },
                                  model: zip(spec.backbones, ours).map { "\($0.architecture) (\($1))" })
        }
        let key = shared.label.key
        let existing = labels.first { $0.key == key || (shared.label.breed != nil && $0.breed == shared.label.breed) }
        if let existing, existing.taught == nil { throw .alreadyTrained(name: existing.name) }
        // A breed taught here already under another key (the same catalogue breed) takes the photos under its own.
        let target = existing?.key ?? key
        var confirmed = model.confirmedPhotos
        var added = 0
        let before = confirmed.photos.filter { $0.label == target }.count
        for i in shared.photos.photos.indices {
            var photo = shared.photos.photos[i]
            photo.label = target
            do throws(ModelError) {
                if try confirmed.confirm(photo, features: shared.backbones.indices.map { Array(shared.photos.features(of: i, backbone: $0)) }) {
                    added += 1
                }
            } catch {
                throw .model(error)
            }
        }
        let known = shared.photos.count - added
        let taughtNewBreed = existing == nil
        if added > 0 {
            try rewrite(tensors, model, confirmed, to: url,
                        labels: teaching(existing ?? shared.label, isNew: taughtNewBreed, before: before, added: added,
                                         lengths: shared.backbones.map(\.featureLength)))
        }
        var reported = ModelInfo.Label(existing ?? shared.label)
        reported.taught = true
        return ImportReport(label: reported, taughtNewBreed: taughtNewBreed && added > 0, added: added, alreadyKnown: known,
                            confirmedCount: confirmed.count)
    }
}
