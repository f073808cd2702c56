import ArgumentParser
import Dedog
import DedogCatalogue
import Foundation

struct Tag: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Write each photo's breeds as keywords into its XMP sidecar, for digiKam, darktable, Immich and others.",
        discussion: """
            For each photo with a dog dedog writes the keyword ROOT (default "Animals/Dogs", in Czech "Zvířata/Psi"), \
            and ROOT/BREED for each dog it names, into the photo's sidecar: photo.jpg.xmp (or photo.xmp when only that \
            exists). They go into every place the photo managers look: digiKam:TagsList and \
            MicrosoftPhoto:LastKeywordXMP (paths with /), lr:hierarchicalSubject (with |) and dc:subject (the names). \
            A dog of a breed the model does not know, or one it is unsure of, gets ROOT/KIND where the model is sure \
            of its kind of dog (its FCI group: "Animals/Dogs/Terriers"), else ROOT alone; a photo without \
            a dog gets nothing (and no new sidecar).

            The sidecar is merged, never replaced: the user's own keywords, darktable's edit history and everything \
            else in it stay. dedog records in its own namespace what it added and with which model, so a second run \
            with the same model skips the photos it has tagged (--force tags them again), a run with another model \
            replaces dedog's keywords, and --remove takes out exactly those. Each sidecar is written whole to a \
            temporary file and renamed: an interrupted run leaves every sidecar as it was or complete; run again to \
            finish. The photos themselves are never changed.

            dedog also remembers every photo it looked at, with or without a dog, in a record of its own (a SQLite \
            file, $XDG_DATA_HOME/dedog/seen.sqlite, else ~/.local/share/dedog/seen.sqlite): a later run looks only at \
            photos that are new, changed (size or modification time) or were looked at by another model or with \
            other settings, so running it every night over a whole library costs little more than listing its files. \
            --forget-seen empties the record for the paths given; --no-record neither reads nor writes it. Keep the \
            record on a local disk: a record on a network share is refused. Several machines tagging one library \
            (--shard K/N) each keep their own record, of their own part.

            Then let the manager read the sidecars: digiKam "Reread Metadata From Files" (with sidecars enabled for \
            reading), Immich the library's metadata refresh, darktable "load sidecar file"; see docs/photo-managers.md.

            Examples:
              dedog tag ~/Pictures
              dedog tag --dry-run ~/Pictures/2025              # what would change, nothing written
              dedog tag --lang cs ~/Obrázky                    # Zvířata/Psi/Bígl
              dedog tag --root "Pets/Dogs" --min-probability 0.8 ~/Pictures
              dedog tag --remove ~/Pictures                    # dedog's keywords out again
              dedog tag --forget-seen ~/Pictures/2025          # look at these photos again next time
            """
    )

    @Argument(help: ArgumentHelp("Photos or folders to tag (folders recursively).", valueName: "path"))
    var paths: [String]

    @Option(help: ArgumentHelp("The keyword above the breeds, as a path: every photo with a dog gets it. Default: "
                               + "Animals/Dogs, or Zvířata/Psi with --lang cs.", valueName: "path"))
    var root: String?

    @Option(help: ArgumentHelp("Language of the breeds' names: en or cs. Default: from the locale, as classify.",
                               valueName: "lang"))
    var lang: Language?

    @Option(help: ArgumentHelp("Name a breed only when its probability is at least this (0 to 1); below it the dog "
                               + "gets the root keyword alone. Default: the model's own verdict decides.", valueName: "p"))
    var minProbability: Float?

    @Flag(help: "Say what would change in each sidecar; write nothing.")
    var dryRun = false

    @Flag(help: "Take dedog's keywords out of the sidecars (and delete a sidecar dedog made that holds nothing else).")
    var remove = false

    @Flag(help: "Classify and tag again photos already tagged by this model.")
    var force = false

    @Flag(help: ArgumentHelp("Forget the photos under the paths given from the record of photos looked at (they are "
                             + "looked at again next time); tag nothing."))
    var forgetSeen = false

    @Option(help: ArgumentHelp("The record of the photos looked at: a SQLite file on a local disk. Default: "
                               + "$XDG_DATA_HOME/dedog/seen.sqlite, else ~/.local/share/dedog/seen.sqlite.", valueName: "file"))
    var record: String?

    @Flag(help: ArgumentHelp("Neither read nor write the record of photos looked at: look at every photo (except those "
                             + "this model tagged, which their sidecars tell)."))
    var noRecord = false

    @Option(help: ArgumentHelp("Tag only part K of N (0-based): the photos whose path hashes to K, so that N machines "
                               + "tag one library together, each keeping its own record.", valueName: "K/N"))
    var shard: Shard?

    @Flag(help: ArgumentHelp("After tagging the folders given, keep watching them: tag each photo added or changed "
                             + "(once its writer has closed it and it has settled for a second), until Ctrl-C or SIGTERM. "
                             + "A folder removed is waited for and watched again when it is made again."))
    var watch = false

    @Flag(help: ArgumentHelp("Look at every photo with the model's full look. By default a cheap first look (the fast "
                             + "model, once, on the photo as decoded) passes over photos that show no dog, which are "
                             + "most of a library; chosen to miss no dog the full look finds (docs/performance.md). "
                             + "The fast model has none: its full look is hardly dearer."))
    var fullLook = false

    @Flag(help: "Never show the progress line.")
    var noProgress = false

    @Flag(help: ArgumentHelp(CarefulMode.help))
    var careful = false

    @Option(help: ArgumentHelp("The model, as for classify: a bundled one by name or a file from `dedog train`.",
                               valueName: "name|file"))
    var model: String?

    @Option(help: ArgumentHelp("Threads to use."))
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: Environment.kernelsHelp)
    var kernels: String?

    @Option(help: Precision.help)
    var precision: Precision?

    func validate() throws {
        if let minProbability, !(0...1).contains(minProbability) {
            throw ValidationError("--min-probability must be between 0 and 1 (0.8 for 80 %).")
        }
        if let root, TagSettings.root(parsing: root) == nil {
            throw ValidationError("--root must name at least one keyword, e.g. \"Animals/Dogs\".")
        }
        if remove && force { throw ValidationError("--remove and --force do not go together: --remove classifies nothing.") }
        if forgetSeen && (remove || force || dryRun) {
            throw ValidationError("--forget-seen only empties the record for the paths given; run tag again without it.")
        }
        if watch && (remove || forgetSeen) {
            throw ValidationError("--watch tags the photos that arrive; it does not go with --remove or --forget-seen.")
        }
        if noRecord && (record != nil || forgetSeen) {
            throw ValidationError("--no-record does not go with --record or --forget-seen.")
        }
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be between 1 and 256.") }
    }

    func run() throws {
        let language = lang ?? Environment.language
        let settings = TagSettings(root: root.flatMap(TagSettings.root(parsing:)), language: language, minProbability: minProbability,
                                   careful: careful)
        var summary = TagSummary(dryRun: dryRun)
        var reports: [TagReport] = []
        Interruption.catchSignals()
        let memory = try openRecord()
        if forgetSeen {
            guard let memory else { throw Status.someInputsFailed }
            try forget(in: memory, language)
            return
        }
        // Watching starts before the first walk, so that no photo arriving during it is missed.
        var photoWatch: PhotoWatch?
        if watch {
            do throws(ClassifierError) { photoWatch = try PhotoWatch(paths) } catch {
                Terminal.error(error)
                throw Status.someInputsFailed
            }
        }
        // Photos inside a folder given are tagged only when they are inside it for real (not through a link).
        var found: [(folder: TagFolder, item: PhotoFiles.Found)] = []
        let part = ShardFilter(shard: shard)
        for path in paths {
            let folder = TagFolder(path)
            // A photo the record holds, unchanged, is not opened to see that it is one.
            PhotoFiles.find([path], known: { memory?.holdsUnchanged($0) ?? false }) { if part.isMine($0) { found.append((folder, $0)) } }
        }
        let photos = found.filter { if case .image = $0.item { return true } else { return false } }.count
        let progress = !noProgress && isatty(STDERR_FILENO) == 1 && photos > 1 ? ClassifyProgress(total: photos, language: language) : nil

        func report(_ outcome: Result<TagReport, ClassifierError>, path: String) {
            progress?.clear()
            switch outcome {
            case let .success(report):
                summary.add(report)
                reports.append(report)
                Terminal.out(TagSummary.line(report, language))
            case let .failure(error):
                summary.failed += 1
                Terminal.error("\(path): \(Advice.message(for: error))")
            }
            progress?.draw(done: summary.photos)
        }
        func stopIfAsked() {
            Interruption.exitIfRequested("interrupted after \(summary.photos) photos; every sidecar is as it was or complete; "
                                         + "run again to finish", before: { PhotoTagger.flush(reports) })
        }
        func skipped(_ path: String, _ reason: String) {
            progress?.clear()
            if paths.contains(path) {
                summary.failed += 1
                Terminal.error("\(path): \(reason)")
            } else {
                summary.skipped += 1
                Terminal.warning("skipping \(path): \(reason)")
            }
        }

        if remove {
            for (folder, item) in found {
                stopIfAsked()
                switch item {
                case let .skipped(path, reason): skipped(path, reason)
                case let .image(path):
                    let result = Result { () throws(ClassifierError) in
                        try folder.check(path)
                        let report = try PhotoTagger.remove(photo: path, dryRun: dryRun)
                        // Looked at again next time: its keywords are gone.
                        if !dryRun { _ = try memory?.forget(path) }
                        return report
                    }
                    report(result, path: path)
                }
            }
            PhotoTagger.flush(reports)
            try finish(summary, language)
            return
        }

        let catalogue = try loadCatalogue(nil)
        let classifier: Classifier, tagger: PhotoTagger, firstLook: FirstLook?
        guard let kernelSet = Environment.kernelsOrReport(kernels) else { throw Status.modelUnavailable }
        do throws(ClassifierError) {
            var configuration = ClassifierConfiguration(kernels: kernelSet, precision: precision)
            configuration.share(threads: threads, manyPhotos: photos > 1)
            let url = try Environment.model(model)
            classifier = try CarefulMode.classifier(try Classifier(modelURL: url, configuration: configuration), careful: careful)
            // Where the model's own look is hardly dearer than the first look (the fast model), there is none.
            let first = fullLook ? nil : try FirstLook(configuration: configuration)
            firstLook = first.flatMap { $0.pays(before: classifier) ? $0 : nil }
            tagger = try PhotoTagger(modelURL: url, catalogue: catalogue, settings: settings, firstLook: firstLook != nil)
        } catch {
            Terminal.error(error)
            throw Status.modelUnavailable
        }
        // Photos are classified side by side; their sidecars are written here, one after another, in the order
        // the photos were found.
        var work = OrderedWork<TagJob>(concurrency: classifier.configuration.workers)
        // A photo looked at (or found tagged) goes into the record once its sidecar is written.
        func remembered(_ visit: PhotoVisit, _ report: TagReport) -> Result<TagReport, ClassifierError> {
            Result { () throws(ClassifierError) in
                if let memory { try tagger.remember(visit, report, in: memory) }
                return report
            }
        }
        func deliver(_ job: TagJob) {
            switch job {
            case let .skipped(path, reason): skipped(path, reason)
            case let .refused(path, outcome): report(outcome, path: path)
            case let .done(visit, outcome):
                report(outcome.flatMap { report in remembered(visit, report) }, path: visit.photo)
            case let .answered(visit, answer):
                // Watching, a photo still being written (its writer closed it once and opened it again) is looked
                // at again when it next changes.
                if photoWatch != nil, case let .failure(error) = answer, [.truncated, .empty].contains(error.photoProblem) {
                    progress?.clear()
                    Terminal.warning(language == .cs ? "\(visit.photo): zatím neúplná; podívám se znovu, až se změní"
                                     : "\(visit.photo): not complete yet; looked at again when it changes")
                    return
                }
                report(answer.flatMap { answer in
                    Result { () throws(ClassifierError) in try tagger.write(photo: visit.photo, answer: answer, dryRun: dryRun) }
                }.flatMap { report in remembered(visit, report) }, path: visit.photo)
            }
        }
        func submit(_ folder: TagFolder, _ item: PhotoFiles.Found) {
            switch item {
            case let .skipped(path, reason):
                work.submit({ .skipped(path, reason) }, deliver: deliver)
            case let .image(path):
                do throws(ClassifierError) { try folder.check(path) } catch {
                    work.submit({ .refused(path, .failure(error)) }, deliver: deliver)
                    return
                }
                // Its file's state is taken before it is looked at: a photo changed meanwhile is looked at next time.
                let visit = PhotoVisit(photo: path)
                // A photo the record says this model saw as it is now is not looked at; one the record does not
                // know, if this model tagged it (its sidecar says so), neither.
                if !force {
                    var recall = Recall.unknown
                    do throws(ClassifierError) {
                        if let memory { recall = try tagger.recall(visit, in: memory, dryRun: dryRun) }
                    } catch {
                        work.submit({ .refused(path, .failure(error)) }, deliver: deliver)
                        return
                    }
                    if case let .unchanged(seen) = recall {
                        work.submit({ .refused(path, .success(seen)) }, deliver: deliver)
                        return
                    }
                    if case .unknown = recall, let before = tagger.taggedBefore(photo: path, dryRun: dryRun) {
                        work.submit({ .done(visit, .success(before)) }, deliver: deliver)
                        return
                    }
                }
                let url = URL(fileURLWithPath: path)
                work.submit({
                    .answered(visit, Result { () throws(ClassifierError) in try classifier.classify(contentsOf: url, after: firstLook) })
                }, deliver: deliver)
            }
        }
        for (folder, item) in found {
            stopIfAsked()
            submit(folder, item)
        }
        work.finish(deliver: deliver)
        progress?.clear()
        PhotoTagger.flush(reports)
        guard let photoWatch else {
            if summary.photos == 0 && part.othersPhotos > 0, let shard {
                Terminal.warning("none of the \(part.othersPhotos) photos found fell in part \(shard); the other parts have them")
                return
            }
            try finish(summary, language)
            return
        }
        // Watching: each batch of photos that arrived is tagged as the first walk's were, until a signal.
        if summary.photos + summary.skipped > 1 || summary.failed > 0 { Terminal.out(summary.text(language)) }
        Terminal.progress(language == .cs ? "dedog: sleduji \(paths.joined(separator: ", ")); ukončíte Ctrl-C"
                          : "dedog: watching \(paths.joined(separator: ", ")); Ctrl-C stops")
        let folders = paths.map(TagFolder.init)
        while true {
            if Interruption.requested {
                Terminal.progress(language == .cs ? "dedog: sledování ukončeno; každý soubor XMP je celý"
                                  : "dedog: stopped watching; every sidecar is whole")
                return
            }
            let arrived = photoWatch.next(timeout: 0.5).filter(part.isMine)
            guard !arrived.isEmpty else { continue }
            work = OrderedWork<TagJob>(concurrency: classifier.configuration.workers)
            reports.removeAll()
            for item in arrived {
                let folder = folders.first { item.path.hasPrefix($0.path.hasSuffix("/") ? $0.path : $0.path + "/") } ?? TagFolder(item.path)
                submit(folder, item)
            }
            work.finish(deliver: deliver)
            PhotoTagger.flush(reports)
        }
    }

    /// The record of the photos looked at, unless --no-record; nil also when no place for it is known (said).
    private func openRecord() throws -> PhotoRecord? {
        guard !noRecord else { return nil }
        guard let path = record ?? PhotoRecord.defaultPath(environment: Environment.variables) else {
            Terminal.warning("no place for the record of photos looked at (neither XDG_DATA_HOME nor HOME is set); "
                             + "every photo is looked at (--record FILE keeps one)")
            return nil
        }
        // A dry run writes nothing, not even a new record.
        if dryRun && !FileManager.default.fileExists(atPath: path) { return nil }
        do throws(ClassifierError) {
            return try PhotoRecord(path: path)
        } catch {
            Terminal.error(error)
            throw Status.someInputsFailed
        }
    }

    /// --forget-seen: each path given forgotten, photo or folder.
    private func forget(in memory: PhotoRecord, _ language: Language) throws {
        var forgotten = 0
        for path in paths {
            do throws(ClassifierError) { forgotten += try memory.forget(path) } catch {
                Terminal.error(error)
                throw Status.someInputsFailed
            }
        }
        Terminal.out(language == .cs
                     ? "Zapomenuto fotek: \(forgotten) (\(memory.path)); příště se dedog znovu podívá na ty, které tento model "
                        + "neoznačil (--force na všechny)."
                     : "Forgot \(forgotten) photo\(forgotten == 1 ? "" : "s") (\(memory.path)); dedog looks again next time at those this model did not tag "
                        + "(--force at every one).")
    }

    private func finish(_ summary: TagSummary, _ language: Language) throws {
        if summary.photos + summary.skipped > 1 || summary.failed > 0 { Terminal.out(summary.text(language)) }
        if summary.photos == 0 && summary.failed == 0 {
            Terminal.error("no \(PhotoFiles.readableFormats) images found in \(paths.joined(separator: ", "))")
            throw Status.someInputsFailed
        }
        if summary.failed > 0 { throw Status.someInputsFailed }
    }
}

