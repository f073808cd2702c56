import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

/// The model file `learn` and `forget` change: `--model`, else `$DEDOG_MODEL`; never a bundled model.
private func teachableModel(_ model: String?) throws -> URL {
    guard let name = model ?? ProcessInfo.processInfo.environment["DEDOG_MODEL"], !name.isEmpty else {
        throw ValidationError("give the model file to change with --model FILE (a model from dedog train; the bundled "
                              + "models are never changed: train your own with dedog train, or copy a bundled one).")
    }
    try refuseBundled(name)
    return URL(fileURLWithPath: name)
}

/// A bundled model, by name or as a file, is refused: dedog does not change the models it ships.
public func refuseBundled(_ name: String) throws {
    let named = ModelLocator.isName(name) && !FileManager.default.fileExists(atPath: name)
    if named || ModelLocator.isBundledFile(URL(fileURLWithPath: name)) {
        throw ValidationError("\"\(name)\" is a bundled model, which dedog does not change; give a model file of your "
                              + "own (from dedog train, or a copy of the bundled one).")
    }
}

struct Learn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "Teach a model photos you have confirmed show a breed.",
        discussion: """
            The photos' features are kept in the model file, and from then on the model answers \
            photos like them with that breed: the photo itself and near copies strongly, similar photos \
            less. Nothing is retrained and the dataset is not needed; the file is replaced atomically.

            The breed may be one the model knows (its folder name, or any English or Czech name of the \
            catalogue breed) or one it does not: a catalogue breed by any of its names, or, with --new-breed, \
            a name of your own. A breed the model does not know is taught from the photos (three or more \
            are best) and named from then on, among the model's other breeds, for dogs that look like those \
            photos (others keep the answers they had). Photos in which the model sees \
            no dog are refused. `dedog forget` undoes it (a taught breed goes with its last photo); \
            `dedog train --resume` keeps the confirmed photos and the taught breeds.

            A taught breed can be shared: --export NAME FILE writes it to a small file (its photos' \
            features, not the photos), and --import FILE adds it to another model of the same backbones, \
            as if its photos had been learned there (a breed it was taught already takes in the photos it \
            lacks). A file made on other backbones, or one that is not a taught breed's, is refused and the \
            model left as it was.

            Examples:
              dedog learn rex.jpg --breed čivava --model mydogs.safetensors
              dedog learn photos/confirmed/*.jpg --breed "border collie" --model mydogs.safetensors
              dedog learn max1.jpg max2.jpg max3.jpg --breed jezevčík --model mydogs.safetensors   # a new breed
              dedog learn bo*.jpg --breed "Bohemian Shepherd mix" --new-breed --model mydogs.safetensors
              dedog learn --export jezevčík dachshund.dedogbreed --model mydogs.safetensors
              dedog learn --import dachshund.dedogbreed --model theirdogs.safetensors
            """
    )

    @Argument(help: ArgumentHelp("Photos showing the breed (with --export: the file to write).", valueName: "photo"))
    var photos: [String] = []

    @Option(help: ArgumentHelp("The breed they show.", valueName: "name"))
    var breed: String?

    @Option(help: ArgumentHelp("Write the taught breed NAME to the file given as the argument, to share it.", valueName: "name"))
    var export: String?

    @Option(name: .customLong("import"), help: ArgumentHelp("Add the taught breed in FILE (from --export) to the model.",
                                                            valueName: "file"))
    var importFile: String?

    @Option(help: ArgumentHelp("The model file to teach (default: $DEDOG_MODEL).", valueName: "file"))
    var model: String?

    @Flag(help: "Teach --breed as a new breed of that name, when it is none of the model's or the catalogue's.")
    var newBreed = false

    @Option(help: ArgumentHelp("Breed catalogue JSON for breed names instead of the bundled one.", valueName: "file"))
    var catalogue: String?

    @Option(help: "Threads for the network.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        if let export {
            guard importFile == nil else { throw ValidationError("--export and --import are two things; give one.") }
            guard photos.count == 1 else {
                throw ValidationError("--export \(export) writes one file: give its name as the one argument "
                                      + "(e.g. dedog learn --export \"\(export)\" breed.dedogbreed --model FILE).")
            }
            guard breed == nil, !newBreed else { throw ValidationError("--export names the breed itself; leave out --breed and --new-breed.") }
        } else if importFile != nil {
            guard photos.isEmpty, breed == nil, !newBreed else {
                throw ValidationError("--import adds the breed in its file, photos and all; give no photos, --breed or --new-breed.")
            }
        } else {
            guard !photos.isEmpty else { throw ValidationError("give the photos to learn (or --export NAME FILE, or --import FILE).") }
            guard breed != nil else { throw ValidationError("say which breed the photos show with --breed NAME.") }
        }
    }

    func run() throws {
        let url = try teachableModel(model)
        if let importFile { return try importBreed(from: importFile, into: url) }
        let breeds = try loadCatalogue(catalogue)
        if let export { return try exportBreed(export, from: url, catalogue: breeds) }
        let breed = breed ?? ""
        let report: Confirmations.LearnReport
        do throws(ClassifierError) {
            report = try Confirmations.learn(photos: photos.map { URL(fileURLWithPath: $0) }, breed: breed, model: url,
                                             catalogue: breeds, allowingNewName: newBreed, threads: threads)
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
        let name = breeds.breed(id: report.label.breed, label: report.label.key)?.name.en ?? report.label.name
        for p in report.photos {
            guard p.added else {
                Terminal.out("\(p.photo): already learned as \(name)")
                continue
            }
            Terminal.out("\(p.photo): learned as \(name); before: \(Self.answer(p.before, breeds)), now: "
                         + "\(p.after.map { Self.answer($0, breeds) } ?? "?")")
        }
        for f in report.failed { Terminal.error("\(f.photo): \(f.message)") }
        if report.taughtNewBreed {
            Terminal.out("\(url.path) now knows \(name), taught from \(report.photos.filter(\.added).count) photo"
                         + "\(report.photos.filter(\.added).count == 1 ? "" : "s").")
        } else if report.photos.isEmpty {
            Terminal.error("nothing was learned: no photo of \(name) could be used")
        } else if report.label.taught {
            Terminal.out("\(name), a breed taught from photos, now has \(report.labelCount) photo\(report.labelCount == 1 ? "" : "s").")
        }
        Terminal.out("\(url.path) remembers \(report.confirmedCount) confirmed photo\(report.confirmedCount == 1 ? "" : "s").")
        if !report.failed.isEmpty { throw Status.someInputsFailed }
    }

    private func exportBreed(_ name: String, from url: URL, catalogue: Catalogue) throws {
        let file = photos[0]
        do throws(ClassifierError) {
            let report = try Confirmations.export(breed: name, model: url, catalogue: catalogue, to: URL(fileURLWithPath: file))
            let breed = catalogue.breed(id: report.label.breed, label: report.label.key)?.name.en ?? report.label.name
            Terminal.out("\(file): \(breed), taught from \(report.photos) photo\(report.photos == 1 ? "" : "s") "
                         + "(\(max(1, report.bytes / 1024)) KB); dedog learn --import \(file) adds it to another model of the same backbones.")
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
    }

    private func importBreed(from file: String, into url: URL) throws {
        do throws(ClassifierError) {
            let report = try Confirmations.importBreed(from: URL(fileURLWithPath: file), model: url)
            let plural = { (n: Int) in n == 1 ? "" : "s" }
            if report.taughtNewBreed {
                Terminal.out("\(url.path) now knows \(report.label.name), taught from \(report.added) photo\(plural(report.added)) of \(file).")
            } else if report.added > 0 {
                Terminal.out("\(report.label.name) took in \(report.added) photo\(plural(report.added)) of \(file)"
                             + (report.alreadyKnown > 0 ? " (it had \(report.alreadyKnown) of them already)." : "."))
            } else {
                Terminal.out("\(url.path) is unchanged: it had all \(report.alreadyKnown) photo\(plural(report.alreadyKnown)) of \(file) already.")
            }
            Terminal.out("\(url.path) remembers \(report.confirmedCount) confirmed photo\(plural(report.confirmedCount)).")
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
    }

    /// "Chihuahua 92.1 %", or the verdict when it names no breed.
    static func answer(_ c: Classification, _ catalogue: Catalogue?) -> String {
        guard let top = c.breeds.first else { return c.verdict.rawValue }
        let name = catalogue?.details(top)?.name.en ?? top.name
        let verdict = c.verdict == .dog ? "" : " (\(c.verdict == .otherBreed ? "a breed it does not know" : c.verdict.rawValue))"
        return "\(name) \(ResultPrinter.percent(top.probability))\(verdict)"
    }
}

struct Forget: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Take confirmed photos out of a model (undoes dedog learn).",
        discussion: """
            Give the photos to forget (found by content, so renamed copies count), or --breed to forget all \
            photos learned as that breed, or --all. With --list, only shows what the model remembers.

            Examples:
              dedog forget rex.jpg --model mydogs.safetensors
              dedog forget --breed čivava --model mydogs.safetensors
              dedog forget --list --model mydogs.safetensors
            """
    )

    @Argument(help: ArgumentHelp("Photos to forget.", valueName: "photo"))
    var photos: [String] = []

    @Option(help: ArgumentHelp("Forget the photos learned as this breed.", valueName: "name"))
    var breed: String?

    @Flag(help: "Forget every confirmed photo.")
    var all = false

    @Flag(help: "List the confirmed photos the model remembers; change nothing.")
    var list = false

    @Option(help: ArgumentHelp("The model file (default: $DEDOG_MODEL).", valueName: "file"))
    var model: String?

    @Option(help: ArgumentHelp("Breed catalogue JSON for breed names instead of the bundled one.", valueName: "file"))
    var catalogue: String?

    /// A confirmed photo's breed as `learn` and `--breed` name it: the catalogue breed's English name behind the
    /// label (a trained breed's folder, a taught breed's catalogue id), else the label itself (a name of one's own).
    static func name(_ label: String, _ catalogue: Catalogue) -> String {
        catalogue.breed(id: label, label: label)?.name.en ?? label
    }

    func validate() throws {
        guard list || all || breed != nil || !photos.isEmpty else {
            throw ValidationError("say what to forget: photos, --breed NAME or --all (or --list to see the confirmed photos).")
        }
        guard !(all && (breed != nil || !photos.isEmpty)) else { throw ValidationError("--all forgets everything; give it alone.") }
    }

    func run() throws {
        let url = try teachableModel(model)
        let breeds = try loadCatalogue(catalogue)
        do throws(ClassifierError) {
            if list {
                let entries = try Confirmations.photos(model: url)
                for e in entries { Terminal.out("\(Self.name(e.label, breeds))\t\(e.photo)\t\(e.added)") }
                // Each taught breed and how many photos it is made from: it grows with each one learned.
                for b in try Confirmations.breeds(model: url) where b.label.taught {
                    Terminal.out("\(Self.name(b.label.key, breeds)): a taught breed, from \(b.photos) photo\(b.photos == 1 ? "" : "s").")
                }
                Terminal.out("\(entries.count) confirmed photo\(entries.count == 1 ? "" : "s").")
                return
            }
            let report = try Confirmations.forget(photos: photos.isEmpty ? nil : photos.map { URL(fileURLWithPath: $0) },
                                           breed: breed, model: url, catalogue: breeds)
            for e in report.removed { Terminal.out("forgot \(e.photo) (\(Self.name(e.label, breeds)))") }
            for name in report.forgottenBreeds { Terminal.out("forgot the taught breed \(name) with its last photo") }
            Terminal.out(report.removed.isEmpty ? "nothing to forget; \(url.path) is unchanged."
                         : "\(url.path) remembers \(report.confirmedCount) confirmed photo\(report.confirmedCount == 1 ? "" : "s").")
        } catch {
            Terminal.error(error)
            throw error.isModelProblem ? Status.modelUnavailable : Status.someInputsFailed
        }
    }
}

extension ClassifierError {
    var isModelProblem: Bool {
        switch self {
        case .model, .noModel, .unknownModel, .notTrainable, .noCarefulMode, .otherBackbones: return true
        case .image, .unknownBreed, .quiz, .emptyBreedName, .ambiguousBreed, .notACatalogueBreed, .sidecar, .outsideTree, .record, .watch,
             .notTaught, .alreadyTrained, .notASharedBreed:
            return false
        }
    }
}
