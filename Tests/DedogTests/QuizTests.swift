import Foundation
import Testing
@_spi(Testing) @_spi(Benchmarks) import Dedog
import DedogCatalogue
import DedogImage
import DedogTestSupport

/// `dedog quiz make`'s library: right answers from folder names and from the model, wrong answers the model's own
/// next breeds, left-out photos counted; and quiz files from strangers refused.
@Suite struct QuizTests {
    static let model = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")

    static func made(wrong: Int = 2) throws -> (QuizMaker.Report, Classifier) {
        let folder = try QuizFixture.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let classifier = try Classifier(modelURL: model)
        let report = try QuizMaker.make(folder: folder.path, classifier: classifier, catalogue: try Catalogue.bundled(),
                                        wrongAnswers: wrong, title: "fixtures")
        return (report, classifier)
    }

    @Test func rightAnswersComeFromFoldersThenTheModel() throws {
        let (report, _) = try Self.made()
        let byFile = Dictionary(uniqueKeysWithValues: report.quiz.questions.map { ($0.file, $0) })
        #expect(Set(byFile.keys) == ["beagle.jpg", "beagle.webp", "not-really.avif", "mine.heic"])
        #expect(byFile["beagle.jpg"]?.right == Quiz.Answer(id: "beagle", en: "Beagle", cs: "beagle"))
        #expect(byFile["beagle.jpg"]?.source == "folder")
        // The folder's name wins over what the photo shows.
        #expect(byFile["not-really.avif"]?.right.id == "chihuahua")
        #expect(byFile["not-really.avif"]?.source == "folder")
        #expect(byFile["mine.heic"]?.right.id == "beagle")
        #expect(byFile["mine.heic"]?.source == "model")
        #expect(report.fromFolders == 3)
        #expect(report.fromModel == 1)
    }

    @Test func noDogPhotosAreLeftOutAndCounted() throws {
        let (report, _) = try Self.made()
        #expect(report.leftOut.map(\.why) == [.noDog])
        #expect(report.leftOut.first?.photo.hasSuffix("noise.png") == true)
    }

    /// The wrong answers are exactly the breeds the model ranks next for that photo, skipping the right one.
    @Test(arguments: [2, 3]) func wrongAnswersAreTheModelsNextBreeds(wrong: Int) throws {
        let (report, classifier) = try Self.made(wrong: wrong)
        let catalogue = try Catalogue.bundled()
        for q in report.quiz.questions {
            let photo = try #require(Data(base64Encoded: q.photo))
            #expect(ImageFormat.detect(photo) == .jpeg)
            let original = QuizFixture.layout.first { $0.path.hasSuffix("/" + q.file) || $0.path == q.file }
            let source = SharedData.packageRoot.appendingPathComponent(try #require(original).source)
            let ranked = try classifier.classify(contentsOf: source, top: 10).breeds
                .compactMap { catalogue.details($0)?.id }
            #expect(q.wrong.map(\.id) == Array(ranked.filter { $0 != q.right.id }.prefix(wrong)), "\(q.file)")
        }
    }

    @Test func aQuizSurvivesItsFile() throws {
        let (report, _) = try Self.made()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-quiz-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try report.quiz.encoded().write(to: file)
        #expect(try Quiz.load(file) == report.quiz)
    }

    // MARK: Hostile quiz files

    static func valid() throws -> [String: Any] {
        let (report, _) = try made()
        return try JSONSerialization.jsonObject(with: report.quiz.encoded()) as! [String: Any]
    }

    static func refusal(_ json: Any) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: json) else { return "unencodable" }
        return refusal(data)
    }

    static func refusal(_ data: Data) -> String? {
        do {
            _ = try Quiz.decode(data, name: "hostile.json")
            return nil
        } catch {
            guard case let .quiz(file, reason) = error else { return "wrong error \(error)" }
            return file == "hostile.json" ? reason : "wrong file \(file)"
        }
    }

    @Test func hostileQuizFilesAreRefused() throws {
        let quiz = try Self.valid()
        #expect(Self.refusal(quiz) == nil)
        let question = (quiz["questions"] as! [[String: Any]])[0]
        let png = try Data(contentsOf: SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png"))
        let jpeg = try #require(Data(base64Encoded: question["photo"] as! String))
        func withQuestion(_ key: String, _ value: Any) -> Any {
            var q = question
            q[key] = value
            return JSONEdit.set([q], at: ["questions"], in: quiz)
        }
        let right = question["right"]!
        let cases: [(String, Any, String)] = [
            ("other format", JSONEdit.set("zip", at: ["format"], in: quiz), "format"),
            ("newer version", JSONEdit.set(2, at: ["version"], in: quiz), "version 2"),
            ("no questions", JSONEdit.set([Any](), at: ["questions"], in: quiz), "no questions"),
            ("too many questions", JSONEdit.set(Array(repeating: question, count: Quiz.Limits.questions + 1), at: ["questions"], in: quiz), "at most"),
            ("right among wrong", withQuestion("wrong", [right, right]), "same breed twice"),
            ("one wrong answer", withQuestion("wrong", [(question["wrong"] as! [Any])[0]]), "2 or 3"),
            ("five wrong answers", withQuestion("wrong", Array(repeating: (question["wrong"] as! [Any])[0], count: 5)), "2 or 3"),
            ("photo not base64", withQuestion("photo", "not base64!"), "base64"),
            ("photo a PNG", withQuestion("photo", png.base64EncodedString()), "not a JPEG"),
            ("photo cut short", withQuestion("photo", jpeg.prefix(jpeg.count / 2).base64EncodedString()), "question 1's photo"),
            ("photo too big", withQuestion("photo", String(repeating: "A", count: 2 << 20)), "at most"),
            ("long title", JSONEdit.set(String(repeating: "x", count: 201), at: ["title"], in: quiz), "over 200"),
            ("control characters", JSONEdit.set("a\u{1b}[2Jb", at: ["title"], in: quiz), "control"),
            ("empty breed id", withQuestion("right", ["id": "", "en": "x"]), "empty"),
            ("title a number", JSONEdit.set(5, at: ["title"], in: quiz), "wrong type"),
            ("no questions key", (quiz as [String: Any]).filter { $0.key != "questions" }, "missing"),
            ("a list", [quiz], "wrong type"),
        ]
        for (name, json, expected) in cases {
            let reason = Self.refusal(json)
            #expect(reason?.contains(expected) == true, "\(name): \(reason ?? "accepted")")
        }
        #expect(Self.refusal(Data("{\"format\": ".utf8))?.contains("not a quiz") == true)
        #expect(Self.refusal(Data(repeating: 0x20, count: Quiz.Limits.fileBytes + 1))?.contains("at most") == true)
        // Deep nesting is refused by the JSON parser, not a stack overflow.
        #expect(Self.refusal(Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)) != nil)
    }

    @Test func aLargeFileIsRefusedBeforeItIsRead() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-quiz-big-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(Quiz.Limits.fileBytes + 1))
        try handle.close()
        #expect(throws: ClassifierError.self) { try Quiz.load(file) }
        #expect(throws: ClassifierError.self) { try Quiz.load(URL(fileURLWithPath: "/dev/zero")) }
    }
}
