import Foundation
import DedogTestSupport

/// Headless Chromium driven over W3C WebDriver (Debian's `chromium` and `chromium-driver`), spoken to with the
/// tests' raw HTTP client. One driver process and one browser session per instance.
final class WebDriver {
    enum Failure: Error, CustomStringConvertible {
        case missing(String)
        case protocolError(String)
        case timeout(String)

        var description: String {
            switch self {
            case let .missing(what): return what
            case let .protocolError(what): return "WebDriver: \(what)"
            case let .timeout(what): return "timed out waiting for \(what)"
            }
        }
    }

    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why the browser tests cannot run here, or nil when they can.
    static var unavailable: String? {
        guard chromium != nil, chromedriver != nil else {
            return "Chromium or chromedriver is missing: scripts/test installs them (scripts/install-deps --browser)"
        }
        return nil
    }

    /// Chromium's arguments for a fake camera playing `video` (a Y4M file), the permission granted.
    static func fakeCamera(playing video: URL) -> [String] {
        ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", "--use-file-for-fake-video-capture=\(video.path)"]
    }

    private let driver = Process()
    private let port: Int
    private var session = ""

    /// A browser with a `width`×`height` window, asking for `language` first, started with `arguments` too.
    init(width: Int, height: Int, language: String = "en-US", arguments: [String] = []) throws {
        guard let chromium = Self.chromium, let chromedriver = Self.chromedriver else { throw Failure.missing(Self.unavailable ?? "") }
        port = Self.freePort()
        driver.executableURL = URL(fileURLWithPath: chromedriver)
        driver.arguments = ["--port=\(port)"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, (try? request("GET", "/status")) == nil { Thread.sleep(forTimeInterval: 0.1) }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-chromium-\(UUID().uuidString)").path
        var options: [String: Any] = [
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                     "--window-size=\(max(width, 600)),\(height)", "--lang=\(language)", "--user-data-dir=\(profile)",
                     "--force-device-scale-factor=1"] + arguments,
            "prefs": ["intl.accept_languages": language],
        ]
        // A window is at least 500 px wide; a phone's viewport is emulated as a phone (touch, mobile layout).
        if width < 600 {
            options["mobileEmulation"] = ["deviceMetrics": ["width": width, "height": height, "pixelRatio": 1, "touch": true, "mobile": true]]
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome", "goog:chromeOptions": options, "goog:loggingPrefs": ["browser": "ALL"],
        ] as [String: Any]]]
        let answer = try request("POST", "/session", capabilities)
        guard let id = (answer as? [String: Any])?["sessionId"] as? String else {
            throw Failure.protocolError("no session: \(String(describing: answer))")
        }
        session = id
    }

    deinit {
        _ = try? request("DELETE", "/session/\(session)")
        // chromedriver outlives SIGTERM; the session's browser is gone after DELETE.
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        driver.waitUntilExit()
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// One WebDriver command; its `value`.
    @discardableResult
    func request(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let connection = try RawConnection(port: port)
        _ = connection.send(RawRequest.make(method, path, headers: [("Content-Type", "application/json")], body: [UInt8](data),
                                            contentLength: method == "POST" ? data.count : nil))
        guard let response = RawResponse(connection.readAll(timeout: 120, untilComplete: true)) else { throw Failure.protocolError("no answer to \(method) \(path)") }
        let json = try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])
        let value = (json as? [String: Any])?["value"]
        if response.status >= 400 {
            let message = (value as? [String: Any]).map { "\($0["error"] ?? "") \($0["message"] ?? "")" } ?? String(decoding: response.body, as: UTF8.self)
            throw Failure.protocolError("\(method) \(path): \(response.status) \(message.prefix(500))")
        }
        return value
    }

    private var base: String { "/session/\(session)" }

    func open(_ url: String) throws { try request("POST", "\(base)/url", ["url": url]) }

    /// Runs `script` (a function body; `arguments` are its arguments) in the page; its return value.
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try request("POST", "\(base)/execute/sync", ["script": script, "args": arguments])
    }

    /// Runs `script`, which calls `arguments[arguments.length - 1](value)` when done; that value.
    func runAsync(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try request("POST", "\(base)/execute/async", ["script": script, "args": arguments])
    }

    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    func find(_ css: String) throws -> String {
        let value = try request("POST", "\(base)/element", ["using": "css selector", "value": css])
        guard let id = (value as? [String: Any])?[Self.elementKey] as? String else { throw Failure.protocolError("no element \(css)") }
        return id
    }

    func click(_ css: String) throws { try request("POST", "\(base)/element/\(try find(css))/click", [String: Any]()) }

    func type(_ css: String, _ text: String) throws {
        try request("POST", "\(base)/element/\(try find(css))/value", ["text": text])
    }

    /// Gives a file input a file, as a user choosing it would.
    func upload(_ css: String, _ file: URL) throws { try type(css, file.path) }

    func text(_ css: String) throws -> String {
        (try request("GET", "\(base)/element/\(try find(css))/text") as? String) ?? ""
    }

    /// Every visible word of the page.
    func pageText() throws -> String { (try run("return document.body.innerText;") as? String) ?? "" }

    /// Waits until `condition` (a JavaScript expression) is true in the page.
    func wait(for condition: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? run("return !!(\(condition));")) as? Bool == true { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure.timeout("\(condition); the page says: \((try? pageText())?.prefix(3000) ?? "")")
    }

    /// Presses `key` (a WebDriver key code, e.g. "\u{E004}" for Tab) on the focused element.
    func press(_ key: String) throws {
        try request("POST", "\(base)/actions", ["actions": [["type": "key", "id": "keyboard", "actions": [
            ["type": "keyDown", "value": key], ["type": "keyUp", "value": key],
        ]]]])
    }

    /// Chromium's DevTools command `command` (e.g. Emulation.setEmulatedMedia), through chromedriver.
    func devTools(_ command: String, _ parameters: [String: Any]) throws {
        try request("POST", "\(base)/goog/cdp/execute", ["cmd": command, "params": parameters])
    }

    func screenshot() throws -> Data {
        guard let base64 = try request("GET", "\(base)/screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw Failure.protocolError("no screenshot")
        }
        return data
    }

    /// Errors the page's scripts logged (the browser's console at level SEVERE).
    func consoleErrors() throws -> [String] {
        let entries = (try? request("POST", "\(base)/se/log", ["type": "browser"])) as? [[String: Any]] ?? []
        return entries.filter { ($0["level"] as? String) == "SEVERE" }.compactMap { $0["message"] as? String }
    }
}
