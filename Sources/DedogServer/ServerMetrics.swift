import Foundation
import Metrics
import Prometheus

/// What `/metrics` shows, in Prometheus' text format: requests by route and status, their latency, the queue,
/// photos classified and their verdicts. Recorded through swift-metrics into a registry of the server's own (no
/// process-wide bootstrap, so that tests can run several servers).
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let queueDepth: Metrics.Gauge
    private let photos: Metrics.Counter
    private let rejected: Metrics.Counter

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        queueDepth = Metrics.Gauge(label: "dedog_queue_depth", factory: factory)
        photos = Metrics.Counter(label: "dedog_photos_classified_total", factory: factory)
        rejected = Metrics.Counter(label: "dedog_requests_rejected_total", dimensions: [("reason", "queue_full")], factory: factory)
        queueDepth.record(0)
        photos.increment(by: 0)
        rejected.increment(by: 0)
    }

    func request(route: String, method: String, status: Int, duration: Duration) {
        let dimensions = [("route", route), ("method", method), ("status", String(status))]
        Metrics.Counter(label: "dedog_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Metrics.Timer(label: "dedog_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    func classified(verdict: String) {
        photos.increment()
        Metrics.Counter(label: "dedog_verdicts_total", dimensions: [("verdict", verdict)], factory: factory).increment()
    }

    func queueFull() { rejected.increment() }

    func queue(depth: Int) { queueDepth.record(depth) }

    /// The Prometheus text exposition.
    func text() -> [UInt8] { registry.emitToBuffer() }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
