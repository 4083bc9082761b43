import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import Logging
import ServiceLifecycle
import UnixSignals
@_spi(Engine) import YOLO
import YOLOReport

/// `yolo serve`: one `Detector` shared by every request, behind Hummingbird's HTTP server.
///
/// SIGTERM or SIGINT starts a graceful shutdown: first the service stops admitting detections (503,
/// `/readyz` 503), then the HTTP server closes its listening socket, lets the requests it holds finish
/// and closes idle connections; `run()` then returns.
package struct DetectionServer: Sendable {
    package let detector: Detector
    package let configuration: ServeConfiguration
    package let admission: Admission
    package let metrics: ServeMetrics
    package let service: DetectionService
    let logger: Logger

    package init(detector: Detector, configuration: ServeConfiguration, logger: Logger) {
        self.detector = detector
        self.configuration = configuration
        self.admission = Admission(slots: configuration.slots, queue: configuration.queue)
        self.metrics = ServeMetrics(slots: configuration.slots, queue: configuration.queue)
        self.logger = logger
        service = DetectionService(detector: detector, configuration: configuration, admission: admission, metrics: metrics, logger: logger)
    }

    /// Serves until SIGTERM/SIGINT (or `signals` when given) and the drain are done. `onListening` gets
    /// the bound port (useful with port 0).
    package func run(signals: [UnixSignal] = [.sigterm, .sigint], onListening: @escaping @Sendable (Int) -> Void) async throws {
        let linger = TimeAmount(configuration.closeLinger)
        // The idle timeout is the header timeout: Hummingbird closes a connection that has delivered no
        // request part (a complete head, a body chunk, an end) for that long, unless it is being answered.
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [ConnectionGuard(linger: linger)],
                                               idleTimeout: TimeAmount(configuration.headerTimeout))
        let app = Application(
            responder: service,
            server: .http1(configuration: http1),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "yolo-serve"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        let admission = self.admission
        let logger = self.logger
        // Services shut down in reverse order: the drain switch first, then the HTTP server.
        let drain = DrainSwitch {
            admission.drain()
            logger.info("shutting down: finishing \(admission.running + admission.waiting) admitted request(s), refusing new ones")
        }
        let trimmer = IdleTrimmer(detector: detector, admission: admission, after: configuration.idleRelease, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [trimmer, app, drain], gracefulShutdownSignals: signals, logger: logger))
        try await group.run()
    }
}

/// Frees the detector's networks for other sizes than the model's and its idle scratch memory once the
/// server has admitted no request for `after`; once per quiet spell.
private struct IdleTrimmer: Service {
    let detector: Detector
    let admission: Admission
    let after: Duration
    let logger: Logger

    func run() async throws {
        let input = detector.model.description.inputShape
        var trimmed = false
        let step = min(after / 4, .seconds(1))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: step)
            guard let quiet = admission.quietFor, quiet >= after else {
                trimmed = false  // a request came: the next quiet spell trims again
                continue
            }
            if !trimmed {
                let before = detector.heldMemory
                detector.releaseCaches(keepingInputSizes: [(input.width, input.height)])
                trimmed = true
                logger.debug("idle: freed \(MemoryBudget.format(before - detector.heldMemory)) of networks and scratch memory")
            }
        }
    }
}

/// Waits for the graceful shutdown, then calls `action` and ends.
private struct DrainSwitch: Service {
    let action: @Sendable () -> Void

    func run() async throws {
        try? await gracefulShutdown()
        action()
    }
}

/// What `clients` callers that each send the next request as soon as the last is answered get from the
/// server's own admission and detection path, without HTTP: the in-process baseline for load tests.
package struct InProcessLoad: Sendable {
    package var requests: Int
    package var seconds: Double
    /// Per-request latencies in seconds, sorted.
    package var latencies: [Double]

    package var throughput: Double { Double(requests) / seconds }

    package func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return .nan }
        return latencies[min(latencies.count - 1, Int((p / 100 * Double(latencies.count)).rounded(.up)) - 1)]
    }
}

extension DetectionServer {
    package func inProcessLoad(image: Data, clients: Int, duration: Duration) async throws -> InProcessLoad {
        let options = DetectionOptions()
        let service = self.service
        let admission = self.admission
        let start = ContinuousClock.now
        let deadline = start + duration
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var mine: [Double] = []
                    while ContinuousClock.now < deadline {
                        let begin = ContinuousClock.now
                        try admission.enter()
                        defer { admission.leave() }
                        _ = try await service.detection(image, name: "-", options: options).json(pretty: false)
                        let elapsed = ContinuousClock.now - begin
                        mine.append(elapsed.seconds)
                    }
                    return mine
                }
            }
            var all: [Double] = []
            for try await part in group { all += part }
            return all
        }
        let total = ContinuousClock.now - start
        return InProcessLoad(requests: latencies.count, seconds: total.seconds, latencies: latencies.sorted())
    }
}
