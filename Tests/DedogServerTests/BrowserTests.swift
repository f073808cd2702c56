import Foundation
import Testing
import DedogImage
import DedogTestSupport

/// The web page in a real headless Chromium, over WebDriver, against a real `dedog serve` on loopback: identify,
/// breeds, confirm and undo, the quiz, both languages, a phone-sized window. Screenshots go to
/// `.build/web-screenshots/`.
@Suite(.serialized, .enabled(if: WebDriver.unavailable == nil, Comment(rawValue: WebDriver.unavailable ?? "")))
final class BrowserTests {
    static let screenshots = SharedData.packageRoot.appendingPathComponent(".build/web-screenshots")
    static let beagle = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
    static let noise = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/png-rgb8.png")
    static let damaged = SharedData.packageRoot.appendingPathComponent("Tests/DedogImageTests/Fixtures/bad-huffman.jpg")
    static let modelName = "breeds-v2"

    let folder: URL
    let model: URL
    let quizFile: URL
    let server: ServerProcess

    /// A server on a copy of the default model (the page teaches it), offering a quiz made from test photos. The
    /// model has a name of its own, so the page must use the name the server gives (GET /v1/models).
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-browser-\(UUID().uuidString)")
        let quizzes = folder.appendingPathComponent("quizzes")
        try FileManager.default.createDirectory(at: quizzes, withIntermediateDirectories: true)
        model = folder.appendingPathComponent("mine.safetensors")
        try FileManager.default.copyItem(at: SharedData.packageRoot.appendingPathComponent("models/dedog-breeds.safetensors"), to: model)
        let photos = try QuizFixture.make()
        defer { try? FileManager.default.removeItem(at: photos) }
        quizFile = quizzes.appendingPathComponent("fixtures.json")
        let made = try ServerProcess.command(["quiz", "make", photos.path, "--output", quizFile.path, "--title", "Psi"])
        guard made.status == 0 else { throw WebDriver.Failure.protocolError("quiz make failed: \(made.stderr)") }
        server = try ServerProcess(["--learn-model", model.path, "--quizzes", quizzes.path, "--workers", "2",
                                    "--model-name", Self.modelName])
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    var url: String { "http://127.0.0.1:\(server.port)/" }

    func browser(width: Int = 1280, height: Int = 900, language: String = "en-US") throws -> WebDriver {
        let browser = try WebDriver(width: width, height: height, language: language)
        try browser.open(url)
        try browser.wait(for: "document.querySelector('#view h1')")
        return browser
    }

    func save(_ browser: WebDriver, _ name: String) throws {
        try browser.screenshot().write(to: Self.screenshots.appendingPathComponent(name + ".png"))
    }

    /// Chooses `photo` in the identify screen's file input and waits for its answer or error.
    func identify(_ browser: WebDriver, _ photo: URL) throws {
        try browser.run("delete document.body.dataset.resultMs;")
        try browser.upload("#photo", photo)
        try browser.wait(for: "document.body.dataset.resultMs")
    }

    func switchLanguage(_ browser: WebDriver) throws {
        let before = try browser.run("return document.documentElement.lang;") as? String
        try browser.click("#language")
        try browser.wait(for: "document.documentElement.lang !== '\(before ?? "")'")
        try browser.wait(for: "document.querySelector('#view h1')")
    }

    func expectCzech(_ browser: WebDriver, _ screen: String, ignoring: [String] = []) throws {
        var text = try browser.pageText()
        // The language switch names the other language in its own words (on a line of its own), and commands
        // are commands.
        for name in ignoring + ["dedog quiz make", "\nEnglish\n"] { text = text.replacingOccurrences(of: name, with: "\n") }
        let english = CzechWords.englishIn(text)
        #expect(english.isEmpty, "\(screen) in Czech shows English: \(english)\n\(text)")
    }

    func expectNoScriptErrors(_ browser: WebDriver) throws {
        // Refused uploads are 4xx answers the browser logs as failed loads; those are the API doing its job.
        let errors = try browser.consoleErrors().filter { !$0.contains("Failed to load resource") }
        #expect(errors.isEmpty, "\(errors)")
    }

    // MARK: Identify

    @Test func theSampleBeagleInEnglishAndCzech() throws {
        let b = try browser()
        try identify(b, Self.beagle)
        let verdict = try b.text("#verdict")
        #expect(verdict.hasPrefix("Most likely Beagle ("), "\(verdict)")
        #expect(verdict.firstMatch(of: /\(\d{1,3}\.\d%\)\.$/) != nil, "\(verdict)")
        let first = try b.run("const a = document.querySelector('#bars li a'); return [a.textContent, a.getAttribute('href')];") as? [String]
        #expect(first == ["Beagle", "#/breeds/beagle"])
        let percent = try b.text("#bars li .pct")
        #expect(verdict.contains(percent), "the bar's percentage \(percent) is the verdict's")
        // The frame where the model saw the dog is drawn over the photo, inside it, where the API's box says.
        let frame = try b.run("""
            const img = document.querySelector('#result .photo'), box = document.querySelector('#dog-box');
            const loaded = img.complete ? Promise.resolve() : new Promise((ok) => img.addEventListener('load', ok));
            return loaded.then(() => {
              const p = img.getBoundingClientRect(), r = box.getBoundingClientRect();
              return [box.hidden, (r.left - p.left) / p.width, (r.top - p.top) / p.height, r.width / p.width, r.height / p.height];
            });
            """) as? [Any]
        #expect(frame?.first as? Bool == false, "the frame is shown")
        let share = (frame?.dropFirst().compactMap { ($0 as? NSNumber)?.doubleValue }) ?? []
        #expect(share.count == 4 && share[0] >= -0.01 && share[1] >= -0.01 && share[0] + share[2] <= 1.01 && share[1] + share[3] <= 1.01
                && share[2] > 0.2 && share[3] > 0.2, "frame as shares of the photo: \(share)")
        #expect(try b.text(".photo-note") == "The frame shows where the model looked.")
        try save(b, "desktop-identify")