/// One photo's turn in `tag`: a file that is no photo, a photo's outcome known without classifying it (tagged by
/// this model before, or refused), or its answer, whose sidecar is then written.
private enum TagJob: Sendable {
    case skipped(String, String)
    /// Known without looking, and nothing to record: refused, or seen before.
    case refused(String, Result<TagReport, ClassifierError>)
    /// Known without looking (tagged by this model before): recorded.
    case done(PhotoVisit, Result<TagReport, ClassifierError>)
    case answered(PhotoVisit, Result<Classification, ClassifierError>)
}

/// What `dedog tag` did, photo by photo and in all.
struct TagSummary {
    let dryRun: Bool
    var tagged = 0, dogs = 0, tags = 0, written = 0, unchanged = 0, alreadyTagged = 0, seenBefore = 0, noDog = 0, removed = 0
    var skipped = 0, failed = 0

    var photos: Int { tagged + unchanged + alreadyTagged + seenBefore + noDog + removed + failed }

    mutating func add(_ report: TagReport) {
        switch report.action {
        case .created, .updated:
            if report.tags.isEmpty { noDog += 1 } else { tagged += 1 }
            written += 1
            tags += report.tags.count
        case .unchanged: unchanged += 1
        case .alreadyTagged: alreadyTagged += 1
        case .seenBefore: seenBefore += 1
        case .nothingToTag: noDog += 1
        case .removed, .deleted, .nothingToRemove, .noSidecar:
            removed += 1
            if report.action == .removed || report.action == .deleted { written += 1 }
        }
        dogs += report.dogs
    }

