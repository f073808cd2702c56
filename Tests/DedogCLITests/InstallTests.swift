import Foundation
import Testing
import DedogTestSupport

/// scripts/install puts a working dedog under a prefix, with its data, manual and completions, and takes all of it
/// away again; the installed binary works from any folder, finding nothing of the checkout.
@Suite struct InstallTests {
    static func script(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let r = try CLI.run(arguments, executable: SharedData.packageRoot.appendingPathComponent("scripts/\(name)"))
        return (r.status, r.stdout + r.stderr)
    }

    /// --watch-service adds a systemd user unit that runs the installed dedog's `tag --watch`, not enabled; uninstall
    /// takes it away with the rest.
    @Test func theWatchServiceIsInstalledOnlyWhenAskedFor() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let unit = prefix.appendingPathComponent("lib/systemd/user/dedog-tag-watch.service")
        let plain = try Self.script("install", ["--prefix", prefix.path, "--binary", CLI.binary.path])
        #expect(plain.status == 0 && !FileManager.default.fileExists(atPath: unit.path), "\(plain.output)")
        let installed = try Self.script("install", ["--prefix", prefix.path, "--binary", CLI.binary.path, "--watch-service"])
        #expect(installed.status == 0, "\(installed.output)")
        let text = try String(contentsOf: unit, encoding: .utf8)
        #expect(text.contains("ExecStart=/bin/sh -c 'exec \"\(prefix.path)/bin/dedog\" tag --watch --no-progress $DEDOG_TAG_FOLDERS'"), "\(text)")
        #expect(text.contains("Environment=DEDOG_TAG_FOLDERS=%h/Pictures") && text.contains("WantedBy=default.target"))
        #expect(installed.output.contains("not enabled; start it with systemctl --user enable --now dedog-tag-watch"))
        #expect(try Self.script("install", ["--uninstall", "--prefix", prefix.path]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: unit.path))
    }

    @Test func installRunsAnywhereAndUninstallRemovesEverything() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let installed = try Self.script("install", ["--prefix", prefix.path, "--binary", CLI.binary.path])
        #expect(installed.status == 0, "\(installed.output)")

        let expected = ["bin/dedog", "share/dedog/breeds.json", "share/dedog/openapi.json", "share/dedog/dedog-breeds.safetensors",
                        "share/dedog/dedog-breeds-fast.safetensors", "share/dedog/efficientnet-lite0-imagenet.safetensors", "share/dedog/web/index.html", "share/dedog/web/app.js",
                        "share/man/man1/dedog.1", "share/bash-completion/completions/dedog",
                        "share/zsh/site-functions/_dedog", "share/fish/vendor_completions.d/dedog.fish"]
        for file in expected {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)")
        }
        let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/dedog"), encoding: .utf8)
        #expect(bash.contains("classify") && bash.contains("--format"), "the completions know the commands")

        // From /, by absolute path, with no checkout to fall back on.
        let dedog = prefix.appendingPathComponent("bin/dedog")
        let photo = SharedData.packageRoot.appendingPathComponent("datasets/samples/beagle.jpg").path
        let classify = try CLI.run(["classify", "-k", "1", photo], in: URL(fileURLWithPath: "/"), executable: dedog)
        #expect(classify.status == 0, "\(classify.stderr)")
        #expect(classify.stdout.hasPrefix("\(photo): Beagle ("), "\(classify.stdout)")
        let search = try CLI.run(["breeds", "search", "chodsky pes"], in: URL(fileURLWithPath: "/"), executable: dedog)
        #expect(search.stdout.hasPrefix("Bohemian Shepherd Dog  chodský pes"), "\(search.stdout)\(search.stderr)")

        // The server finds its model, catalogue and API description where install put them, starts, and stops
        // on SIGTERM with status 0.
        let serve = Process()
        serve.executableURL = dedog
        serve.arguments = ["serve", "--port", "0", "--model", "fast"]
        serve.currentDirectoryURL = URL(fileURLWithPath: "/")
        let log = prefix.appendingPathComponent("serve.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: log)
        try serve.run()
        let deadline = Date().addingTimeInterval(60)
        var started = ""
        while Date() < deadline && serve.isRunning && !started.contains("dedog: serving") {
            Thread.sleep(forTimeInterval: 0.1)
            started = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        #expect(started.contains("dedog: serving dedog-breeds-fast.safetensors on http://127.0.0.1:"), "\(started)")
        serve.terminate()
        serve.waitUntilExit()
        #expect(serve.terminationStatus == 0, "\(started)")

        let removed = try Self.script("uninstall", ["--prefix", prefix.path])
        #expect(removed.status == 0, "\(removed.output)")
        for file in expected {
            #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file) is left")
        }
        #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/dedog").path))
        let again = try Self.script("uninstall", ["--prefix", prefix.path])
        #expect(again.status == 1 && again.output.contains("no dedog installed"), "\(again.output)")
    }

    /// docs/dedog.1 comes from scripts/make-manual; every option of every command of the built dedog is in it.
    @Test func theManualIsCurrent() throws {
        let page = try String(contentsOf: SharedData.packageRoot.appendingPathComponent("docs/dedog.1"), encoding: .utf8)
        let dump = try CLI.run(["--experimental-dump-help"])
        let root = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as! [String: Any]
        var missing: [String] = []
        func walk(_ command: [String: Any], path: String) {
            let name = path.isEmpty ? "dedog" : path
            if !page.contains(command["commandName"] as? String ?? "") { missing.append(name) }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for n in argument["names"] as? [[String: Any]] ?? [] where n["kind"] as? String == "long" {
                    let option = n["name"] as? String ?? ""
                    // mdoc writes --threads as `Fl -threads`, and -k/--top as `Fl k , -top`.
                    let pattern = "(Fl |, )-" + NSRegularExpression.escapedPattern(for: option) + "(?![A-Za-z0-9-])"
                    if page.range(of: pattern, options: .regularExpression) == nil { missing.append("\(name) --\(option)") }
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(sub, path: name + " " + (sub["commandName"] as? String ?? ""))
            }
        }
        walk(root["command"] as! [String: Any], path: "")
        #expect(missing.isEmpty, "run scripts/make-manual: docs/dedog.1 lacks \(missing)")
    }

    /// A help text continued on the next source line without its trailing backslash keeps that line's indentation
    /// in the middle of a sentence ("the int8             report"); twice so far. Only examples line up their
    /// `#` comments with runs of spaces.
    @Test func helpTextsHaveNoIndentationInsideASentence() throws {
        let dump = try CLI.run(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var gaps: [String] = []
        func walk(_ command: [String: Any], path: String) {
            let texts = [command["abstract"], command["discussion"]]
                + (command["arguments"] as? [[String: Any]] ?? []).flatMap { [$0["abstract"], $0["discussion"]] }
            for case let text as String in texts {
                for line in text.split(separator: "\n") where !line.contains("#")
                    && line.range(of: #"\S {4,}\S"#, options: .regularExpression) != nil {
                    gaps.append("\(path): \(line)")
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(sub, path: path + " " + (sub["commandName"] as? String ?? ""))
            }
        }
        walk(try #require(root["command"] as? [String: Any]), path: "dedog")
        #expect(gaps.isEmpty, "\(gaps)")
    }
}
