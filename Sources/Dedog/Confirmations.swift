import Foundation
import DedogFiles
import DedogImage
import DedogNN
import DedogBreedModel
import DedogTrain
import DedogCatalogue

/// Confirmed photos, kept in the model file: `learn` adds photos a user says show a breed, and the model's later
/// answers change at once (`Model.breedScores`, `Model.similarities`); `forget` takes them out again. The
/// backbones and heads are not retrained, and the original dataset is not needed.
///
/// ```swift
/// let report = try Confirmations.learn(photos: [URL(fileURLWithPath: "rex.jpg")], breed: "čivava",
///                               model: URL(fileURLWithPath: "mydogs.safetensors"), catalogue: try .bundled())
/// ```
public enum Confirmations {
    /// What `learn` did with each photo.
    public struct Learned: Sendable {
        public var photo: String
        /// The photo's content hash: what `forget(fingerprints:…)` takes to undo it.
        public var fingerprint: String
        /// The model's answer before learning, and after.
        public var before: Classification
        public var after: Classification?
        /// False when the same photo (by content) was already confirmed.
        public var added: Bool
    }

    public struct LearnReport: Sendable {
        /// The label the photos were learned as.
        public var label: Label
        public var photos: [Learned]
        /// Photos that could not be read, and why (nothing else stopped).
        public var failed: [(photo: String, message: String)]
        /// Confirmed photos in the model afterwards.
        public var confirmedCount: Int
    }

    /// The breed label `name` stands for in `model`: its key or name, or (through `catalogue`) any English or
    /// Czech name or alias of the catalogue breed behind one of its labels.
    public static func label(named name: String, in model: Model, catalogue: Catalogue?) throws(ClassifierError) -> Label {
        guard let labels = model.breedLabels else {
            throw .notTrainable(reason: "it has no breed head of its own (it is an ImageNet base); train one with dedog train first")
        }
        if let l = labels.first(where: { $0.key == name || Catalogue.sameName($0.key, name) || Catalogue.sameName($0.name, name) }) {
            return l
        }
        if let breed = catalogue?.match(className: name).breed,
           let l = labels.first(where: { $0.breed == breed.id || breed.labels.contains($0.key) }) {
            return l
        }
        let names = labels.map { catalogue?.breed(id: $0.breed, label: $0.key)?.name.en ?? $0.name }
        throw .unknownBreed(name: name, known: names)
    }

    /// Adds `photos` to the confirmed photos of the model file at `url` as showing `breed`, and writes the file back
    /// atomically. Photos already remembered (same content) are not added twice.
    public static func learn(photos: [URL], breed: String, model url: URL, catalogue: Catalogue?,
                             threads: Int = 1) throws(ClassifierError) -> LearnReport {
        try learn(photos.map { .file($0) }, breed: breed, model: url, catalogue: catalogue, threads: threads)
    }

    /// A photo to learn: a file, or bytes received with a name for messages (the server's uploads).
    public enum Photo: Sendable {
        case file(URL)
        case bytes([UInt8], name: String)
    }

