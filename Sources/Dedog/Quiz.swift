import Foundation
import DedogCatalogue
import DedogFiles
import DedogImage
import DedogNN
import DedogBreedModel

/// A breed quiz: photos, each with its right breed and wrong answers the model itself confuses with it. One JSON
/// file holds everything, the photos as small JPEG copies, so that a set can be shared; `Quiz.load` reads one
/// bounded and validated, as every file from a stranger.
public struct Quiz: Codable, Sendable, Equatable {
    public static let formatName = "dedog-quiz"
    public static let currentVersion = 1
    /// What a loaded quiz may hold: a file is refused past these before or while it is decoded.
    public enum Limits {
        public static let fileBytes = 64 << 20
        public static let questions = 1000
        public static let photoBytes = 1 << 20
        public static let photoPixels = 4_000_000
        public static let text = 200
    }

    /// A breed as the quiz names it: its catalogue id (or the model's label key when the catalogue has none), and
    /// its names.
    public struct Answer: Codable, Sendable, Equatable, Hashable {
        public var id: String
        public var en: String
        public var cs: String?
        public init(id: String, en: String, cs: String?) {
            self.id = id
            self.en = en
            self.cs = cs
        }
    }

    public struct Question: Codable, Sendable, Equatable {
        /// The photo, a JPEG, base64-encoded.
        public var photo: String
        /// The photo's file name (for the person who made the set).
        public var file: String
        public var right: Answer
        /// The wrong answers, in the order the model ranked them for this photo.
        public var wrong: [Answer]
        /// Where the right answer came from: "folder" (the photo's folder names the breed) or "model".
        public var source: String
    }

    public var format = Quiz.formatName
    public var version = Quiz.currentVersion
    public var title: String
    /// The model file whose confusions gave the wrong answers.
    public var model: String
    public var created: String
    public var questions: [Question]

    public init(title: String, model: String, created: String, questions: [Question]) {
        self.title = title
        self.model = model
        self.created = created
        self.questions = questions
    }

    /// The quiz in the file at `url`, bounded and validated (see `validate`).
    public static func load(_ url: URL) throws(ClassifierError) -> Quiz {
        let data: Data
        do {
            data = try FileReader.readData(url.path, limit: Limits.fileBytes)
        } catch {
            throw .quiz(file: url.lastPathComponent, reason: error.description)
        }
        return try decode(data, name: url.lastPathComponent)
    }

