import ArgumentParser
import Foundation
import Logging
@_spi(Engine) import YOLO
import YOLOServe

struct Serve: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Serve detection over HTTP (POST /v1/detect; GET /v1/models, /healthz, /readyz, /metrics).",
        discussion: """
            POST an image's JPEG or PNG bytes (Content-Type image/jpeg or image/png), or a multipart/form-data \
            form with an 'image' part, to /v1/detect; options as query parameters or form fields: conf, iou, \
            classes, scale, roi, max_det, agnostic, size (as yolo detect's flags; a size whose network and \
            scratch need more than the detector's part of the memory budget is refused). The answer is the JSON object yolo \
            detect --format json prints for one image; errors are {"error": "..."} (400 bad image or option, \
            408 body too slow, 413 body or form too large, 415 media type, 417 expectation, 429 busy with \
            Retry-After, 501 transfer coding, 503 shutting down). The API is described in docs/openapi.yaml.

            One model serves every request; --slots inferences run at once (one thread each by default: \
            throughput over latency), --queue more wait, any beyond are refused at once with 429. A request \
            takes its place only once its whole body has arrived (within --body-timeout). SIGTERM or \
            Ctrl-C stops accepting, finishes the admitted requests and exits 0. One log line per request on \
            stderr; Prometheus metrics on /metrics.

            Memory: --memory-budget here bounds the whole service beyond the loaded model: request bodies \
            ((slots + queue) x --max-body), one image per slot (slots x --max-image-memory) and, in what is \
            left, the built networks and scratch memory of every input size. Default: those two parts plus \
            512 MiB. After --idle-release seconds with no request, only the model's own input size stays built.

            Example: curl --data-binary @photo.jpg -H 'Content-Type: image/jpeg' 'http://127.0.0.1:8080/v1/detect?conf=0.3'
            """)

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Address to listen on (0.0.0.0 for every interface).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port, reported on stderr).")
    var port = 8080

    @Option(help: "Inferences that run at once (default: one per core).")
    var slots: Int?

    @Option(help: "Requests that may wait for a slot; beyond slots + queue, requests get 429 at once (default: 4 per slot).")
    var queue: Int?

    @Option(help: "Worker threads per inference (default 1: the slots use the cores).")
    var threads = 1

    @OptionGroup var threading: ThreadingOptions

    @Option(name: .customLong("max-body"), help: ArgumentHelp("The largest request body, e.g. 20MB, 512K (a number alone is MiB); larger gets 413.", valueName: "size"))
    var maxBody = "20MB"

    @Option(name: .customLong("max-pixels"), help: "The largest image a request may send, in megapixels (its header is checked before any pixel memory is taken).")
    var maxMegapixels: Double = 40

    @Option(name: .customLong("max-image-memory"), help: ArgumentHelp("The most memory decoding one image may take, e.g. 256MB (pixel and coefficient buffers, computed from its header before any is allocated).", valueName: "size"))
    var maxImageMemory = "256MB"

    @Option(name: .customLong("header-timeout"), help: "Seconds a connection may take to send a request's headers (from when it opens or its last answer), and the longest pause inside a body; then it is closed.")
    var headerTimeout: Double = 10

    @Option(name: .customLong("body-timeout"), help: "Seconds a request's whole body may take to arrive; then 408 and the connection is closed.")
    var bodyTimeout: Double = 30

    @Option(name: .customLong("idle-release"), help: "Seconds with no request after which the networks of other input sizes than the model's and all idle scratch memory are freed.")
    var idleRelease: Double = 10

    @Option(name: .customLong("log-level"), help: "Log level: trace, debug, info (one line per request), notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        if let slots, slots < 1 { throw ValidationError("--slots must be at least 1") }
        if let queue, queue < 0 { throw ValidationError("--queue must be 0 or more") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0...65535, got \(port)") }
        guard MemoryBudget.parse(maxBody) != nil else { throw ValidationError("--max-body must be a size such as 20MB or 512K; got '\(maxBody)'") }
        guard maxMegapixels > 0, maxMegapixels <= 1000 else { throw ValidationError("--max-pixels must be in (0, 1000] megapixels") }
        guard MemoryBudget.parse(maxImageMemory) != nil else {
            throw ValidationError("--max-image-memory must be a size such as 256MB or 1G; got '\(maxImageMemory)'")
        }
        for (flag, value) in [("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout), ("--idle-release", idleRelease)] where !(value > 0 && value <= 3600) {
            throw ValidationError("\(flag) must be in (0, 3600] seconds, got \(value)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")); got '\(logLevel)'")
        }
    }

    /// The model's name as /v1/models reports it: its file name without the extension.
    var modelName: String {
        let path = model.modelFile ?? model.cfg ?? Defaults.modelFile ?? Defaults.cfg
        return ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    func run() throws {
        var configuration = ServeConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.slots = slots ?? Threading.allowedCPUCount
        configuration.queue = queue ?? 4 * configuration.slots
        configuration.maxBodyBytes = MemoryBudget.parse(maxBody)!
        configuration.maxPixels = Int(maxMegapixels * 1_000_000)
        configuration.maxImageBytes = MemoryBudget.parse(maxImageMemory)!
        configuration.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        configuration.bodyTimeout = .milliseconds(Int64(bodyTimeout * 1000))
        configuration.modelName = modelName
        configuration.memoryBytes = model.memoryBudget == nil ? nil : model.memoryBudgetBytes
        configuration.idleRelease = .milliseconds(Int64(idleRelease * 1000))
        try configuration.checkMemory()

        let level = Logger.Level(rawValue: logLevel)!
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "yolo.serve")

        Self.returnLargeBlocksAtOnce()
        let start = ContinuousClock.now
        var settings = try threading.threading(threads: threads)
        settings.maximumConcurrentPasses = configuration.slots
        let detector = try Detector(model: model.load(residency: .expanded), algorithm: .auto, threading: settings,
                                    memoryLimit: configuration.detectorMemoryBytes)
        // One detection before listening builds the network and its packed weights, so /readyz is true
        // only when the first request will be as fast as the rest.
        let input = detector.model.description.inputShape
        let network = try detector.network(width: input.width, height: input.height)
        let need = network.ownedBytes + (try detector.scratchBytes(width: input.width, height: input.height))
        guard need <= configuration.detectorMemoryBytes else {
            throw YOLOError.invalidArgument("--memory-budget \(MemoryBudget.format(configuration.memoryBudget)) leaves the networks "
                + "\(MemoryBudget.format(configuration.detectorMemoryBytes)) after request bodies and images; the model's \(input.width)x\(input.height) "
                + "input alone needs \(MemoryBudget.format(need))")
        }
        _ = try detector.detect(Image(width: 64, height: 48, pixels: [UInt8](repeating: 128, count: 64 * 48 * 3)))
        let loaded = ContinuousClock.now - start

        let server = DetectionServer(detector: detector, configuration: configuration, logger: logger)
        let summary = "\(configuration.modelName), \(configuration.slots) slot(s) × \(threads) thread(s), queue \(configuration.queue), "
            + "memory \(MemoryBudget.format(configuration.memoryBudget)) (networks \(MemoryBudget.format(configuration.detectorMemoryBytes))), "
            + "kernel \(KernelFamily.active.name.rawValue), loaded in \(Int(loaded.milliseconds)) ms"
        let host = configuration.host
        // From here SIGTERM/SIGINT drain the server, which then exits 0 (it writes no files); before, while
        // the model loads, they end the process at once as for every command.
        SignalCleanup.stop()
        do {
            try blockingAwait {
                try await server.run { port in
                    printError("yolo: serving \(summary) on http://\(host):\(port)")
                }
            }
        } catch let error as YOLOError {
            throw error
        } catch {
            throw YOLOError.invalidArgument("cannot serve on \(configuration.host):\(configuration.port): \(error)")
        }
        printError("yolo: stopped")
    }

    /// glibc's `mallopt(M_MMAP_THRESHOLD, 1 MiB)`, found at run time (Glibc's Swift module does not declare it):
    /// every block of 1 MiB or more is mapped on its own and returned to the system when freed. By default the
    /// threshold rises to the largest block freed (up to 32 MiB), and the per-pass buffers of large input
    /// sizes then stay in the dispatch threads' heaps: 250 MiB beyond the detector's memory in the sizes
    /// attack of scripts/serve-attack.py. Nothing where the C library has no such call.
    private static func returnLargeBlocksAtOnce() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias SetOption = @convention(c) (Int32, Int32) -> Int32
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in glibc's malloc.h
        _ = unsafeBitCast(symbol, to: SetOption.self)(mmapThreshold, 1 << 20)
    }
}
