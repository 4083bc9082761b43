import CoreMetrics
import Foundation
import Metrics
import Prometheus

/// The server's metrics, through swift-metrics handles backed by swift-prometheus, in a registry of
/// the server's own (no process-wide bootstrap, so several servers can live in one process):
///
/// - `yolo_http_requests_total{route, method, status}`
/// - `yolo_http_request_duration_seconds{route}` (histogram)
/// - `yolo_inference_duration_seconds` (histogram: decoding and detection in a slot)
/// - `yolo_rejected_requests_total{reason}` (`queue_full`, `draining`, `too_large`, `body_timeout`, `uploads_full`)
/// - `yolo_queue_depth`, `yolo_inferences_running` (gauges, read at each scrape)
/// - `yolo_slots`, `yolo_queue_capacity` (gauges)
package final class ServeMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let inference: CoreMetrics.Timer
    private let queueDepth: CoreMetrics.Gauge
    private let running: CoreMetrics.Gauge

    package init(slots: Int, queue: Int) {
        var factory = PrometheusMetricsFactory(registry: registry)
        // 5 ms to 30 s: one inference is tens of milliseconds; a queued request waits for a few.
        factory.defaultDurationHistogramBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 30]
            .map { Duration.nanoseconds(Int64($0 * 1e9)) }
        self.factory = factory
        inference = CoreMetrics.Timer(label: "yolo_inference_duration_seconds", dimensions: [], factory: factory)
        queueDepth = CoreMetrics.Gauge(label: "yolo_queue_depth", dimensions: [], factory: factory)
        running = CoreMetrics.Gauge(label: "yolo_inferences_running", dimensions: [], factory: factory)
        CoreMetrics.Gauge(label: "yolo_slots", dimensions: [], factory: factory).record(slots)
        CoreMetrics.Gauge(label: "yolo_queue_capacity", dimensions: [], factory: factory).record(queue)
    }

    package func request(route: String, method: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(label: "yolo_http_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))],
                factory: factory).increment()
        CoreMetrics.Timer(label: "yolo_http_request_duration_seconds", dimensions: [("route", route)], factory: factory).record(duration: duration)
    }

    package func inference(_ duration: Duration) {
        inference.record(duration: duration)
    }

    package func rejected(_ reason: String) {
        CoreMetrics.Counter(label: "yolo_rejected_requests_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// The Prometheus text exposition, with the gauges read now.
    package func exposition(waiting: Int, running inferences: Int) -> String {
        queueDepth.record(waiting)
        running.record(inferences)
        return registry.emitToString()
    }
}

extension CoreMetrics.Timer {
    fileprivate func record(duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
