import Foundation
import Testing
import DedogTestSupport

/// The live camera's benchmark, not a test: `scripts/bench-live` runs it (DEDOG_BENCH_LIVE=1). For each bundled
/// model, a real `dedog serve` and headless Chromium whose fake camera plays the sample beagle: the time from the
/// camera's first frame to the first answer on the page, answers per second over `seconds`, and the page's time
/// per answer against the API's own time for the same frames (measured in the same run: the ratio is what to read
/// on a noisy machine).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["DEDOG_BENCH_LIVE"] != nil && WebDriver.unavailable == nil))
struct LiveCameraBench {
    @Test func answersPerSecond() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["DEDOG_BENCH_SECONDS"] ?? "") ?? 20
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dedog-live-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let video = folder.appendingPathComponent("beagle.y4m")
        try FakeCamera.y4m(from: BrowserTests.beagle, to: video)
        var rows: [String] = []
        for model in ["default", "fast"] {
            let server = try ServerProcess(["--model", model])
            let b = try WebDriver(width: 1280, height: 900, arguments: WebDriver.fakeCamera(playing: video))
            try b.open("http://127.0.0.1:\(server.port)/#/live")
            try b.wait(for: "document.body.dataset.liveFirstAnswerMs", timeout: 60)
            let first = (try b.run("return Number(document.body.dataset.liveFirstAnswerMs);") as? Double) ?? .nan
            func counts() throws -> (answers: Double, apiMs: Double, at: Double) {
                let v = try b.run("""
                    const d = document.body.dataset;
                    return [Number(d.liveAnswers), Number(d.liveApiMs), performance.now()];
                    """) as? [Double] ?? []
                return v.count == 3 ? (v[0], v[1], v[2]) : (.nan, .nan, .nan)
            }
            let start = try counts()
            Thread.sleep(forTimeInterval: seconds)
            let end = try counts()
            let answers = end.answers - start.answers
            let perSecond = answers / ((end.at - start.at) / 1000)
            let apiMs = (end.apiMs - start.apiMs) / answers
            let pageMs = (end.at - start.at) / answers
            rows.append(String(format: "| %@ | %.0f ms | %.1f | %.1f ms | %.1f ms | %.2f× |", model, first, perSecond, pageMs, apiMs, pageMs / apiMs))
            #expect(answers > 0)
        }
        print("""
            live camera, \(Int(seconds)) s a model, 640 px frames, one request at a time:
            | model | first frame → first answer | answers/s | page per answer | API per answer | page / API |
            |---|---|---|---|---|---|
            \(rows.joined(separator: "\n"))
            """)
    }
}
