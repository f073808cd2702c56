import Foundation
import DedogFiles
import DedogImage
import DedogNN
import DedogTrain
import DedogCatalogue

/// Confirmed photos, kept in the model file: `learn` adds photos a user says show a breed, and the model's later
/// answers change at once (`Model.breedScores`, `Model.similarities`); `forget` takes them out again. The
/// backbones and heads are not retrained, and the original dataset is not needed.
///
/// ```swift
/// let report = try Memory.learn(photos: [URL(fileURLWithPath: "rex.jpg")], breed: "čivava",
///                               model: URL(fileURLWithPath: "mydogs.safetensors"), catalogue: try .bundled())
/// ```
public enum Memory {
    /// What `learn` did with each photo.
    public struct Learned: Sendable {
        public var photo: String
        /// The photo's content hash: what `forget(fingerprints:…)` takes to undo it.
        public var fingerprint: String
        /// The model's answer before learning, and after.
        public var before: Classification
        public var after: Classification?
        /// False when the same photo (by content) was already in the memory.
        public var added: Bool
    }

    public struct LearnReport: Sendable {
        /// The label the photos were learned as.
        public var label: Label
        public var photos: [Learned]
        /// Photos that could not be read, and why (nothing else stopped).
        public var failed: [(photo: String, message: String)]
        /// Entries in the memory afterwards.
        public var memorySize: Int
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

    /// Adds `photos` to the memory of the model file at `url` as showing `breed`, and writes the file back
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
        var entries = model.specification.memory ?? []
        var rows = model.backbones.map { $0.memory ?? [] }
        var learned: [Learned] = [], failed: [(String, String)] = []
        var learnedFeatures: [[[Float]]] = []
        let now = ISO8601DateFormatter().string(from: Date())
        for photo in photos {
            let bytes: [UInt8], image: RGBImage
            // For messages, for the report, and for the memory's entry.
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
            let known = entries.contains { $0.fingerprint == fingerprint && $0.label == label.key }
            learned.append(Learned(photo: reported, fingerprint: fingerprint, before: before, after: nil, added: !known))
            guard !known else { continue }
            // A photo remembered as another breed is corrected, not kept twice.
            if let other = entries.firstIndex(where: { $0.fingerprint == fingerprint }) {
                remove(other, from: &entries, rows: &rows)
            }
            entries.append(MemoryEntry(label: label.key, photo: shortName, fingerprint: fingerprint, added: now))
            for (b, f) in features.enumerated() { rows[b] += Model.direction(f) }
            learnedFeatures.append(features)
        }
        if learned.contains(where: \.added) {
            try write(tensors, model, entries: entries, rows: rows, to: url)
            // The answers afterwards, from the file as written.
            let updated = try Classifier(modelURL: url, threads: threads)
            var k = 0
            for i in learned.indices where learned[i].added {
                learned[i].after = try updated.decide(features: learnedFeatures[k], top: 3)
                k += 1
            }
        }
        return LearnReport(label: label, photos: learned, failed: failed, memorySize: entries.count)
    }

    public struct ForgetReport: Sendable {
        /// The entries taken out.
        public var removed: [MemoryEntry]
        public var memorySize: Int
    }

    /// Takes out of the memory of the model at `url` the given photos (matched by content), or every photo of
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
        var entries = model.specification.memory ?? []
        var rows = model.backbones.map { $0.memory ?? [] }
        let label = try breed.map { name throws(ClassifierError) in try Self.label(named: name, in: model, catalogue: catalogue) }
        var removed: [MemoryEntry] = []
        for i in entries.indices.reversed() {
            let entry = entries[i]
            guard label.map({ $0.key == entry.label }) ?? true, fingerprints.map({ $0.contains(entry.fingerprint) }) ?? true else { continue }
            removed.insert(entry, at: 0)
            remove(i, from: &entries, rows: &rows)
        }
        if !removed.isEmpty { try write(tensors, model, entries: entries, rows: rows, to: url) }
        return ForgetReport(removed: removed, memorySize: entries.count)
    }

    /// The memory of the model at `url`, oldest first.
    public static func entries(model url: URL) throws(ClassifierError) -> [MemoryEntry] {
        try load(url).1.specification.memory ?? []
    }

    private static let width = EfficientNetLite.featureCount

    /// Entry `i` and its row in every backbone's memory.
    private static func remove(_ i: Int, from entries: inout [MemoryEntry], rows: inout [[Float]]) {
        entries.remove(at: i)
        for b in rows.indices { rows[b].removeSubrange((i * width)..<((i + 1) * width)) }
    }

    private static func load(_ url: URL) throws(ClassifierError) -> (SafeTensors, Model) {
        do {
            let tensors = try SafeTensors(contentsOf: url)
            return (tensors, try Model(tensors: tensors))
        } catch {
            throw .model(error)
        }
    }

    private static func write(_ tensors: SafeTensors, _ model: Model, entries: [MemoryEntry], rows: [[Float]],
                              to url: URL) throws(ClassifierError) {
        var description = model.specification
        description.memory = entries
        // Format 1 cannot hold memory: the file moves to the current format (it still loads the same).
        if description.formatVersion == 1 { description.formatVersion = ModelDescription.currentVersion }
        do {
            try ModelWriter.replacingMemory(of: tensors, model: description, memory: rows, to: url)
        } catch {
            throw .model(error)
        }
    }
}
