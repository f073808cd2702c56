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
        public var label: ModelInfo.Label
        /// Whether the breed was new to the model: taught from these photos (`TaughtBreed`).
        public var taughtNewBreed: Bool
        public var photos: [Learned]
        /// Photos that could not be read or show no dog, and why (nothing else stopped).
        public var failed: [Failure]
        /// Confirmed photos in the model afterwards.
        public var confirmedCount: Int
        /// Confirmed photos of `label` in the model afterwards (a taught breed's are all it was taught from).
        public var labelCount: Int
    }

    /// A photo `learn` left out.
    public struct Failure: Sendable {
        public var photo: String
        public var message: String
        /// Read, but the model sees no dog in it (otherwise it could not be read).
        public var noDog: Bool
    }

    /// What `learn` is asked to teach: one of the model's breeds, or a breed it does not know yet.
    enum Target {
        case known(Label)
        case new(Label)
    }

    /// The breed `name` stands for, for `learn`: one of `model`'s (as `label(named:in:catalogue:)` finds it), else a
    /// catalogue breed the model does not know, else, with `allowingNewName`, a new breed of that name. An empty
    /// name, a name several catalogue breeds answer to, and any other name without `allowingNewName` are refused,
    /// saying why (with the closest catalogue names).
    static func target(named raw: String, in model: Model, catalogue: Catalogue?, allowingNewName: Bool) throws(ClassifierError) -> Target {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .emptyBreedName }
        let unknown: ClassifierError
        do throws(ClassifierError) {
            return .known(try label(named: name, in: model, catalogue: catalogue))
        } catch {
            guard case .unknownBreed = error else { throw error }
            unknown = error
        }
        switch catalogue?.match(className: name) {
        case let .breed(breed, _)?:
            return .new(Label(key: breed.id, name: breed.name.en, isDog: true, breed: breed.id, kind: breed.kind))
        case let .ambiguous(breeds)?:
            throw .ambiguousBreed(name: name, candidates: breeds.map { "\($0.name.en) (\($0.id))" })
        case let .unknown(closest)?:
            guard allowingNewName else { throw .notACatalogueBreed(name: name, closest: closest.map(\.name.en)) }
        case nil:
            guard allowingNewName else { throw unknown }
        }
        guard name.count <= 100 else { throw .notACatalogueBreed(name: String(name.prefix(100)) + "…", closest: []) }
        return .new(Label(key: name, name: name, isDog: true))
    }

    /// The breed label `name` stands for in `model`: its key or name, or (through `catalogue`) any English or
    /// Czech name or alias of the catalogue breed behind one of its labels.
    static func label(named name: String, in model: Model, catalogue: Catalogue?) throws(ClassifierError) -> Label {
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
    /// atomically. Photos already remembered (same content) are not added twice. A breed the model does not know (a
    /// catalogue breed, or with `allowingNewName` any name) is taught from the photos (`TaughtBreed`). Photos that
    /// cannot be read or show no dog are left out and said why; when none is left, nothing changes.
    public static func learn(photos: [URL], breed: String, model url: URL, catalogue: Catalogue?,
                             allowingNewName: Bool = false, threads: Int = 1) throws(ClassifierError) -> LearnReport {
        try learn(photos.map { .file($0) }, breed: breed, model: url, catalogue: catalogue, allowingNewName: allowingNewName,
                  threads: threads)
    }

    /// A photo to learn: a file, or bytes received with a name for messages (the server's uploads).
    public enum Photo: Sendable {
        case file(URL)
        case bytes([UInt8], name: String)
    }

    /// As `learn(photos:…)`, for files or received bytes.
    public static func learn(_ photos: [Photo], breed: String, model url: URL, catalogue: Catalogue?,
                             allowingNewName: Bool = false, threads: Int = 1) throws(ClassifierError) -> LearnReport {
        let (tensors, model) = try load(url)
        // A model without a breed head of its own is refused here, by `label(named:)`, before anything is read.
        let target = try target(named: breed, in: model, catalogue: catalogue, allowingNewName: allowingNewName)
        let label: Label
        switch target {
        case let .known(l), let .new(l): label = l
        }
        let classifier = try Classifier(model: model, modelURL: url, configuration: .init(threadsPerWorker: threads))
        var confirmed = model.confirmedPhotos
        var learned: [Learned] = [], failed: [Failure] = []
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
                failed.append(Failure(photo: name, message: error.description, noDog: false))
                continue
            }
            var hash = ContentHash()
            hash.update(bytes)
            let fingerprint = hash.hex
            let features = try classifier.features(of: image)
            let before = try classifier.decide(features: features, top: 3)
            // A confirmed photo must show a dog: one the model sees none in is refused, not learned.
            if before.verdict == .noDog {
                let p = before.dogProbability.map { String(format: "%.1f %%", $0 * 100) } ?? "?"
                failed.append(Failure(photo: name, message: "the model sees no dog in this photo (dog probability \(p)); "
                                      + "a confirmed photo must show one", noDog: true))
                continue
            }
            let added: Bool
            do throws(ModelError) {
                added = try confirmed.confirm(ConfirmedPhoto(label: label.key, photo: shortName, fingerprint: fingerprint, added: now),
                                              features: features.map(Model.direction))
            } catch {
                throw .model(error)
            }
            learned.append(Learned(photo: reported, fingerprint: fingerprint, before: before, after: nil, added: added))
            if added { learnedFeatures.append(features) }
        }
        let taughtNewBreed: Bool
        if case .new = target { taughtNewBreed = learned.contains(where: \.added) } else { taughtNewBreed = false }
        if learned.contains(where: \.added) {
            // A new breed with no photo readable changes nothing.
            let before = model.confirmedPhotos.photos.filter { $0.label == label.key }.count
            let lengths = TaughtBreed.featureLengths(learnedFeatures, backbones: model.backbones.count)
            try rewrite(tensors, model, confirmed, to: url,
                        labels: teaching(label, isNew: taughtNewBreed, before: before, added: learnedFeatures.count, lengths: lengths))
            // The answers afterwards, from the file as written.
            let updated = try Classifier(modelURL: url, threads: threads)
            var k = 0
            for i in learned.indices where learned[i].added {
                learned[i].after = try updated.decide(features: learnedFeatures[k], top: 3)
                k += 1
            }
        }
        var reported = ModelInfo.Label(label)
        if taughtNewBreed { reported.taught = true }
        return LearnReport(label: reported, taughtNewBreed: taughtNewBreed, photos: learned, failed: failed,
                           confirmedCount: confirmed.count, labelCount: confirmed.filter { $0.label == label.key }.count)
    }

    /// Writes the model at `url` back with `confirmed` as its confirmed photos, and each backbone's breed labels
    /// as `change(b, &labels)` leaves them, less the taught breeds none of whose photos is left. A model with taught
    /// breeds before or after has their rows made again from their photos (`TaughtBreed.write`); otherwise only the
    /// photos are written.
    static func rewrite(_ tensors: SafeTensors, _ model: Model, _ confirmed: ConfirmedPhotos, to url: URL,
                                labels change: (Int, inout [Label]) -> Void = { _, _ in }) throws(ClassifierError) {
        var description = model.specification
        // Format 1 cannot hold confirmed photos: the file moves to the current format (it still loads the same).
        if description.formatVersion == 1 { description.formatVersion = ModelDescription.currentVersion }
        let remaining = Set(confirmed.photos.map(\.label))
        for b in description.backbones.indices {
            guard var labels = description.backbones[b].breedHead?.labels else { continue }
            change(b, &labels)
            labels.removeAll { $0.taught != nil && !remaining.contains($0.key) }
            description.backbones[b].breedHead?.labels = labels
        }
        let taught = { (d: ModelDescription) in d.backbones.contains { $0.breedHead?.labels.contains { $0.taught != nil } ?? false } }
        do {
            if taught(description) || taught(model.specification) {
                try TaughtBreed.write(tensors, stored: model.specification, as: description, confirmed: confirmed, to: url)
            } else {
                try ModelFile.replacingConfirmedPhotos(of: tensors, model: description, with: confirmed, to: url)
            }
        } catch {
            throw .model(error)
        }
    }

    /// How `rewrite` changes each backbone's labels when `added` photos of `label` join the `before` it had, their
    /// features' typical length `lengths[b]` on backbone b: a new breed (`isNew`) joins the labels, taught from them; a
    /// taught breed's typical length takes in the new ones.
    static func teaching(_ label: Label, isNew: Bool, before: Int, added: Int, lengths: [Float]) -> (Int, inout [Label]) -> Void {
        { b, labels in
            if isNew {
                labels.append(Label(key: label.key, name: label.name, isDog: true, breed: label.breed,
                                    taught: Taught(featureLength: lengths[b]), kind: label.kind))
            } else if let i = labels.firstIndex(where: { $0.key == label.key }), let old = labels[i].taught {
                let mean = (old.featureLength * Float(before) + lengths[b] * Float(added)) / Float(before + added)
                labels[i].taught = Taught(featureLength: mean)
            }
        }
    }

    public struct ForgetReport: Sendable {
        /// The confirmed photos taken out.
        public var removed: [ConfirmedPhoto]
        /// The taught breeds that went with their last photo.
        public var forgottenBreeds: [String]
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
        guard !removed.isEmpty else { return ForgetReport(removed: removed, forgottenBreeds: [], confirmedCount: confirmed.count) }
        // A taught breed goes with the last of its photos.
        let remaining = Set(confirmed.photos.map(\.label))
        let gone = (model.breedLabels ?? []).filter { $0.taught != nil && !remaining.contains($0.key) }
        try rewrite(tensors, model, confirmed, to: url)
        return ForgetReport(removed: removed, forgottenBreeds: gone.map(\.name), confirmedCount: confirmed.count)
    }

    /// One breed of a model and the confirmed photos it has of it.
    public struct ModelBreed: Sendable {
        public var label: ModelInfo.Label
        /// Its confirmed photos: for a taught breed, those it is made from (it grows with each one learned).
        public var photos: Int
    }

    /// Each breed of the model at `url`, in the model's order, with its confirmed photos.
    public static func breeds(model url: URL) throws(ClassifierError) -> [ModelBreed] {
        let model = try load(url).1
        var counts: [String: Int] = [:]
        for photo in model.confirmedPhotos.photos { counts[photo.label, default: 0] += 1 }
        return (model.breedLabels ?? []).map { ModelBreed(label: ModelInfo.Label($0), photos: counts[$0.key] ?? 0) }
    }

    /// The confirmed photos of the model at `url`, oldest first.
    public static func photos(model url: URL) throws(ClassifierError) -> [ConfirmedPhoto] {
        try load(url).1.confirmedPhotos.photos
    }

    static func load(_ url: URL) throws(ClassifierError) -> (SafeTensors, Model) {
        do {
            let tensors = try SafeTensors(contentsOf: url)
            return (tensors, try Model(tensors: tensors))
        } catch {
            throw .model(error)
        }
    }
}
