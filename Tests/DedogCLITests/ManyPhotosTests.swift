import Foundation
import Testing
import DedogTestSupport

/// `classify` for people with many photos: CSV, the closing summary, the progress line on a terminal.
@Suite struct ManyPhotosTests {
    /// A folder with the bundled beagle under awkward names, a text file and a broken JPEG.
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let beagle = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg")
        for name in [#"a,"quoted" dog.jpg"#, "=SUM(A1).jpg", "rex.heic"] {
            let source = name.hasSuffix(".heic") ? beagle.deletingPathExtension().appendingPathExtension("heic") : beagle
            try FileManager.default.copyItem(at: source, to: dir.appendingPathComponent(name))
        }
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0]).write(to: dir.appendingPathComponent("broken.jpg"))
        return dir
    }

    @Test func csvHasAHeaderAndOneRowPerPhotoQuotedForSpreadsheets() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["classify", "--format", "csv", "-k", "2", dir.path])
        #expect(r.status == 1)  // the broken JPEG
        let rows = r.stdout.split(separator: "\n").map(String.init)
        try #require(rows.count == 5, "\(r.stdout)")
        #expect(rows[0] == "file,verdict,breed,probability,breed_2,probability_2,looks_like,kind,error,dog,x,y,width,height")
        #expect(rows[1].hasPrefix("\(dir.path)/=SUM(A1).jpg,dog,Beagle,0.9"), "\(rows[1])")
        #expect(rows[2].hasPrefix("\"\(dir.path)/a,\"\"quoted\"\" dog.jpg\",dog,Beagle,0.9"), "\(rows[2])")
        #expect(rows[3].hasPrefix("\(dir.path)/broken.jpg,error,,,,,,,\(dir.path)/broken.jpg: the image data is"), "\(rows[3])")
        #expect(rows[4].hasPrefix("\(dir.path)/rex.heic,dog,Beagle,0.9"))
        #expect(rows[4].contains(",Treeing Walker Coonhound,0.0"))
        #expect(rows.dropFirst().allSatisfy { !$0.contains("Summary") })
    }

    /// Several photos are classified side by side (a thread each), yet printed in the order they were found, with
    /// the very answers of a one-thread run.
    @Test func photosSideBySideAnswerAsOneByOne() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let arguments = ["classify", "--json", dir.path, "datasets/samples", "Tests/DedogImageTests/Fixtures/png-rgb8.png"]
        let serial = try CLI.run(arguments + ["--threads", "1"])
        let sideBySide = try CLI.run(arguments + ["--threads", "3"])
        #expect(serial.stdout.split(separator: "\n").count == 9, "\(serial.stdout)")  // 4 + 4 + 1; the README is skipped
        #expect(sideBySide.stdout == serial.stdout)
        #expect(sideBySide.stderr == serial.stderr)
        #expect(sideBySide.status == serial.status)
    }

    /// A file name a spreadsheet would take for a formula is written with a leading apostrophe.
    @Test func csvNeverHandsASpreadsheetAFormula() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["classify", "--format", "csv", "-k", "1", "=SUM(A1).jpg"], in: dir)
        #expect(r.stdout.split(separator: "\n").last?.hasPrefix("'=SUM(A1).jpg,dog,Beagle,") == true, "\(r.stdout)")
    }

    @Test func csvAndJSONDisagreeingIsAUsageError() throws {
        let r = try CLI.run(["classify", "--json", "--format", "csv", "datasets/samples/beagle.jpg"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--json and --format csv disagree"))
    }

    @Test func textEndsWithASummaryOfVerdictsAndBreeds() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["classify", "-k", "1", dir.path, "Tests/DedogImageTests/Fixtures/png-rgb8.png"])
        #expect(r.stdout.hasSuffix("""
            Summary — photos: 5 · breed named: 3 · unsure: 0 · no dog: 1 · failed: 1
              Beagle  3

            """), "\(r.stdout)")
        let czech = try CLI.run(["classify", "-k", "1", "--lang", "cs", dir.path])
        #expect(czech.stdout.hasSuffix("""
            Souhrn — fotek: 4 · plemeno určeno: 3 · nejisté: 0 · bez psa: 0 · nelze přečíst: 1
              beagle  3

            """), "\(czech.stdout)")
        let one = try CLI.run(["classify", "datasets/samples/beagle.jpg"])
        #expect(!one.stdout.contains("Summary"), "one photo needs no summary")
    }

    /// On a terminal (here a pseudo-terminal from util-linux's `script`), a folder gets a progress line that is
    /// cleared before every result and at the end; through a pipe, none.
    @Test func progressLineOnlyOnATerminal() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            print("skipped: /usr/bin/script (util-linux) is missing")
            return
        }
        let command = "\(CLI.binary.path) classify -k 1 '\(dir.path)'"
        let output = try Tool.run(script.path, ["-qec", command, "/dev/null"],
                                  environment: ProcessInfo.processInfo.environment.merging(["LC_ALL": "C.UTF-8"]) { $1 }).output
        #expect(output.contains("\r\u{1B}[K1/4 (25 %) · about "), "\(output.debugDescription)")
        #expect(output.contains("\r\u{1B}[K3/4 (75 %)"))
        #expect(!output.contains("4/4"), "the line is gone once every photo is done")
        #expect(output.contains("Summary — photos: 4"))
        let piped = try CLI.run(["classify", "-k", "1", dir.path])
        #expect(!piped.stderr.contains("\u{1B}[K"))
    }
}
