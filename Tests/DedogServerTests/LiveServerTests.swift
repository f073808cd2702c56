import Foundation
import Testing
import DedogTestSupport

/// `dedog serve` as a process on an ephemeral port, spoken to over real sockets.
final class ServerProcess {
    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("dedog")
    let process = Process()
    let log: URL
    private(set) var port = 0

    init(_ arguments: [String]) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-serve-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = Self.binary
        process.arguments = ["serve", "--port", "0"] + arguments
        process.currentDirectoryURL = SharedData.packageRoot
        process.environment = ProcessInfo.processInfo.environment.merging(["LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"]) { $1 }
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let match = stderr.firstMatch(of: /on https?:\/\/127\.0\.0\.1:(\d+)/), let p = Int(match.1) {
                port = p
                break
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard port > 0 else { throw RawHTTPError.socket("the server did not start: \(stderr)") }
        // Over TLS the raw client cannot ask; the test asks with curl.
        while !arguments.contains("--tls-cert"), Date() < deadline, (try? get("/v2/health/ready").status) != 200 { Thread.sleep(forTimeInterval: 0.05) }
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: log)
    }

    var stderr: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The server's resident memory, from /proc.
    var residentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    func connection() throws -> RawConnection { try RawConnection(port: port) }

    func exchange(_ request: [UInt8], timeout: Int = 60) throws -> RawResponse {
        let c = try connection()
        c.send(request)
        guard let response = RawResponse(c.readAll(timeout: timeout)) else { throw RawHTTPError.socket("no response") }
        return response
    }

    func get(_ path: String) throws -> RawResponse { try exchange(RawRequest.make("GET", path)) }

    func post(_ path: String, _ body: [UInt8], contentType: String = "application/octet-stream") throws -> RawResponse {
        try exchange(RawRequest.make("POST", path, headers: [("Content-Type", contentType)], body: body))
    }

    /// Runs `dedog arguments…` to the end from the package root (output small enough for pipes).
    static func command(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = SharedData.packageRoot
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }

    /// Waits for the process to end; nil if it is still running after `timeout` seconds.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

@Suite(.serialized) struct LiveServerTests {
    static let multipart = "multipart/form-data; boundary=dedog-test-boundary"

    /// Each sample photo over HTTP gets the very JSON `dedog classify --json` prints for it.
    @Test func answersAsTheCommandLineDoes() throws {
        let server = try ServerProcess(["--model", "fast"])
        for format in ["jpg", "heic", "avif", "webp"] {
            let path = "datasets/samples/beagle.\(format)"
            let cli = try ServerProcess.command(["classify", "--json", "--model", "fast", path])
            #expect(cli.status == 0)
            let line = cli.stdout
            let body = RawRequest.multipart([("data", path, "image/\(format)", Fixture.photo("beagle.\(format)"))])
            let response = try server.post("/predictions/dedog", body, contentType: Self.multipart)
            #expect(response.status == 200)
            #expect(response.text == "[" + line.trimmingCharacters(in: .newlines) + "]", "\(format)")
        }
        #expect(server.stderr.contains("POST /predictions/dedog 200"))
    }