        try switchLanguage(b)
        try identify(b, Self.beagle)
        let czech = try b.text("#verdict")
        #expect(czech.hasPrefix("Nejspíš beagle ("), "\(czech)")
        #expect(czech.firstMatch(of: /\(\d{1,3},\d\s%\)\.$/) != nil, "Czech writes a decimal comma: \(czech)")
        #expect(try b.text("#bars li a") == "beagle")
        try expectCzech(b, "identify with a result", ignoring: ["beagle.jpg"])
        // The link goes to the breed's page.
        try b.click("#bars li a")
        try b.wait(for: "document.querySelector('#breed-name')?.textContent === 'beagle'")
        try expectCzech(b, "the beagle's page")
        try expectNoScriptErrors(b)
    }

    @Test func noDogAndADamagedFile() throws {
        let b = try browser()
        try identify(b, Self.noise)
        #expect(try b.text("#verdict") == "There seems to be no dog in this photo.")
        #expect(try b.run("return document.querySelectorAll('#bars li').length;") as? Int == 0)
        try identify(b, Self.damaged)
        let error = try b.text("#result [role=alert]")
        #expect(error.contains("The photo is damaged and cannot be read."), "\(error)")
        // The page goes on working.
        try identify(b, Self.beagle)
        #expect(try b.text("#verdict").hasPrefix("Most likely Beagle"))
        // Every photo of the visit is listed, newest first.
        let visit = try b.run("return [...document.querySelectorAll('#visit li strong')].map(e => e.textContent);") as? [String]
        #expect(visit == ["beagle.jpg", "bad-huffman.jpg", "png-rgb8.png"])
        try switchLanguage(b)
        try identify(b, Self.noise)
        #expect(try b.text("#verdict") == "Na fotce asi není žádný pes.")
        try identify(b, Self.damaged)
        #expect(try b.text("#result [role=alert]").contains("Fotka je poškozená"))
        try expectCzech(b, "no dog and a damaged photo", ignoring: ["beagle.jpg", "bad-huffman.jpg", "png-rgb8.png"])
        try expectNoScriptErrors(b)
    }

    /// A real cat photo: "no dog", and the page says it looks like a cat, in English and in Czech (issue 50).
    @Test(.needsPetsReal) func aCatIsNoDogAndSaidToBeACat() throws {
        let b = try browser()
        try identify(b, SharedData.cat)
        #expect(try b.text("#verdict") == "No dog: it looks like a cat.")
        #expect(try b.run("return document.querySelectorAll('#bars li').length;") as? Int == 0)
        try save(b, "desktop-cat")
        try switchLanguage(b)
        try identify(b, SharedData.cat)
        #expect(try b.text("#verdict") == "Žádný pes: vypadá to jako kočka.")
        try save(b, "desktop-cat-cs")
        try expectCzech(b, "a cat", ignoring: ["cat.1.jpg"])
        try expectNoScriptErrors(b)
    }

    /// Two Stanford test photos side by side (`DogPhotos.testPair`): a named box on each dog, and the list of both,
    /// in English and Czech.
    @Test(.needsStanfordDogs) func eachDogOfATwoDogPhotoGetsANamedBox() throws {
        let photo = try twoDogPhoto()
        let b = try browser()
        try identify(b, photo)
        let dogs = try b.text("#dogs")
        #expect(dogs.hasPrefix("The photo shows 2 dogs: "), "\(dogs)")
        let boxes = try b.run("""
            return [...document.querySelectorAll('.photo-frame .dog-box')].map((box) => {
              const frame = box.parentElement.getBoundingClientRect(), r = box.getBoundingClientRect();
              return [(r.left - frame.left) / frame.width, (r.right - frame.left) / frame.width, box.textContent, box.hidden];
            });
            """) as? [[Any]] ?? []
        try #require(boxes.count == 2, "\(boxes)")
        // The first photo is on the left; each box over its own side, named.
        let made = try DogPhotos.sideBySide(Self.twoDogs)
        let split = Double(made.boxes[1].x) / Double(made.image.width)
        for box in boxes {
            let (left, right, name) = (box[0] as? Double ?? -1, box[1] as? Double ?? -1, box[2] as? String ?? "")
            let onTheLeft = (left + right) / 2 < split
            #expect(name.hasPrefix(DogPhotos.testPairNames.en[onTheLeft ? 0 : 1] + " "), "\(box)")
            #expect(onTheLeft ? right <= split + 0.05 : left >= split - 0.05, "\(box)")
            #expect(box[3] as? Bool == false)
        }
        try save(b, "desktop-two-dogs")
        try switchLanguage(b)
        try identify(b, photo)
        let names = try b.run("return [...document.querySelectorAll('.dog-box-name')].map((n) => n.textContent);") as? [String] ?? []
        #expect(DogPhotos.testPairNames.cs.allSatisfy { name in names.contains { $0.hasPrefix(name + " ") } }, "\(names)")
        try expectNoScriptErrors(b)
    }

    static let twoDogs = DogPhotos.testPair

    /// The same two dogs close together, their boxes overlapping (`DogPhotos.closeTogether`): a box on each.
    @Test(.needsStanfordDogs) func dogsCloseTogetherGetABoxEach() throws {
        let made = try DogPhotos.closeTogether(Self.twoDogs)
        let photo = folder.appendingPathComponent("close-together.jpg")
        try Data(JPEGEncoder.encode(made.image, quality: 92)).write(to: photo)
        let b = try browser()
        try identify(b, photo)
        let boxes = try b.run("""
            return [...document.querySelectorAll('.photo-frame .dog-box')].map((box) => {
              const frame = box.parentElement.getBoundingClientRect(), r = box.getBoundingClientRect();
              return [(r.left - frame.left) / frame.width, (r.top - frame.top) / frame.height,
                      r.width / frame.width, r.height / frame.height];
            });
            """) as? [[Double]] ?? []
        try #require(boxes.count == 2, "\(boxes)")
        // Each frame on its own dog: the box's pixels from the frame's share of the photo.
        let (w, h) = (Double(made.image.width), Double(made.image.height))
        let found = boxes.map { (Int($0[0] * w), Int($0[1] * h), Int($0[2] * w), Int($0[3] * h)) }.sorted { $0.0 < $1.0 }
        for (box, truth) in zip(found, made.boxes) { #expect(DogPhotos.overlap(box, truth) >= 0.5, "\(box) against \(truth)") }
    }

    /// The two-dog photo as a JPEG in this suite's folder.
    func twoDogPhoto() throws -> URL {
        let url = folder.appendingPathComponent("two-dogs.jpg")
        try Data(JPEGEncoder.encode(DogPhotos.sideBySide(Self.twoDogs).image, quality: 92)).write(to: url)
        return url
    }

    // MARK: Breeds

    @Test func searchingCivavaFindsTheChihuahua() throws {
        let b = try browser()
        try b.open(url + "#/breeds")
        try b.wait(for: "document.querySelectorAll('#breed-list li').length > 300")
        try b.type("#breed-search", "civava")
        try b.wait(for: "document.querySelectorAll('#breed-list li').length < 10")
        let first = try b.text("#breed-list li a strong")
        #expect(first == "Chihuahua")
        try b.click("#breed-list li a")
        try b.wait(for: "document.querySelector('#breed-name')?.textContent === 'Chihuahua'")
        let fields = try b.text("#breed-fields")
        for expected in ["Czech: čivava", "standard no. 218", "group 9: Companion and Toy Dogs", "Mexico", "Sources",
                         "paiv/fci-breeds", "recognises it"] {
            #expect(fields.contains(expected), "\(expected) in \(fields)")
        }
        let lines = try b.text("#view").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(!lines.contains("null") && !lines.contains("false"), "a left-out part shown as a word: \(lines.prefix(5))")
        try save(b, "desktop-breed")
        // The filter: the breeds the model recognises (the search kept from before cleared).
        try b.open(url + "#/breeds?q=")
        try b.wait(for: "document.querySelectorAll('#breed-list li').length > 300")
        try b.click("#only-recognised")
        try b.wait(for: "document.querySelectorAll('#breed-list li').length === 133")
        try switchLanguage(b)
        try b.wait(for: "document.querySelector('#breed-count')?.textContent === 'Počet plemen: 133'")
        try expectCzech(b, "the breed list")
        try b.type("#breed-search", "čivava")
        try b.wait(for: "document.querySelector('#breed-list li a strong')?.textContent === 'čivava'")
        try b.click("#breed-list li a")
        try b.wait(for: "document.querySelector('#breed-name')?.textContent === 'čivava'")
        #expect(try b.text("#breed-fields").contains("skupina 9: společenská plemena"))
        try expectCzech(b, "the Chihuahua's page")
        try expectNoScriptErrors(b)
    }

    // MARK: Confirm

    func memory() throws -> [[String: Any]] {
        let answer = try server.get("/v1/memory")
        return ((answer.json as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
    }

    @Test func confirmingAPhotoTeachesTheModelAndUndoForgetsIt() throws {
        let before = try Data(contentsOf: model)
        #expect(try memory().isEmpty)
        let b = try browser()
        try identify(b, Self.beagle)
        try b.wait(for: "document.querySelectorAll('#confirm-breed option').length === 134")
        #expect(try b.run("return document.querySelector('#confirm-breed').value;") as? String == "beagle")
        try b.click("#confirm")
        try b.wait(for: "document.querySelector('#undo')")
        #expect(try b.text(".confirm-note").hasPrefix("Learned as Beagle. The model now remembers 1 confirmed photos."))
        let learned = try memory()
        #expect(learned.count == 1)
        #expect(learned.first?["label"] as? String == "n02088364-beagle")
        #expect(try Data(contentsOf: model) != before, "the model file holds the photo")
        try b.click("#undo")
        try b.wait(for: "document.querySelector('.confirm-note')?.textContent.startsWith('Undone')")
        #expect(try memory().isEmpty)
        try switchLanguage(b)
        try identify(b, Self.beagle)
        try b.wait(for: "document.querySelectorAll('#confirm-breed option').length === 134")
        try expectCzech(b, "confirm", ignoring: ["beagle.jpg"])
        try expectNoScriptErrors(b)
    }

    /// A dog of a breed the model does not know (a model whose rule calls every dog unknown): the verdict names the
    /// breeds it looks most like and its kind (the beagle's own), in English and Czech; the confirm card offers "another breed" at once, and a breed
    /// typed there (Czech) is taught, then undone.
    @Test func anUnknownBreedIsSaidAndTaughtFromThePage() throws {
        let unknown = folder.appendingPathComponent("unknown.safetensors")
        try ModelFileEdit.answeringEveryDogAsUnknown(SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors"),
                                                     to: unknown)
        let own = try ServerProcess(["--learn-model", unknown.path, "--workers", "1"])
        let b = try WebDriver(width: 1280, height: 900, language: "en-US")
        try b.open("http://127.0.0.1:\(own.port)/")
        try b.wait(for: "document.querySelector('#view h1')")
        try identify(b, Self.beagle)
        let bars = try b.run("return [...document.querySelectorAll('#bars li a')].map((a) => a.textContent);") as? [String] ?? []
        #expect(bars.count >= 2)
        #expect(try b.text("#verdict") == "A dog of a breed this model does not know, of the kind Scent hounds and related breeds "
                + "(FCI group 6); it looks most like \(bars.prefix(2).joined(separator: ", ")).")
        #expect(try b.run("return document.querySelector('#confirm-breed').value;") as? String == "(other)")
        #expect(try b.run("return document.querySelector('.confirm-new').hidden;") as? Bool == false)
        #expect(try b.text("#confirm") == "Teach dedog this breed")
        // Typing searches the catalogue: "jezevc" offers the Dachshund among its answers.
        try b.type("#confirm-new-breed", "jezevc")
        try b.wait(for: "[...document.querySelectorAll('#confirm-new-names option')].some((o) => o.value === 'Dachshund')")
        try b.run("document.querySelector('#confirm-new-breed').value = '';")
        try b.type("#confirm-new-breed", "jezevčík")
        try b.click("#confirm")
        try b.wait(for: "document.querySelector('#undo')")
        let note = try b.text(".confirm-note")
        #expect(note.hasPrefix("The model now knows Dachshund, learned from this photo."), "\(note)")
        let learned = ((try own.get("/v1/memory").json as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        #expect(learned.map { $0["label"] as? String } == ["dachshund"])
        try b.click("#undo")
        try b.wait(for: "document.querySelector('.confirm-note')?.textContent.startsWith('Undone')")
        try save(b, "desktop-unknown-breed")
        try switchLanguage(b)
        try identify(b, Self.beagle)
        #expect(try b.text("#verdict").hasPrefix("Pes plemene, které tento model nezná, druh: honiči, barváři a příbuzná plemena "
                                                  + "(skupina FCI 6); nejvíc se podobá: "))
        try expectCzech(b, "an unknown breed", ignoring: ["beagle.jpg"])
        try expectNoScriptErrors(b)
    }

    /// The kind of dog and careful mode on the page: a beagle to a model without the beagle and the coonhounds (its
    /// rule edited to call every dog unknown) is said to be a scent hound, in English and Czech, in the verdict and
    /// the visit's list; that model has no careful mode, so the page offers none. The default model offers it; on,
    /// the choice is remembered across a reload and the beagle is still a beagle.
    @Test func theKindOfDogAndCarefulMode() throws {
        let without = folder.appendingPathComponent("without.safetensors"), kind = folder.appendingPathComponent("kind.safetensors")
        try ModelFileEdit.withoutBreeds(["n02088364-beagle", "n02089867-Walker_hound", "n02088632-bluetick", "n02090379-redbone"],
                                        model, to: without)
        try ModelFileEdit.answeringEveryDogAsUnknown(without, to: kind)
        let own = try ServerProcess(["--model", kind.path, "--workers", "1"])
        let b = try WebDriver(width: 1280, height: 900, language: "en-US")
        try b.open("http://127.0.0.1:\(own.port)/")
        try b.wait(for: "document.querySelector('#view h1')")
        try identify(b, Self.beagle)
        let verdict = try b.text("#verdict")
        #expect(verdict.hasPrefix("A dog of a breed this model does not know, of the kind Scent hounds and related breeds (FCI group 6); "
                                  + "it looks most like English Foxhound, "), "\(verdict)")
        #expect(try b.text("#visit").contains("Scent hounds and related breeds (FCI group 6): a breed the model does not know"))
        #expect(try b.run("return document.querySelector('#careful-row').hidden;") as? Bool == true, "no careful mode to offer")
        try switchLanguage(b)
        try identify(b, Self.beagle)
        #expect(try b.text("#verdict").hasPrefix("Pes plemene, které tento model nezná, druh: honiči, barváři a příbuzná plemena (skupina FCI 6); "))
        try expectCzech(b, "the kind of dog", ignoring: ["beagle.jpg"])

        let d = try browser()
        try d.wait(for: "!document.querySelector('#careful-row').hidden")
        try d.click("#careful")
        try d.run("location.reload();")
        try d.wait(for: "document.querySelector('#careful') && !document.querySelector('#careful-row').hidden")
        #expect(try d.run("return document.querySelector('#careful').checked;") as? Bool == true)
        try identify(d, Self.beagle)
        #expect(try d.text("#verdict").hasPrefix("Most likely Beagle"), "careful, a beagle is still a beagle")
        try save(d, "desktop-careful")
        try d.click("#careful")  // off again, for the tests after this one in the same browser profile
        try expectNoScriptErrors(b)
        try expectNoScriptErrors(d)
    }

    // MARK: Quiz

    /// The quiz file's questions by photo, as the page shows them.
    func rightAnswers() throws -> [String: String] {
        let quiz = try JSONSerialization.jsonObject(with: Data(contentsOf: quizFile)) as? [String: Any]
        let questions = quiz?["questions"] as? [[String: Any]] ?? []
        return Dictionary(questions.map { q in
            ((q["photo"] as? String) ?? "", ((q["right"] as? [String: Any])?["id"] as? String) ?? "")
        }, uniquingKeysWith: { a, _ in a })
    }

    @Test func aQuizPlayedToTheScore() throws {
        let answers = try rightAnswers()
        #expect(answers.count == 4)
        let b = try browser(language: "cs-CZ")
        #expect(try b.run("return document.documentElement.lang;") as? String == "cs", "the page follows the browser's language")
        try b.open(url + "#/quiz")
        try b.wait(for: "document.querySelector('.quiz-start')")
        try expectCzech(b, "the quiz list")
        try switchLanguage(b)
        try b.wait(for: "document.querySelector('.quiz-start')")
        try b.click(".quiz-start")
        var missed: [String] = []
        for n in 1...answers.count {
            try b.wait(for: "document.querySelector('#progress')?.textContent === 'Question \(n) of \(answers.count)'")
            let photo = (try b.run("return document.querySelector('.quiz-photo').getAttribute('src');") as? String ?? "")
                .replacingOccurrences(of: "data:image/jpeg;base64,", with: "")
            let right = try #require(answers[photo])
            let options = try b.run("return [...document.querySelectorAll('.answers button')].map(b => b.dataset.answer);") as? [String] ?? []
            #expect(options.count == 3 && options.contains(right), "\(options)")
            if n == 1 {
                try b.click("#hint")
                try b.wait(for: "document.querySelector('#hint-text')?.textContent.startsWith('Country:')")
            }
            // Right on odd questions, wrong on even ones.
            let choice = n % 2 == 1 ? right : try #require(options.first { $0 != right })
            if choice != right { missed.append(right) }
            try b.click(".answers button[data-answer='\(choice)']")
            try b.wait(for: "!document.querySelector('#next').hidden")
            let feedback = try b.text("#feedback")
            #expect(feedback.hasPrefix(choice == right ? "Right! It is" : "Not quite: it is"), "\(feedback)")
            #expect(try b.run("return document.querySelector(\".answers button[data-answer='\(right)']\").classList.contains('right');") as? Bool == true)
            if n == 2 {
                try save(b, "desktop-quiz")
                try switchLanguage(b)
                try expectCzech(b, "a quiz question", ignoring: ["Psi"])
                try switchLanguage(b)
                // Redrawn in the language switched to and back: still answered, the same feedback, the same score.
                try b.wait(for: "document.querySelector('#progress')?.textContent === 'Question 2 of \(answers.count)'")
                #expect(try b.text("#feedback") == feedback)
                #expect(try b.text("#score") == "Score: 1")
                #expect(try b.run("return document.querySelector('#next').hidden;") as? Bool == false)
            }
            try b.click("#next")
        }
        try b.wait(for: "document.querySelector('#final-score')")
        let score = answers.count - missed.count
        #expect(try b.text("#final-score") == "You got \(score) of \(answers.count) right.")
        let missedShown = try b.run("return [...document.querySelectorAll('#missed li')].length;") as? Int
        #expect(missedShown == Set(missed).count)
        try save(b, "desktop-quiz-end")
        try b.click("#again-missed")
        try b.wait(for: "document.querySelector('#progress')?.textContent === 'Question 1 of \(missed.count)'")
        #expect(try b.text("#clock").isEmpty, "no time limit unless one is chosen")

        // A quiz file of the user's, uploaded: played with the time limit chosen; a file that is no quiz: said.
        try b.click("#quiz-stop")
        try b.wait(for: "document.querySelector('#quiz-file')")
        try b.run("const s = document.querySelector('#quiz-limit'); s.value = '20'; s.dispatchEvent(new Event('change'));")
        try b.upload("#quiz-file", quizFile)
        try b.wait(for: "document.querySelector('#progress')?.textContent === 'Question 1 of \(answers.count)'")
        #expect(try b.text("#clock") == "20 s left")
        try b.click("#quiz-stop")
        try b.wait(for: "document.querySelector('#quiz-file')")
        try b.upload("#quiz-file", SharedData.packageRoot.appendingPathComponent("Package.swift"))
        try b.wait(for: "document.querySelector('#quiz-problem [role=alert]')")
        #expect(try b.text("#quiz-problem").contains("This is not a valid dedog quiz file."))
        try expectNoScriptErrors(b)
    }

    /// A timed question's clock runs only while the question is on screen. It used to run on behind another
    /// screen, run out there, throw a TypeError and score the question as missed.
    @Test func aTimedQuestionWaitsWhileAnotherScreenIsShown() throws {
        let b = try browser()
        try b.open(url + "#/quiz")
        try b.wait(for: "document.querySelector('.quiz-start')")
        try b.run("const s = document.querySelector('#quiz-limit'); s.value = '10'; s.dispatchEvent(new Event('change'));")
        try b.click(".quiz-start")
        try b.wait(for: "document.querySelector('#clock')?.textContent === '10 s left'")
        try b.click("#nav a[data-route='breeds']")
        try b.wait(for: "document.querySelector('#breed-list')")
        Thread.sleep(forTimeInterval: 11.5)
        try b.click("#nav a[data-route='quiz']")
        try b.wait(for: "document.querySelector('.quiz-photo')")
        #expect(try b.text("#feedback").isEmpty, "the question is still open")
        #expect(try b.text("#score") == "Score: 0")
        let left = try b.text("#clock")
        #expect(["10 s left", "9 s left"].contains(left), "the clock goes on from where it was: \(left)")
        #expect(try b.run("return [...document.querySelectorAll('.answers button')].every((b) => !b.disabled);") as? Bool == true)
        // On its own screen the clock still runs out: the question is missed, and said so.
        try b.wait(for: "document.querySelector('#feedback')?.textContent.startsWith('Time is up: it is ')", timeout: 15)
        #expect(try b.text("#score") == "Score: 0")
        try expectNoScriptErrors(b)
    }

    // MARK: Live camera

    /// A browser whose camera plays `photo` (Chromium's fake camera, permission granted).
    func browserWithCamera(showing photo: URL, width: Int = 1280, height: Int = 900, language: String = "en-US") throws -> WebDriver {
        let video = folder.appendingPathComponent(photo.deletingPathExtension().lastPathComponent + ".y4m")
        if !FileManager.default.fileExists(atPath: video.path) { try FakeCamera.y4m(from: photo, to: video) }
        let b = try WebDriver(width: width, height: height, language: language, arguments: WebDriver.fakeCamera(playing: video))
        try b.open(url)
        try b.wait(for: "document.querySelector('#view h1')")
        return b
    }

    /// The camera sees two dogs (the two-dog photo played by the fake camera): a box on each, with its answer.
    @Test(.needsStanfordDogs) func theLiveCameraBoxesAndNamesEachDog() throws {
        let b = try browserWithCamera(showing: twoDogPhoto())
        try b.open(url + "#/live")
        try b.wait(for: "Number(document.body.dataset.liveAnswers) >= 2 && document.querySelector('#live-box-2') && !document.querySelector('#live-box-2').hidden",
                   timeout: 30)
        let names = try b.run("return [...document.querySelectorAll('.live-frame .dog-box')].filter((b) => !b.hidden).map((b) => b.textContent);") as? [String] ?? []
        // The frame is the photo at 640 pixels, through the fake camera's video: each dog's answer from its own crop
        // may be a breed, unsure or a breed the model does not know (the smaller dog was that in one run), but each
        // box carries one, and the larger dog is named.
        #expect(names.count == 2 && names.allSatisfy { !$0.isEmpty }, "\(names)")
        #expect(names.contains { $0.hasPrefix(DogPhotos.testPairNames.en[0] + " ") }, "\(names)")
        try save(b, "desktop-live-two-dogs")
        try expectNoScriptErrors(b)
    }

    /// `#/live` names the dog the camera sees (a beagle played by the fake camera), steadily, with the box where it
    /// is; pause stops the answers and "keep this one" puts the frame into the history. In Czech too.
    @Test func theLiveCameraNamesTheBreed() throws {
        let b = try browserWithCamera(showing: Self.beagle)
        try b.click("#live-link")
        try b.wait(for: "Number(document.body.dataset.liveAnswers) >= 4")
        let named = try b.text("#live-name")
        #expect(named.hasPrefix("Beagle "), "\(named)")
        #expect(try b.text("#live-announce").hasPrefix("Beagle "))
        #expect(try b.run("return document.querySelector('#live-box').hidden;") as? Bool == false, "the box where the dog is")
        #expect(try b.run("return document.querySelector('#live-video').videoWidth;") as? Int ?? 0 > 0)
        try save(b, "desktop-live")
        // The smoothing, frame by frame: one frame of another breed does not change the name; two frames without a
        // dog do (from a sequence of answers given to it directly).
        let shown = try b.runAsync("""
            const done = arguments[arguments.length - 1];
            import('/web/live.js').then(({ Smoother }) => {
              const s = new Smoother();
              const dog = (label, p) => ({ verdict: 'dog', breeds: [{ label, probability: p }, { label: 'other', probability: 1 - p }] });
              const none = { verdict: 'noDog', breeds: [] };
              done([dog('beagle', 0.9), dog('beagle', 0.8), dog('foxhound', 0.6), dog('beagle', 0.9), none, none, none]
                .map((r) => { const a = s.add(r); return a ? (a.breed?.label ?? a.verdict) : 'looking'; }));
            });
            """) as? [String]
        #expect(shown == ["beagle", "beagle", "beagle", "beagle", "beagle", "noDog", "noDog"], "\(shown ?? [])")
        // Paused: no more answers.
        try b.click("#live-pause")
        let paused = try b.run("return Number(document.body.dataset.liveAnswers);") as? Int ?? 0
        Thread.sleep(forTimeInterval: 1)
        #expect(try b.run("return Number(document.body.dataset.liveAnswers);") as? Int ?? 0 <= paused + 1)
        #expect(try b.text("#live-pause") == "Go on")
        try b.click("#live-keep")
        try b.wait(for: "document.querySelector('#live-note a[href=\"#/history\"]')")
        #expect(try b.text("#live-note").hasPrefix("Kept in the history: Beagle "))
        try b.click("#live-note a")
        try b.wait(for: "document.querySelector('#history li[data-id]')")
        #expect(try historyAnswers(b).first?.hasPrefix("Beagle ") == true)
        #expect(try b.run("return document.querySelector('#history .when').textContent.endsWith(' · camera');") as? Bool == true)
        // Leaving the screen lets the camera go.
        #expect(try b.run("return document.querySelector('#live-video') === null;") as? Bool == true)
        try switchLanguage(b)
        try b.open(url + "#/live")
        try b.wait(for: "Number(document.body.dataset.liveAnswers) >= 2 && document.querySelector('#live-name').textContent.startsWith('beagle')")
        try expectCzech(b, "the live camera", ignoring: ["--tls-cert", "--tls-key"])
        try expectNoScriptErrors(b)
    }

    /// On a phone-sized screen the live view fits, and without a camera the page says so and offers a photo.
    @Test func theLiveCameraOnAPhoneAndWithoutACamera() throws {
        let phone = try browserWithCamera(showing: Self.beagle, width: 320, height: 700, language: "cs-CZ")
        try phone.open(url + "#/live")
        try phone.wait(for: "Number(document.body.dataset.liveAnswers) >= 2")
        let cut = try overflow(phone)
        #expect(cut.isEmpty, "live on a phone: \(cut)")
        try save(phone, "phone-live-cs")
        // A browser with no camera at all (headless Chromium without the fake device has none).
        let none = try browser()
        try none.open(url + "#/live")
        try none.wait(for: "document.querySelector('#live-problem')")
        #expect(try none.text("#live-problem").hasPrefix("The camera cannot be used"))
        try none.click("#view a.button")
        try none.wait(for: "document.querySelector('#photo')")
        try expectNoScriptErrors(none)
    }

    // MARK: History

    /// Reloads the page and waits for its first screen.
    func reload(_ b: WebDriver) throws {
        try b.run("window.beforeReload = true; location.reload();")
        try b.wait(for: "!window.beforeReload && document.querySelector('#view h1')")
    }

    func historyAnswers(_ b: WebDriver) throws -> [String] {
        (try b.run("return [...document.querySelectorAll('#history li[data-id] .answer')].map((a) => a.textContent);") as? [String]) ?? []
    }

    /// Every identification goes into the browser's history: still there after a reload, in Czech too, one entry
    /// or all deletable. Only the photo on screen holds an object URL; the others' are revoked.
    @Test func theHistoryKeepsIdentificationsAcrossReloads() throws {
        let b = try browser()
        try b.run("""
            window.liveUrls = new Set();
            const make = URL.createObjectURL.bind(URL), revoke = URL.revokeObjectURL.bind(URL);
            URL.createObjectURL = (o) => { const u = make(o); liveUrls.add(u); return u; };
            URL.revokeObjectURL = (u) => { liveUrls.delete(u); revoke(u); };
            """)
        for photo in [Self.beagle, Self.noise, Self.damaged, Self.beagle] { try identify(b, photo) }
        #expect(try b.run("return liveUrls.size;") as? Int == 1, "only the photo on screen keeps an object URL")
        // Each photo of the visit gets its small picture once the browser has decoded it (Chromium shows what it
        // can of the damaged one too).
        try b.wait(for: "document.querySelectorAll('#visit li[data-visit]').length === 4 && document.querySelectorAll('#visit li[data-visit] img').length >= 3")
        try b.click("#nav a[data-route='history']")
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 3")
        #expect(try b.run("return liveUrls.size;") as? Int == 0, "leaving the identify screen lets its photo go")
        // Newest first; a damaged photo is no identification.
        let answers = try historyAnswers(b)
        #expect(answers.count == 3 && answers[0].hasPrefix("Beagle ") && answers[1] == "No dog" && answers[2].hasPrefix("Beagle "), "\(answers)")
        #expect(try b.run("return [...document.querySelectorAll('#history li img')].every((i) => i.src.startsWith('data:image/jpeg') && i.naturalWidth <= 160);") as? Bool == true)
        #expect(try b.run("return document.querySelector('#history li a.answer').getAttribute('href');") as? String == "#/breeds/beagle")

        try reload(b)
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 3")
        #expect(try historyAnswers(b) == answers, "the history survives a reload")
        try save(b, "desktop-history")
        try switchLanguage(b)
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 3")
        #expect(try historyAnswers(b)[1] == "Žádný pes")
        try expectCzech(b, "the history", ignoring: ["beagle.jpg", "png-rgb8.png"])
        try save(b, "desktop-history-cs")
        try switchLanguage(b)

        // One entry deleted: the middle one.
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 3")
        try b.click("#history li[data-id]:nth-child(2) button")
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 2")
        #expect(try b.text("#history-status") == "Deleted: No dog.")
        #expect(try historyAnswers(b) == [answers[0], answers[2]])
        try reload(b)
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === 2")
        // All deleted, after asking.
        try b.click("#history-delete-all")
        try b.wait(for: "document.querySelector('#history-delete-all-yes')")
        #expect(try b.text("#history-clear").hasPrefix("Delete all 2 identifications from this browser?"))
        try b.click("#history-delete-all-no")
        #expect(try historyAnswers(b).count == 2, "keeping them keeps them")
        try b.click("#history-delete-all")
        try b.click("#history-delete-all-yes")
        try b.wait(for: "document.querySelector('#history-empty')")
        try reload(b)
        try b.wait(for: "document.querySelector('#history-empty')")
        #expect(try b.text("#history-empty") == "Nothing here yet: the photos you identify will appear here.")

        // Past the limit the oldest go first, and the screen says how many went.
        let limit = try b.runAsync("""
            const done = arguments[arguments.length - 1];
            import('/web/history.js').then(async (history) => {
              for (let i = 1; i <= history.historyLimit + 2; i++) await history.remember(`dog-${i}.jpg`, null, { verdict: 'noDog', breeds: [] });
              done(history.historyLimit);
            });
            """) as? Int ?? 0
        #expect(limit == 300)
        try reload(b)
        try b.wait(for: "document.querySelectorAll('#history li[data-id]').length === \(limit)")
        let files = try b.run("return [...document.querySelectorAll('#history li[data-id] .when')].map((e) => e.textContent.split(' · ')[1]);") as? [String] ?? []
        #expect(files.first == "dog-\(limit + 2).jpg" && files.last == "dog-3.jpg", "\(files.prefix(1)) … \(files.suffix(1))")
        #expect(try b.text("#history-status") == "2 older identifications were dropped to stay within 300.")
        try expectNoScriptErrors(b)
    }

    // MARK: Phone

    /// Elements whose right edge is past the window, and whether the page scrolls sideways.
    func overflow(_ b: WebDriver) throws -> [String] {
        (try b.run("""
            const width = document.documentElement.clientWidth;
            const out = [];
            if (document.documentElement.scrollWidth > width) out.push('page scrolls sideways: ' + document.documentElement.scrollWidth);
            for (const el of document.querySelectorAll('body *')) {
              const r = el.getBoundingClientRect();
              if (r.width > 0 && r.right > width + 0.5 && getComputedStyle(el).position !== 'absolute')
                out.push(el.tagName + '.' + el.className + ' ends at ' + Math.round(r.right));
            }
            return out;
            """) as? [String]) ?? ["no answer"]
    }

    @Test func aPhoneSizedWindowCutsNothingOff() throws {
        let b = try browser(width: 320, height: 700)
        #expect(try b.run("return window.innerWidth;") as? Int == 320)
        try identify(b, Self.beagle)
        let cut = try overflow(b)
        #expect(cut.isEmpty, "identify: \(cut)")
        try save(b, "phone-identify")
        for (screen, route, ready) in [("breeds", "#/breeds", "document.querySelectorAll('#breed-list li').length > 300"),
                                       ("breed page", "#/breeds/cavalier-king-charles-spaniel", "document.querySelector('#breed-fields')"),
                                       ("quiz list", "#/quiz", "document.querySelector('.quiz-start')"),
                                       ("history", "#/history", "document.querySelector('#history li[data-id]')"),
                                       ("about", "#/about", "document.querySelector('#accuracy')")] {
            try b.open(url + route)
            try b.wait(for: ready)
            let cut = try overflow(b)
            #expect(cut.isEmpty, "\(screen): \(cut)")
            try save(b, "phone-" + screen.replacingOccurrences(of: " ", with: "-"))
        }
        try b.open(url + "#/quiz")
        try b.wait(for: "document.querySelector('.quiz-start')")
        try b.click(".quiz-start")
        try b.wait(for: "document.querySelector('.quiz-photo')")
        let cutQuiz = try overflow(b)
        #expect(cutQuiz.isEmpty, "quiz: \(cutQuiz)")
        try save(b, "phone-quiz")
        try switchLanguage(b)
        try b.open(url + "#/breeds/cavalier-king-charles-spaniel")
        try b.wait(for: "document.querySelector('#breed-fields')")
        let cutCzech = try overflow(b)
        #expect(cutCzech.isEmpty, "Czech breed page: \(cutCzech)")
        try b.open(url + "#/about")
        try b.wait(for: "document.querySelector('#accuracy')")
        try expectCzech(b, "about", ignoring: ["mine.safetensors", "stanford-dogs-224"])
        try save(b, "phone-about-cs")
        try b.open(url + "#/history")
        try b.wait(for: "document.querySelector('#history li[data-id]')")
        let cutHistory = try overflow(b)
        #expect(cutHistory.isEmpty, "Czech history: \(cutHistory)")
        try save(b, "phone-history-cs")
    }

    /// A screen whose data comes after the user has moved on does not replace the screen moved to: the Beagle's
    /// page, held back 400 ms, then at once the Dalmatian's; the Dalmatian's stays. Also the About screen's.
    @Test func aLateScreenDoesNotReplaceTheOneMovedTo() throws {
        let b = try browser()
        for first in ["#/breeds/beagle", "#/about"] {
            try b.run("""
                const slow = arguments[0];
                if (!window.realFetch) window.realFetch = window.fetch;
                window.fetch = (url, options) => String(url).includes(slow)
                  ? new Promise((done) => setTimeout(() => done(window.realFetch(url, options)), 400))
                  : window.realFetch(url, options);
                location.hash = arguments[1];
                setTimeout(() => { location.hash = '#/breeds/dalmatian'; }, 50);
                """, [first == "#/about" ? "/v1/models" : "/v1/breeds/beagle", first])
            try b.wait(for: "document.querySelector('#breed-fields') && document.querySelector('#view h1').textContent === 'Dalmatian'")
            Thread.sleep(forTimeInterval: 0.8)
            #expect(try b.run("return document.querySelector('#view h1').textContent;") as? String == "Dalmatian", "after \(first)")
            try b.run("window.fetch = window.realFetch; location.hash = '#/breeds';")
            try b.wait(for: "document.querySelector('#breed-list')")
        }
    }

    /// Every breed's page in Czech shows no English but proper names (the word list: `CzechWords`).
    @Test func everyBreedPageInCzechIsCzech() throws {
        let b = try browser()
        try switchLanguage(b)
        var found: [String] = []
        let ids = CzechWords.breedIDs
        for start in stride(from: 0, to: ids.count, by: 10) {
            let batch = Array(ids[start..<min(start + 10, ids.count)])
            // Each page in turn: its hash set, its fields waited for, its words kept.
            let texts = try b.runAsync("""
                const ids = arguments[0], done = arguments[arguments.length - 1], texts = [];
                const visit = (i) => {
                  if (i === ids.length) return done(texts);
                  const before = document.querySelector('#breed-fields'), since = Date.now();
                  location.hash = '#/breeds/' + encodeURIComponent(ids[i]);
                  const ready = () => {
                    const fields = document.querySelector('#breed-fields');
                    // A page that does not come within 8 s is reported with what the screen shows instead.
                    if (!fields && Date.now() - since > 8000) {
                      texts.push('STALLED: ' + document.querySelector('#view').innerText.slice(0, 500));
                      return visit(i + 1);
                    }
                    if (!fields || fields === before) return setTimeout(ready, 5);
                    texts.push(document.querySelector('#view').innerText);
                    visit(i + 1);
                  };
                  ready();
                };
                visit(0);
                """, [batch]) as? [String] ?? []
            #expect(texts.count == batch.count, "\(texts.count) of \(batch.count) pages from \(batch[0])")
            for (id, text) in zip(batch, texts) {
                guard !text.hasPrefix("STALLED") else {
                    Issue.record("\(id): the breed page did not come; the screen shows \(text)")
                    continue
                }
                let english = CzechWords.englishIn(text)
                if !english.isEmpty { found.append("\(id): \(english)") }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    // MARK: Keyboard, screen readers, dark mode

    /// Controls without a name a screen reader could say, and pictures without alt text, on the screen shown.
    func unnamed(_ b: WebDriver) throws -> [String] {
        (try b.run("""
            const out = [];
            for (const el of document.querySelectorAll('input, select, textarea, button, a[href]')) {
              const name = (el.labels && [...el.labels].map(l => l.textContent).join(' ').trim()) || el.getAttribute('aria-label')
                || el.getAttribute('aria-labelledby') || el.textContent.trim() || el.getAttribute('title');
              if (!name) out.push(el.tagName + (el.id ? '#' + el.id : '') + ' has no name');
            }
            for (const img of document.querySelectorAll('img')) if (!img.hasAttribute('alt')) out.push('img ' + img.src.slice(0, 40) + ' has no alt');
            return out;
            """) as? [String]) ?? ["no answer"]
    }

    /// ARIA a screen reader ignores or finds contradictory: a name on an element with no role (a span, a div),
    /// a status (polite by definition) made assertive, a live region around more than a line of text.
    func misusedARIA(_ b: WebDriver) throws -> [String] {
        (try b.run("""
            const out = [];
            const named = 'a, button, input, select, textarea, nav, section, main, form, img, ul, ol, table, [role]';
            for (const el of document.querySelectorAll('[aria-label]')) {
              if (!el.matches(named)) out.push(el.tagName + ' "' + el.getAttribute('aria-label') + '": a name on an element without a role');
            }
            for (const el of document.querySelectorAll('[role=status][aria-live=assertive]')) out.push((el.id || el.tagName) + ': an assertive status');
            for (const el of document.querySelectorAll('[aria-live], [role=status], [role=alert]')) {
              if (el.querySelector('img, button, select, input, ol, ul')) out.push((el.id || el.tagName) + ': a live region around controls or pictures');
            }
            return out;
            """) as? [String]) ?? ["no answer"]
    }

    /// Where each Tab goes, until `last` (an element id) or 15 presses.
    func tabStops(_ b: WebDriver, until last: String) throws -> [String] {
        var stops: [String] = []
        for _ in 0..<15 {
            try b.press("\u{E004}")
            let stop = try b.run("""
                const el = document.activeElement;
                const r = (el.closest('label') || el).getBoundingClientRect();
                return (el.id || el.getAttribute('href') || el.tagName) + (r.width > 0 && r.height > 0 ? '' : ' (invisible)');
                """) as? String ?? ""
            stops.append(stop)
            if stop.hasPrefix(last) { break }
        }
        return stops
    }

    /// With the keyboard alone, Tab goes from the skip link through the navigation to the photo chooser, each
    /// stop visible; on another screen it starts at that screen's heading. Every screen names its controls and
    /// pictures, and the answer is announced (a live region).
    @Test func keyboardAndScreenReaders() throws {
        let b = try browser()
        let stops = try tabStops(b, until: "photo")
        #expect(Array(stops.prefix(1)) == ["skip"], "the first Tab reaches the skip link: \(stops)")
        #expect(stops.contains("#/breeds") && stops.contains("language"), "\(stops)")
        #expect(Array(stops.suffix(2)) == ["camera", "photo"], "Tab reaches the photo choosers: \(stops)")
        #expect(!stops.contains { $0.hasSuffix("(invisible)") }, "\(stops)")

        try identify(b, Self.beagle)
        // The verdict alone is announced, not the whole answer (photo, bars, confirm form) at every update.
        #expect(try b.run("return document.querySelector('#result').getAttribute('aria-live');") as? String == nil)
        #expect(try b.text("#announce") == (try b.text("#verdict")))
        #expect(try b.run("return document.querySelector('#announce').getAttribute('role');") as? String == "status")
        var screens: [(String, [String])] = [("identify", try unnamed(b) + (try misusedARIA(b)))]
        for (screen, route, ready) in [("breeds", "#/breeds", "document.querySelectorAll('#breed-list li').length > 300"),
                                       ("breed page", "#/breeds/beagle", "document.querySelector('#breed-fields')"),
                                       ("about", "#/about", "document.querySelector('#accuracy')"),
                                       ("history", "#/history", "document.querySelector('#history li[data-id]')"),
                                       ("quiz list", "#/quiz", "document.querySelector('.quiz-start')")] {
            try b.open(url + route)
            try b.wait(for: ready)
            screens.append((screen, try unnamed(b) + (try misusedARIA(b))))
        }
        // A new screen: focus on its heading (announced), the next Tab its first control.
        #expect(try b.run("return document.activeElement.tagName;") as? String == "H1")
        #expect(try tabStops(b, until: "quiz-limit").first == "quiz-limit")
        try b.click(".quiz-start")
        try b.wait(for: "document.querySelector('.quiz-photo')")
        screens.append(("quiz question", try unnamed(b) + (try misusedARIA(b))))
        for (screen, problems) in screens { #expect(problems.isEmpty, "\(screen): \(problems)") }
    }

    /// With the system in dark mode, the page is dark, its text light enough to read.
    @Test func darkModeFollowsTheSystem() throws {
        let b = try browser()
        try b.devTools("Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": "dark"]]])
        try identify(b, Self.beagle)
        let colours = try b.run("""
            const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
            const luminance = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
              .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
            const page = luminance(rgb(getComputedStyle(document.body).backgroundColor));
            const text = luminance(rgb(getComputedStyle(document.querySelector('#verdict')).color));
            return [page, (Math.max(page, text) + 0.05) / (Math.min(page, text) + 0.05)];
            """) as? [Double] ?? []
        #expect(colours.count == 2 && colours[0] < 0.05, "the page's background: \(colours)")
        #expect(colours.count == 2 && colours[1] >= 7, "contrast of the verdict: \(colours)")
        try save(b, "desktop-identify-dark")
    }

    // MARK: Speed

    /// From choosing a photo to seeing its answer, against the API's own latency for the same photo chosen the
    /// same way (a file input's file, which the browser reads from disk) and sent by a bare fetch in the same
    /// browser: 21 interleaved pairs, alternating which goes first, in up to three rounds. The page may take 1.2 times
    /// the API's time, or add 20 ms of its own (one 60 Hz frame of waiting for the paint, and the rendering) when
    /// that is more: with 8-bit inference the API answers this photo in ~56 ms, where a ratio alone would leave the
    /// page 11 ms, less than the frame it must wait for. `scripts/test` runs it after the other tests, on its own:
    /// beside suites that train or classify it would measure their load.
    @Test func theResultComesWithinTheAPIsLatency() throws {
        let b = try browser()
        try b.run("""
            const input = document.createElement('input');
            input.type = 'file';
            input.id = 'api-photo';
            document.body.append(input);
            """)
        func api() throws -> Double {
            try b.upload("#api-photo", Self.beagle)
            let measured = try b.runAsync("""
                const done = arguments[arguments.length - 1];
                const file = document.querySelector('#api-photo').files[0];
                const started = performance.now();
                fetch('/predictions/\(Self.modelName)?top_k=5&lang=en', {method: 'POST', body: file,
                      headers: {'Content-Type': 'application/octet-stream'}})
                  .then(r => r.json()).then(() => done(performance.now() - started), e => done(-1));
                """) as? Double
            return measured ?? .nan
        }
        // The page's time as it measures it itself (file chosen → answer painted), started the way a user's choice
        // starts it (the chooser's change event) and waited for without polling: WebDriver commands in the middle
        // would run in the page and compete with the server, which the bare fetch does not have to share.
        func page() throws -> Double {
            try b.upload("#api-photo", Self.beagle)
            let measured = try b.runAsync("""
                const done = arguments[arguments.length - 1];
                const input = document.querySelector('#photo');
                const chosen = new DataTransfer();
                chosen.items.add(document.querySelector('#api-photo').files[0]);
                input.files = chosen.files;
                delete document.body.dataset.resultMs;
                new MutationObserver((_, observer) => {
                  if (document.body.dataset.resultMs === undefined) return;
                  observer.disconnect();
                  done(Number(document.body.dataset.resultMs));
                }).observe(document.body, { attributes: true, attributeFilter: ['data-result-ms'] });
                input.dispatchEvent(new Event('change', { bubbles: true }));
                """) as? Double
            return measured ?? .nan
        }
        _ = try page(); _ = try api()  // warm: plans, caches, the browser's first paint
        // One round: 21 interleaved pairs. On a 2-core machine another process waking up can slow a whole round;
        // a page that is slow stays slow, so up to three rounds are run and the page passes when one of them
        // holds (every round is reported).
        func round() throws -> (ratio: Double, own: Double, report: String) {
            var pages: [Double] = [], apis: [Double] = []
            for i in 0..<21 {
                if i % 2 == 0 {
                    pages.append(try page()); apis.append(try api())
                } else {
                    apis.append(try api()); pages.append(try page())
                }
            }
            // Paired: each page run against the API run beside it, so the server's drift over the run cancels.
            let median = { (xs: [Double]) in xs.sorted()[xs.count / 2] }
            let extra = median(zip(pages, apis).map { $0 - $1 })
            let ratio = (median(apis) + extra) / median(apis)
            let report = String(format: "page %.1f ms, API %.1f ms, the page's own time %.1f ms (medians of 21 interleaved pairs): %.2f×",
                                median(pages), median(apis), extra, ratio)
            return (ratio, extra, report + " — page \(pages.map { Int($0.rounded()) }) API \(apis.map { Int($0.rounded()) })")
        }
        let holds = { (r: (ratio: Double, own: Double, report: String)) in r.ratio <= 1.2 || r.own <= 20 }
        var rounds: [(ratio: Double, own: Double, report: String)] = []
        while rounds.count < 3, !rounds.contains(where: holds) { rounds.append(try round()) }
        let report = rounds.map(\.report).joined(separator: "\n") + "\n"
        try Data(report.utf8).write(to: Self.screenshots.appendingPathComponent("timing.txt"))
        print("browser timing: " + report, terminator: "")
        #expect(rounds.contains(where: holds), "\(report)")
    }
}