    /// As `learn(photos:…)`, for files or received bytes.
    public static func learn(_ photos: [Photo], breed: String, model url: URL, catalogue: Catalogue?,
                             threads: Int = 1) throws(ClassifierError) -> LearnReport {
        let (tensors, model) = try load(url)
        let label = try label(named: breed, in: model, catalogue: catalogue)
        let classifier = try Classifier(model: model, modelURL: url, configuration: .init(threadsPerWorker: threads))
        var confirmed = model.confirmedPhotos
        var learned: [Learned] = [], failed: [(String, String)] = []
        var learnedFeatures: [[[Float]]] = []
        let now = ISO8601DateFormatter().string(from: Date())
        for photo in photos {
            let bytes: [UInt8], image: RGBImage
            // For messages, for the report, and for the confirmed photo's entry.
            let (name, reported, shortName): (String, String, String)
            switch photo {
            case let .file(url): (name, reported, shortName) = (url.relativePath, url.path, url.lastPathComponent)
            case let .bytes(_, given): (name, reported, shortName) = (given, given, given)
            }
            do throws(ImageError) {
                let decoder = ImageDecoder(options: classifier.decoderOptions)
                switch photo {
                case let .file(url): bytes = try decoder.read(url)
                case let .bytes(given, _): bytes = given
                }
                image = try decoder.decode(bytes, name: name)
            } catch {
                failed.append((name, error.description))
                continue
            }
            var hash = ContentHash()
            hash.update(bytes)
            let fingerprint = hash.hex
            let features = try classifier.features(of: image)
            let before = try classifier.decide(features: features, top: 3)
            let known = confirmed.photos.contains { $0.fingerprint == fingerprint && $0.label == label.key }
            learned.append(Learned(photo: reported, fingerprint: fingerprint, before: before, after: nil, added: !known))
            guard !known else { continue }
            // A photo remembered as another breed is corrected, not kept twice.
            confirmed.removeAll { $0.fingerprint == fingerprint }
            do throws(ModelError) {
                try confirmed.append(ConfirmedPhoto(label: label.key, photo: shortName, fingerprint: fingerprint, added: now),
                                     features: features.map(Model.direction))
            } catch {
                throw .model(error)
            }
            learnedFeatures.append(features)
        }
        if learned.contains(where: \.added) {
            try write(tensors, model, confirmed, to: url)
            // The answers afterwards, from the file as written.
            let updated = try Classifier(modelURL: url, threads: threads)
            var k = 0
            for i in learned.indices where learned[i].added {
                learned[i].after = try updated.decide(features: learnedFeatures[k], top: 3)
                k += 1
            }
        }
        return LearnReport(label: label, photos: learned, failed: failed, confirmedCount: confirmed.count)
    }

    public struct ForgetReport: Sendable {
        /// The confirmed photos taken out.
        public var removed: [ConfirmedPhoto]
        public var confirmedCount: Int
    }

    /// Takes out of the confirmed photos of the model at `url` the given photos (matched by content), or every photo of
    /// `breed`, or everything when both are nil; writes the file back atomically when anything changed.
    public static func forget(photos: [URL]?, breed: String?, model url: URL, catalogue: Catalogue?) throws(ClassifierError) -> ForgetReport {
        var fingerprints: Set<String>? = nil
        if let photos {
            fingerprints = []
            for photo in photos {
                var hash = ContentHash()
                do throws(ImageError) {
                    hash.update(try ImageDecoder().read(photo))
                } catch {
                    throw .image(error)
                }
                fingerprints?.insert(hash.hex)
            }
        }
        return try forget(fingerprints: fingerprints, breed: breed, model: url, catalogue: catalogue)
    }

    /// As `forget(photos:…)`, with the photos given by their fingerprints (`Learned.fingerprint`).
    public static func forget(fingerprints: Set<String>?, breed: String?, model url: URL,
                              catalogue: Catalogue?) throws(ClassifierError) -> ForgetReport {
        let (tensors, model) = try load(url)
        var confirmed = model.confirmedPhotos
        let label = try breed.map { name throws(ClassifierError) in try Self.label(named: name, in: model, catalogue: catalogue) }
        let removed = confirmed.removeAll { photo in
            (label.map { $0.key == photo.label } ?? true) && (fingerprints.map { $0.contains(photo.fingerprint) } ?? true)
        }
        if !removed.isEmpty { try write(tensors, model, confirmed, to: url) }
        return ForgetReport(removed: removed, confirmedCount: confirmed.count)
    }

    /// The confirmed photos of the model at `url`, oldest first.
    public static func photos(model url: URL) throws(ClassifierError) -> [ConfirmedPhoto] {
        try load(url).1.confirmedPhotos.photos
    }

    private static func load(_ url: URL) throws(ClassifierError) -> (SafeTensors, Model) {
        do {
            let tensors = try SafeTensors(contentsOf: url)
            return (tensors, try Model(tensors: tensors))
        } catch {
            throw .model(error)
        }
    }

    private static func write(_ tensors: SafeTensors, _ model: Model, _ confirmed: ConfirmedPhotos,
                              to url: URL) throws(ClassifierError) {
        var description = model.specification
        // Format 1 cannot hold confirmed photos: the file moves to the current format (it still loads the same).
        if description.formatVersion == 1 { description.formatVersion = ModelDescription.currentVersion }
        do {
            try ModelFile.replacingConfirmedPhotos(of: tensors, model: description, with: confirmed, to: url)
        } catch {
            throw .model(error)
        }
    }
}