    /// What a hostile or broken client sends gets the right status, never a crash, and the server's memory
    /// stays bounded.
    @Test func hostileRequests() throws {
        let server = try ServerProcess(["--model", "fast", "--workers", "2", "--queue", "4", "--max-body", "20M",
                                        "--request-timeout", "2", "--idle-timeout", "5"])
        let beagle = Fixture.photo("beagle.jpg")
        _ = try server.post("/predictions/dedog", beagle)
        let before = server.residentBytes

        // A body declared over the limit: 413 at once, without waiting for (or storing) the body.
        let started = Date()
        let huge = try server.exchange(RawRequest.make("POST", "/predictions/dedog", contentLength: 200 << 20), timeout: 10)
        #expect(huge.status == 413)
        #expect(huge.errorCode == "bodyTooLarge")
        #expect(Date().timeIntervalSince(started) < 5)
        // 10,000 tiny parts: refused at the 17th.
        let tiny = RawRequest.multipart((0..<10_000).map { ("data", "p\($0).jpg", "image/jpeg", [UInt8](repeating: 0xAB, count: 8)) })
        let parts = try server.post("/predictions/dedog", tiny, contentType: Self.multipart)
        #expect(parts.status == 413)
        #expect(parts.errorCode == "tooManyParts")
        // A form that stops before its closing boundary, and one whose boundary never appears.
        let cut = RawRequest.multipart([("data", "a.jpg", "image/jpeg", beagle)], closed: false)
        #expect(try server.post("/predictions/dedog", cut, contentType: Self.multipart).errorCode == "truncatedMultipart")
        #expect(try server.post("/predictions/dedog", beagle, contentType: Self.multipart).errorCode == "truncatedMultipart")
        // Wrong content types.
        for type in ["text/plain", "application/json", "application/x-www-form-urlencoded"] {
            #expect(try server.post("/predictions/dedog", beagle, contentType: type).status == 415, "\(type)")
        }
        #expect(try server.post("/predictions/dedog", Array("GIF89a not really".utf8)).status == 415)
        // Path tricks: no file is ever served.
        for path in ["/../../etc/passwd", "/v1/breeds/..%2F..%2Fetc%2Fpasswd", "//etc/passwd", "/predictions/dedog/../../etc/passwd",
                     "/%2e%2e/%2e%2e/etc/passwd", "/v1/breeds/%00", "/" + String(repeating: "a/", count: 2000)] {
            let response = try server.get(path)
            #expect([400, 404].contains(response.status), "\(path): \(response.status)")
            #expect(!response.text.contains("root:"))
        }
        // A body that trickles: 408 after the request timeout, and the place it held is free again.
        let slowBody = try server.connection()
        slowBody.send(RawRequest.make("POST", "/predictions/dedog", contentLength: 1000) + [UInt8](repeating: 1, count: 10))
        let slow = RawResponse(slowBody.readAll(timeout: 10))
        #expect(slow?.status == 408)
        #expect(slow?.errorCode == "requestTimeout")
        // Headers that never end: the connection is closed after the idle timeout.
        let slowHeaders = try server.connection()
        _ = slowHeaders.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        #expect(slowHeaders.isClosedByServer(within: 10))
        // Not HTTP at all (a TLS hello).
        let tls = try server.connection()
        tls.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 0x42, count: 64))
        #expect(tls.isClosedByServer(within: 10))

        for _ in 0..<200 { #expect(try server.post("/predictions/dedog", beagle).status == 200) }
        #expect(try server.get("/ping").status == 200)
        let after = server.residentBytes
        #expect(after - before < 64 << 20, "resident memory grew from \(before >> 20) to \(after >> 20) MB")
        #expect(server.process.isRunning)
    }

    /// With every place taken, a further request gets 503 and Retry-After at once; the waiting one still succeeds.
    @Test func fullQueueAnswers503() throws {
        let server = try ServerProcess(["--model", "fast", "--workers", "1", "--queue", "0", "--request-timeout", "20"])
        let beagle = Fixture.photo("beagle.jpg")
        let holder = try server.connection()
        let request = RawRequest.make("POST", "/predictions/dedog", body: beagle)
        holder.send(Array(request.prefix(request.count - 100)))
        Thread.sleep(forTimeInterval: 0.5)
        let refused = try server.post("/predictions/dedog", beagle)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.errorCode == "busy")
        holder.send(Array(request.suffix(100)))
        #expect(RawResponse(holder.readAll())?.status == 200)
        let metrics = try server.get("/metrics").text
        #expect(metrics.contains(#"dedog_requests_rejected_total{reason="queue_full"} 1"#))
    }

    /// SIGTERM: new connections are refused, the request in flight is answered, and the process exits 0.
    @Test func gracefulShutdownFinishesTheRequestInFlight() throws {
        let server = try ServerProcess(["--model", "fast", "--shutdown-timeout", "20"])
        let beagle = Fixture.photo("beagle.jpg")
        let inFlight = try server.connection()
        let request = RawRequest.make("POST", "/predictions/dedog", body: beagle)
        inFlight.send(Array(request.prefix(request.count / 2)))
        Thread.sleep(forTimeInterval: 0.3)
        kill(server.process.processIdentifier, SIGTERM)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(throws: (any Error).self) { try server.get("/ping") }
        inFlight.send(Array(request.suffix(from: request.count / 2)))
        let response = RawResponse(inFlight.readAll())
        #expect(response?.status == 200)
        #expect((response?.json as? [String: Any])?["verdict"] as? String == "dog")
        #expect(server.waitForExit(timeout: 20) == 0)
    }

    /// Another address needs a decision about who may call.
    /// The page may teach only a model file of the user's: never a bundled one (by name, path or link), never
    /// one the server cannot rewrite, and off loopback only behind a token.
    @Test func learningNeedsAModelOfTheUsersOwn() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-learn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundled = SharedData.packageRoot.appendingPathComponent("models/dedog-breeds-fast.safetensors")
        let link = folder.appendingPathComponent("link.safetensors")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: bundled)
        let copy = folder.appendingPathComponent("mine.safetensors")
        try FileManager.default.copyItem(at: bundled, to: copy)
        for (arguments, message) in [
            (["--learn-model", "fast"], #""fast" is a bundled model, which dedog does not change"#),
            (["--learn-model", "models/dedog-breeds-fast.safetensors"], "is a bundled model, which dedog does not change"),
            (["--learn-model", link.path], "is a bundled model, which dedog does not change"),
            (["--learn-model", folder.appendingPathComponent("nope").path], "no such file; copy a bundled model there or train one"),
            (["--learn-model", copy.path, "--model", "fast"], "give it instead of --model, not with it"),
            (["--learn-model", copy.path, "--host", "0.0.0.0", "--no-auth"], "give --token instead of --no-auth"),
            (["--quizzes", folder.appendingPathComponent("nope").path], "give a folder of quiz files"),
        ] {
            let refused = try ServerProcess.command(["serve"] + arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
    }

    /// `--tls-cert` and `--tls-key`: the server speaks HTTPS with that certificate (curl trusting it alone gets
    /// answers) and nothing else; one without the other, or a file that is no certificate, is refused.
    @Test func httpsWithACertificateOfOnesOwn() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = (folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path)
        let made = try Tool.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                "-keyout", key, "-out", cert])
        try #require(made.status == 0, "openssl could not make a certificate")
        let server = try ServerProcess(["--model", "fast", "--workers", "1", "--tls-cert", cert, "--tls-key", key])
        #expect(server.stderr.contains("on https://127.0.0.1:\(server.port)"), "\(server.stderr)")
        var answer = (status: Int32(-1), output: "")
        for _ in 0..<100 {
            answer = try Tool.run("/usr/bin/curl", ["--silent", "--cacert", cert, "--write-out", " %{http_code}",
                                               "https://127.0.0.1:\(server.port)/v2/health/live"])
            if answer.status == 0 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(answer.status == 0 && answer.output.hasSuffix(" 200"), "\(answer)")
        let plain = try? server.get("/v2/health/live")
        #expect(plain?.status != 200, "plain HTTP gets no answer from an HTTPS server")
        for (arguments, message) in [(["--tls-cert", cert], "--tls-cert needs --tls-key"), (["--tls-key", key], "--tls-key needs --tls-cert"),
                                     (["--tls-cert", cert, "--tls-key", folder.appendingPathComponent("nope.pem").path], "no such readable file")] {
            let refused = try ServerProcess.command(["serve", "--port", "0"] + arguments)
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        let wrong = try ServerProcess.command(["serve", "--port", "0", "--model", "fast", "--tls-cert", key, "--tls-key", key])
        #expect(wrong.status == 1 && wrong.stderr.contains("--tls-cert/--tls-key: \(key): no PEM certificate could be read from it"), "\(wrong.stderr)")
    }

    /// The model's name is a segment of the predictions route: anything else is refused before the server starts.
    @Test func aModelNameIsOnePathSegment() throws {
        for name in ["a/b", "", ".hidden", "name with spaces", String(repeating: "x", count: 65)] {
            let refused = try ServerProcess.command(["serve", "--model-name", name])
            #expect(refused.status == 64, "\(name): \(refused.stderr)")
            #expect(refused.stderr.contains("give 1 to 64 letters, digits, '.', '_' or '-'"), "\(name): \(refused.stderr)")
        }
    }

    @Test func anOpenAddressNeedsATokenOrNoAuth() throws {
        let refused = try ServerProcess.command(["serve", "--host", "0.0.0.0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--host 0.0.0.0 lets other machines call the API: give --token TOKEN (or --token-file FILE)"))
    }
}