    /// The quiz in `data` (an upload, or a file's bytes), validated.
    public static func decode(_ data: Data, name: String) throws(ClassifierError) -> Quiz {
        guard data.count <= Limits.fileBytes else {
            throw .quiz(file: name, reason: "it is \(data.count) bytes; a quiz may have at most \(Limits.fileBytes)")
        }
        let quiz: Quiz
        do {
            quiz = try JSONDecoder().decode(Quiz.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw .quiz(file: name, reason: "\(Self.path(context.codingPath + [key])) is missing; is it a dedog quiz (dedog quiz make)?")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .quiz(file: name, reason: "\(Self.path(context.codingPath)) has the wrong type")
        } catch {
            throw .quiz(file: name, reason: "it is not a quiz's JSON; make one with dedog quiz make")
        }
        do throws(QuizProblem) {
            try quiz.validate()
        } catch {
            throw .quiz(file: name, reason: error.reason)
        }
        return quiz
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the file" : keys.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            .trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }

    struct QuizProblem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Checks everything a player would trust: the format and version, counts and text lengths within the limits,
    /// two or three wrong answers all different from the right one and each other, and every photo a JPEG that
    /// decodes within the size limits.
    func validate() throws(QuizProblem) {
        guard format == Self.formatName else { throw QuizProblem("its format is \"\(format.prefix(40))\", not \(Self.formatName)") }
        guard version == Self.currentVersion else {
            throw QuizProblem("it is version \(version) of the quiz format; this dedog reads version \(Self.currentVersion)")
        }
        try Self.checkText(title, "the title")
        try Self.checkText(model, "the model name")
        try Self.checkText(created, "the date")
        guard !questions.isEmpty else { throw QuizProblem("it has no questions") }
        guard questions.count <= Limits.questions else {
            throw QuizProblem("it has \(questions.count) questions; a quiz may have at most \(Limits.questions)")
        }
        let decoder = ImageDecoder(options: .init(maxPixels: Limits.photoPixels, maxFileBytes: Limits.photoBytes))
        for (i, q) in questions.enumerated() {
            let which = "question \(i + 1)"
            try Self.checkText(q.file, "\(which)'s file name")
            try Self.checkText(q.source, "\(which)'s source")
            for answer in [q.right] + q.wrong {
                try Self.checkText(answer.id, "\(which)'s breed id")
                try Self.checkText(answer.en, "\(which)'s breed name")
                if let cs = answer.cs { try Self.checkText(cs, "\(which)'s Czech breed name") }
            }
            guard (2...3).contains(q.wrong.count) else {
                throw QuizProblem("\(which) has \(q.wrong.count) wrong answers; a question has 2 or 3")
            }
            guard Set(([q.right] + q.wrong).map(\.id)).count == q.wrong.count + 1 else {
                throw QuizProblem("\(which) offers the same breed twice")
            }
            guard q.photo.utf8.count <= (Limits.photoBytes / 3 + 1) * 4, let bytes = Data(base64Encoded: q.photo) else {
                throw QuizProblem("\(which)'s photo is not base64 of at most \(Limits.photoBytes) bytes")
            }
            guard ImageFormat.detect(bytes) == .jpeg else { throw QuizProblem("\(which)'s photo is not a JPEG") }
            do {
                _ = try decoder.decode([UInt8](bytes), name: which)
            } catch {
                throw QuizProblem("\(which)'s photo: \(error.description)")
            }
        }
    }

    private static func checkText(_ text: String, _ what: String) throws(QuizProblem) {
        guard !text.isEmpty, text.count <= Limits.text else {
            throw QuizProblem("\(what) is \(text.isEmpty ? "empty" : "over \(Limits.text) characters")")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw QuizProblem("\(what) holds control characters")
        }
    }

    /// The quiz as JSON (what `load` reads back).
    public func encoded() throws(ClassifierError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(self)
        } catch {
            throw .quiz(file: title, reason: "it could not be written as JSON: \(error)")
        }
    }
}

/// Builds a quiz from a folder of the user's photos (`dedog quiz make`).
public enum QuizMaker {
    /// Why a photo is not in the quiz.
    public enum LeftOut: String, Sendable, CaseIterable {
        case noDog = "no dog"
        case unsure = "the model is unsure"
        case otherBreed = "not one of the model's breeds"
        case unreadable = "could not be read"
    }

    public struct Report: Sendable {
        public var quiz: Quiz
        /// Photos not used, with why (and the error for unreadable ones).
        public var leftOut: [(photo: String, why: LeftOut, detail: String?)]
        /// Photos the folder's name answered, and photos the model answered.
        public var fromFolders: Int
        public var fromModel: Int

        /// How many photos were left out for each reason, e.g. "2 no dog, 1 the model is unsure"; empty for none.
        public var leftOutCounts: String { QuizMaker.counts(leftOut) }
    }

    static func counts(_ leftOut: [(photo: String, why: LeftOut, detail: String?)]) -> String {
        LeftOut.allCases.compactMap { why in
            let n = leftOut.filter { $0.why == why }.count
            return n == 0 ? nil : "\(n) \(why.rawValue)"
        }.joined(separator: ", ")
    }

    /// Photo copies in a quiz: the longer side at most this many pixels.
    public static let photoLongSide = 480

