import Foundation
import DedogCatalogue
import DedogFiles
import DedogSidecar

/// What `dedog tag` writes: under which root, in which language, how sure a breed must be.
public struct TagSettings: Sendable, Equatable {
    /// The keyword every photo with a dog gets, and under which its breeds go: `["Animals", "Dogs"]`.
    public var root: [String]
    /// The language of the breeds' names.
    public var language: Language
    /// A breed is named only when its probability is at least this (the model's verdict must also name it);
    /// nil: the verdict alone decides.
    public var minProbability: Float?
    /// Whether the answers come from careful mode (`Classifier.carefulMode()`): recorded with the writer, so that
    /// a run in the other mode tags the photos again.
    public var careful: Bool

    public init(root: [String]? = nil, language: Language, minProbability: Float? = nil, careful: Bool = false) {
        self.root = root ?? Self.defaultRoot(language)
        self.language = language
        self.minProbability = minProbability
        self.careful = careful
    }

    public static func defaultRoot(_ language: Language) -> [String] {
        language == .cs ? ["Zvířata", "Psi"] : ["Animals", "Dogs"]
    }

    /// A root as the user writes it (`Animals/Dogs`): its parts; nil when it has none.
    public static func root(parsing text: String) -> [String]? {
        let parts = text.split(whereSeparator: { $0 == "/" || $0 == "|" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts
    }
}

/// One photo's sidecar as `dedog tag` left it (or, in a dry run, would leave it).
public struct TagReport: Sendable, Equatable {
    public enum Action: String, Sendable {
        /// A new sidecar was written.
        case created
        /// An existing sidecar was changed.
        case updated
        /// The sidecar already said exactly this.
        case unchanged
        /// Tagged before by the same model: not classified again (`--force` does).
        case alreadyTagged
        /// Looked at before by the same model, and unchanged since (`PhotoRecord`): not classified again.
        case seenBefore
        /// No dog, and no sidecar to record it in: nothing written.
        case nothingToTag
        /// dedog's keywords were taken out of the sidecar.
        case removed
        /// The sidecar held only what dedog wrote, and dedog made it: deleted.
        case deleted
        /// No keyword of dedog's was there.
        case nothingToRemove
        /// There is no sidecar.
        case noSidecar
    }

    public var photo: String
    public var sidecar: String
    public var action: Action
    /// The keywords dedog's answer gives, as paths with `/` (`Animals/Dogs/Beagle`): written, or there already.
    public var tags: [String]
    /// The dogs named (one tag each) and the dogs only counted under the root.
    public var dogs: Int
    /// Whether the file was left alone because this was a dry run.
    public var dryRun: Bool
}

/// `dedog tag`: each photo's answer as keywords in its XMP sidecar, where digiKam, darktable, Immich and the
/// like read them (see `Sidecar`). A photo with a dog gets the root; each dog named gets root/breed; a dog of a
/// breed the model does not know, or an unsure one, gets root/kind where its kind of dog is said, else only the root. dedog records which model wrote the
/// keywords, so that a re-run with the same model skips the photo, and a re-run with another replaces them.
public struct PhotoTagger: Sendable {
    public let settings: TagSettings
    /// The model's file name and content hash (and "careful" in careful mode): what a sidecar records as the writer.
    public let writer: String
    private let catalogue: Catalogue

    /// Whether a first look (`FirstLook`) passes over photos before the model's: recorded with who looked.
    public let firstLook: Bool

    public init(modelURL: URL, catalogue: Catalogue, settings: TagSettings, firstLook: Bool = false) throws(ClassifierError) {
        self.settings = settings
        self.firstLook = firstLook
        self.catalogue = catalogue
        let bytes: Data
        do throws(FileError) { bytes = try FileReader.mappedData(modelURL.path, limit: 1 << 31) } catch {
            throw .model(.unreadable(file: modelURL.path, reason: error.description))
        }
        writer = "\(modelURL.lastPathComponent) \(Self.fingerprint(bytes))" + (settings.careful ? " careful" : "")
    }

    /// 16 hex digits of a hash of every byte of `data`, eight at a time (a model file of 27 MB in some 5 ms, where
    /// `ContentHash`'s byte loop, keyed to the feature cache's entries, takes 150): two multiply-xor lanes over the
    /// words, the tail and the length mixed in at the end. Not cryptographic: it tells one model file from another.
    static func fingerprint(_ data: Data) -> String {
        var a: UInt64 = 0x9E37_79B9_7F4A_7C15, b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        data.withUnsafeBytes { raw in
            let words = raw.count / 8
            for i in 0..<words {
                let w = raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)
                a = (a ^ w) &* 0x0000_0100_0000_01B3
                b = ((b ^ w) &* 0xFF51_AFD7_ED55_8CCD) ^ (b >> 29)
            }
            for i in (words * 8)..<raw.count {
                a = (a ^ UInt64(raw[i])) &* 0x0000_0100_0000_01B3
                b = ((b ^ UInt64(raw[i])) &* 0xFF51_AFD7_ED55_8CCD) ^ (b >> 29)
            }
        }
        var z = a ^ (b &* 0xC4CE_B9FE_1A85_EC53) ^ UInt64(data.count)
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return String(z ^ (z >> 33), radix: 16).leftPadded(to: 16)
    }

    /// The keyword paths for `answer`: none without a dog; the root, root/breed for each dog named, and root/kind
    /// (`Animals/Dogs/Terriers`) for each dog whose breed is not named but whose kind is (`Classification.kind`).
    public func tags(for answer: Classification) -> [[String]] {
        let dogs = answer.dogs.isEmpty ? [answer] : answer.dogs
        guard dogs.contains(where: { $0.verdict != .noDog }) else { return [] }
        var tags = [settings.root]
        for dog in dogs {
            let name: String
            if dog.verdict == .dog, let top = dog.breeds.first, top.probability >= settings.minProbability ?? 0 {
                name = catalogue.details(top)?.name(in: settings.language) ?? top.name
            } else if dog.verdict == .otherBreed || dog.verdict == .unsure, let kind = dog.kind {
                name = kind.keyword(catalogue, in: settings.language)
            } else {
                continue
            }
            let tag = settings.root + [name]
            if !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    /// The report for `photo` when its sidecar was written by this model: it need not be classified again (unless
    /// forced). nil otherwise; a sidecar that cannot be read is then `write`'s to report.
    public func taggedBefore(photo: String, dryRun: Bool) -> TagReport? {
        guard let sidecar = try? Sidecar(photo: photo), sidecar.writer == writer else { return nil }
        return TagReport(photo: photo, sidecar: sidecar.path, action: .alreadyTagged, tags: sidecar.dedogTags, dogs: 0, dryRun: dryRun)
    }

    /// Writes `answer`'s keywords into `photo`'s sidecar, replacing those dedog wrote before.
    public func write(photo: String, answer: Classification, dryRun: Bool) throws(ClassifierError) -> TagReport {
        do throws(SidecarError) {
            let sidecar = try Sidecar(photo: photo)
            let tags = tags(for: answer)
            let dogs = tags.isEmpty ? 0 : max(1, answer.dogs.count)
            let shown = tags.map { $0.joined(separator: "/") }
            // A photo without a dog gets no new sidecar; one that has a sidecar records that this model saw it.
            if tags.isEmpty && !sidecar.existed {
                return TagReport(photo: photo, sidecar: sidecar.path, action: .nothingToTag, tags: [], dogs: 0, dryRun: dryRun)
            }
            let changed = try sidecar.replaceDedogTags(with: tags, writer: writer)
            let action: TagReport.Action = !changed ? .unchanged : sidecar.existed ? .updated : .created
            if changed && !dryRun { try sidecar.save(durable: false) }
            return TagReport(photo: photo, sidecar: sidecar.path, action: action, tags: shown, dogs: dogs, dryRun: dryRun)
        } catch {
            throw .sidecar(error)
        }
    }

    /// Flushes the sidecars `write` and `remove` wrote to the disk: a run calls it once at its end (one flush per
    /// file system rather than one per photo).
    public static func flush(_ reports: [TagReport]) {
        Sidecar.flush(reports.filter { !$0.dryRun && [.created, .updated, .removed, .deleted].contains($0.action) }.map(\.sidecar))
    }

    /// Takes dedog's keywords out of `photo`'s sidecar; deletes the sidecar when dedog made it and nothing else is
    /// left in it.
    public static func remove(photo: String, dryRun: Bool) throws(ClassifierError) -> TagReport {
        do throws(SidecarError) {
            let sidecar = try Sidecar(photo: photo)
            let had = sidecar.dedogTags, created = sidecar.createdByDedog
            guard sidecar.existed else {
                return TagReport(photo: photo, sidecar: sidecar.path, action: .noSidecar, tags: [], dogs: 0, dryRun: dryRun)
            }
            guard try sidecar.removeDedogTags() else {
                return TagReport(photo: photo, sidecar: sidecar.path, action: .nothingToRemove, tags: [], dogs: 0, dryRun: dryRun)
            }
            if created && sidecar.isEmptyApartFromDedog {
                if !dryRun { try sidecar.delete() }
                return TagReport(photo: photo, sidecar: sidecar.path, action: .deleted, tags: had, dogs: 0, dryRun: dryRun)
            }
            if !dryRun { try sidecar.save(durable: false) }
            return TagReport(photo: photo, sidecar: sidecar.path, action: .removed, tags: had, dogs: 0, dryRun: dryRun)
        } catch {
            throw .sidecar(error)
        }
    }
}

/// A folder (or photo) given to `dedog tag`, its real place resolved once: the photos found in it are tagged only
/// when they are inside it for real.
public struct TagFolder: Sendable {
    public let path: String
    private let real: String

    public init(_ path: String) {
        self.path = path
        let resolved = Self.resolved(path)
        real = resolved.hasSuffix("/") ? resolved : resolved + "/"
    }

    private static func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    /// Refuses a photo found here whose real place is outside (a link to a file elsewhere): its sidecar would sit
    /// beside the link, where the photo's managers do not look for it. A photo given itself is always inside.
    public func check(_ photo: String) throws(ClassifierError) {
        guard photo != path, !Self.resolved(photo).hasPrefix(real) else { return }
        throw .outsideTree(path: photo, within: path)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