    /// One photo's line: what its sidecar got (or would get), in `language`.
    static func line(_ r: TagReport, _ language: Language = .en) -> String {
        let tags = r.tags.joined(separator: ", "), dry = r.dryRun
        let said: String
        if language == .cs {
            switch r.action {
            case .created: said = "\(tags) → \(r.sidecar) (\(dry ? "byl by nový" : "nový"))"
            case .updated where r.tags.isEmpty: said = "žádný pes; klíčová slova dedogu \(dry ? "by byla odebrána" : "odebrána") z \(r.sidecar)"
            case .updated: said = "\(tags) → \(r.sidecar)"
            case .unchanged where r.tags.isEmpty: said = "žádný pes; \(r.sidecar) beze změny"
            case .unchanged: said = "\(tags), už v \(r.sidecar)"
            case .alreadyTagged: said = "už označeno tímto modelem (\(r.sidecar)); přeskočeno (--force označí znovu)"
            case .seenBefore where r.tags.isEmpty: said = "žádný pes (viděno dříve, od té doby beze změny); přeskočeno"
            case .seenBefore: said = "\(tags), viděno dříve (\(r.sidecar)); přeskočeno"
            case .nothingToTag: said = "žádný pes; nic nezapsáno"
            case .removed: said = "\(dry ? "bylo by odebráno" : "odebráno") \(tags.isEmpty ? "záznam dedogu" : tags) z \(r.sidecar)"
            case .deleted: said = "\(dry ? "bylo by odebráno" : "odebráno") \(tags); \(r.sidecar) \(dry ? "by byl smazán" : "smazán") "
                + "(vytvořil ho dedog a nic jiného v něm není)"
            case .nothingToRemove: said = "v \(r.sidecar) nejsou žádná klíčová slova dedogu"
            case .noSidecar: said = "bez souboru XMP"
            }
        } else {
            let would = dry ? "would " : ""
            switch r.action {
            case .created: said = "\(tags) → \(r.sidecar) (\(dry ? "would be " : "")new)"
            case .updated where r.tags.isEmpty: said = "no dog; \(dry ? "would take" : "took") dedog's keywords out of \(r.sidecar)"
            case .updated: said = "\(tags) → \(r.sidecar)"
            case .unchanged where r.tags.isEmpty: said = "no dog; \(r.sidecar) unchanged"
            case .unchanged: said = "\(tags), already in \(r.sidecar)"
            case .alreadyTagged: said = "tagged by this model before (\(r.sidecar)); skipped (--force tags it again)"
            case .seenBefore where r.tags.isEmpty: said = "no dog (looked at before, unchanged since); skipped"
            case .seenBefore: said = "\(tags), looked at before (\(r.sidecar)); skipped"
            case .nothingToTag: said = "no dog; nothing written"
            case .removed: said = "\(would)remove \(tags.isEmpty ? "dedog's record" : tags) from \(r.sidecar)"
            case .deleted: said = "\(would)remove \(tags); \(would)delete \(r.sidecar) (dedog made it and nothing else is in it)"
            case .nothingToRemove: said = "no keywords of dedog's in \(r.sidecar)"
            case .noSidecar: said = "no sidecar"
            }
        }
        return "\(r.photo): \(said)"
    }