    /// A quiz from the photos under `folder`. A photo's right answer is its folder's breed when the folder's name
    /// is one of the model's breeds (matched as `dedog train` matches class folders); otherwise the model's
    /// answer when it is sure, and photos with no dog, an unsure answer or another breed are left out. The wrong
    /// answers are the model's next breeds for that photo, so they are the breeds it confuses with the right one.
    /// With `questions`, photos are taken in an order spread across folders (a hash of the path) until there are
    /// that many questions.
    public static func make(folder: String, classifier: Classifier, catalogue: Catalogue?, wrongAnswers: Int = 2,
                            questions limit: Int? = nil, title: String? = nil,
                            progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws(ClassifierError) -> Report {
        guard (2...3).contains(wrongAnswers) else { throw .quiz(file: folder, reason: "a question has 2 or 3 wrong answers") }
        guard let labels = classifier.breedLabels.isEmpty ? nil : classifier.breedLabels else {
            throw .quiz(file: folder, reason: "the model names no breeds to ask about; use a breed model")
        }
        let listing = FolderWalk.list(folder)
        var leftOut: [(photo: String, why: LeftOut, detail: String?)] = listing.problems.map { ($0.path, .unreadable, $0.reason) }
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        let files = listing.files.map { ($0, Shard.hash($0)) }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }.map(\.0)
        var folderLabels: [String: Label?] = [:]
        var asked: [Quiz.Question] = []
        var fromFolders = 0, fromModel = 0
        for (n, file) in files.enumerated() {
            if let limit, asked.count >= limit { break }
            progress(n, files.count)
            let url = URL(fileURLWithPath: file)
            let parent = url.deletingLastPathComponent().standardizedFileURL.path
            var folderLabel: Label? = nil
            if parent != root {
                let name = url.deletingLastPathComponent().lastPathComponent
                // The folder's breed as `learn --breed` and `train` match names; nil for folders that name none.
                if folderLabels[name] == nil {
                    folderLabels[name] = .some(try? Confirmations.label(named: name, in: classifier.model, catalogue: catalogue))
                }
                folderLabel = folderLabels[name] ?? nil
            }
            let image: RGBImage
            do throws(ImageError) {
                image = try ImageDecoder(options: classifier.decoderOptions).decode(contentsOf: url)
            } catch {
                leftOut.append((file, .unreadable, error.description))
                continue
            }
            let answer = try classifier.classify(image, top: labels.count)
            let rightKey: String
            if let folderLabel {
                rightKey = folderLabel.key
                fromFolders += 1
            } else {
                switch answer.verdict {
                case .noDog: leftOut.append((file, .noDog, nil)); continue
                case .unsure: leftOut.append((file, .unsure, nil)); continue
                case .otherBreed: leftOut.append((file, .otherBreed, nil)); continue
                case .dog: break
                }
                guard let top = answer.breeds.first else { continue }
                rightKey = top.key
                fromModel += 1
            }
            guard let right = answer.breeds.first(where: { $0.key == rightKey }) else { continue }
            let wrong = answer.breeds.filter { $0.key != rightKey }.prefix(wrongAnswers)
            let thumbnail: [UInt8]
            do throws(ImageError) {
                thumbnail = try JPEGEncoder.thumbnail(image, longSide: photoLongSide, quality: 80)
            } catch {
                leftOut.append((file, .unreadable, error.description))
                continue
            }
            asked.append(Quiz.Question(photo: Data(thumbnail).base64EncodedString(), file: url.lastPathComponent,
                                       right: answerFor(right, catalogue), wrong: wrong.map { answerFor($0, catalogue) },
                                       source: folderLabel == nil ? "model" : "folder"))
        }
        progress(files.count, files.count)
        guard !asked.isEmpty else {
            throw .quiz(file: folder, reason: "no photo could be asked about (\(leftOut.count) left out: \(counts(leftOut)))")
        }
        let quiz = Quiz(title: title ?? URL(fileURLWithPath: root).lastPathComponent, model: classifier.modelURL.lastPathComponent,
                        created: ISO8601DateFormatter().string(from: Date()), questions: asked)
        return Report(quiz: quiz, leftOut: leftOut, fromFolders: fromFolders, fromModel: fromModel)
    }

    static func answerFor(_ p: Prediction, _ catalogue: Catalogue?) -> Quiz.Answer {
        guard let breed = catalogue?.details(p) else { return Quiz.Answer(id: p.key, en: p.name, cs: nil) }
        return Quiz.Answer(id: breed.id, en: breed.name.en, cs: breed.name.cs)
    }
}
