import ArgumentParser
import Foundation
import Logging
import YOLOReport
@_spi(Engine) import YOLO
import YOLOServe

/// `yolo bench-serve IMAGE`: the server's admission and detection path without HTTP, for comparing
/// `yolo serve` under an HTTP load generator with what the same detector and slots do in-process.
struct BenchServe: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        commandName: "bench-serve",
        abstract: "Time yolo serve's detection path in-process: --clients callers, --slots slots, no HTTP.",
        discussion: """
            Each client sends the image again as soon as its last request is answered, for --seconds; prints \
            requests per second and latency percentiles. Run it with the slots, threads and model of the \
            server under test (scripts/serve-load.sh does).
            """)

    @Argument(help: "A JPEG or PNG image.")
    var image: String

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Inferences that run at once (default: one per core).")
    var slots: Int?

    @Option(help: "Worker threads per inference.")
    var threads = 1

    @OptionGroup var threading: ThreadingOptions

    @Option(help: "Concurrent callers.")
    var clients = 4

    @Option(help: "How long to run, in seconds.")
    var seconds: Double = 30

    func validate() throws {
        if let slots, slots < 1 { throw ValidationError("--slots must be at least 1") }
        guard threads >= 1, clients >= 1, seconds > 0 else { throw ValidationError("--threads and --clients must be at least 1, --seconds positive") }
    }

    func run() throws {
        let bytes = try FileIO.read(image)
        var configuration = ServeConfiguration()
        configuration.slots = slots ?? Threading.allowedCPUCount
        var settings = try threading.threading(threads: threads)
        settings.maximumConcurrentPasses = configuration.slots
        let detector = try Detector(model: model.load(residency: .expanded), algorithm: .auto, threading: settings)
        _ = try detector.detect(Image(data: bytes, name: image))
        configuration.queue = clients
        let server = DetectionServer(detector: detector, configuration: configuration, logger: Logger(label: "yolo.bench-serve"))
        let machine = BenchReport.Machine.current
        print("yolo bench-serve: \(image), \(configuration.slots) slot(s) × \(threads) thread(s), \(clients) client(s), kernels \(machine.kernel), \(machine.cpu)")
        let clients = self.clients
        let duration = Duration.milliseconds(Int64(seconds * 1000))
        let load = try blockingAwait { try await server.inProcessLoad(image: bytes, clients: clients, duration: duration) }
        print(String(format: "requests %d in %.1f s: %.2f req/s; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                     load.requests, load.seconds, load.throughput, load.percentile(50) * 1000, load.percentile(99) * 1000,
                     (load.latencies.last ?? .nan) * 1000))
    }
}