    /// The closing line of counts, in `language`.
    func text(_ language: Language = .en) -> String {
        let cs = language == .cs
        var parts = [(cs ? "fotek" : "photos", photos)]
        if removed > 0 {
            parts.append((cs ? (dryRun ? "souborů XMP by se změnilo nebo smazalo" : "souborů XMP změněno nebo smazáno")
                             : (dryRun ? "sidecars that would change or go" : "sidecars changed or deleted"), written))
        } else {
            parts += [(cs ? "se psem" : "with a dog", tagged + unchanged), (cs ? "psů" : "dogs", dogs),
                      (cs ? (dryRun ? "štítků k zápisu" : "zapsaných štítků") : (dryRun ? "tags to write" : "tags written"), tags),
                      (cs ? (dryRun ? "souborů XMP k zápisu" : "zapsaných souborů XMP") : (dryRun ? "sidecars to write" : "sidecars written"), written),
                      (cs ? "beze změny" : "unchanged", unchanged), (cs ? "označeno dříve" : "tagged before", alreadyTagged),
                      (cs ? "viděno dříve" : "seen before", seenBefore),
                      (cs ? "bez psa" : "no dog", noDog)]
        }
        parts += [(cs ? "přeskočeno" : "skipped", skipped), (cs ? "nelze zpracovat" : "failed", failed)]
        return (cs ? "Souhrn — " : "Summary — ") + parts.map { "\($0.0): \($0.1)" }.joined(separator: " · ")
    }
}
