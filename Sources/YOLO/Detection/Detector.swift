import Foundation
import Synchronization

/// Detects objects in images with one loaded model.
///
/// Load once, then call `detect` from any number of threads: the model and the networks built from
/// it are immutable, and each call borrows its own scratch memory (a `Workspace` and an input buffer)
/// from a pool. Each detector has its own worker threads (`Threading`), shared fairly by its concurrent
/// calls; at most `Threading.maximumConcurrentPasses` passes run at once, so its scratch memory stays
/// bounded however many threads call it. What it touches beyond its own threads is listed in
/// docs/THREADS.md.
///
/// ```swift
/// let detector = try Detector(cfg: "yolov4-tiny.cfg", weights: "yolov4-tiny.weights", names: "coco.names")
/// for detection in try detector.detect(try Image(contentsOf: "dog.jpg")) {
///     print(detection.label, detection.confidence, detection.box)
/// }
/// ```
public final class Detector: Sendable {
    /// The model this detector runs.
    public let model: Model
    /// How convolutions are computed (`.auto`: Winograd where it pays, built once per input size).
    public let algorithm: ConvolutionAlgorithm
    /// How this detector uses threads, as given (`threads` 0: the default count).
    public let threading: Threading
    /// Threads each `detect` call's forward pass uses, the caller's included (`threading.threads` resolved).
    public let threads: Int
    /// The detector's worker threads, shared by its concurrent calls.
    private let workers: WorkerPool
    /// Admits at most `threading.maximumConcurrentPasses` calls to their forward pass at once.
    private let gate: PassGate

    /// How many networks (one per input size) stay built; the least recently used goes first.
    /// Each holds its own packed weights (about 35 MB for yolov3-tiny with `.auto`), and its idle scratch
    /// memory goes with it.
    public let maximumCachedNetworks: Int

    /// Networks by input size, built on first use, most recently used last.
    private let networks = Locked<NetworkCache>(NetworkCache())
    /// Idle scratch memory by input size.
    private let pool = Locked<[Size: [Scratch]]>([:])

    private struct NetworkCache {
        var entries: [Size: Network] = [:]
        var order: [Size] = []

        mutating func touch(_ key: Size) {
            order.removeAll { $0 == key }
            order.append(key)
        }
    }

    private struct Size: Hashable { var width: Int; var height: Int }

    /// A workspace and an input buffer for one network, used by one call at a time.
    private final class Scratch: @unchecked Sendable {
        let workspace: Workspace
        let input: UnsafeMutablePointer<Float>
        init(network: Network, pool: WorkerPool) {
            workspace = Workspace(for: network, pool: pool, keeping: Set(network.headIndices))
            input = .allocate(capacity: network.inputShape.count)
        }
        deinit { input.deallocate() }
    }

    /// A detector for `model`. Networks are built lazily, one per input size, on the first call that needs it.
    ///
    /// - Parameter model: the loaded model (it needs at least one `[yolo]` head and 1- or 3-channel input).
    /// - Parameter algorithm: `.auto` (the default) for the fastest forward pass; `.im2col` skips the Winograd
    ///   filter transform at network build, which makes the first call cheaper (see `yolo detect`).
    /// - Parameter threading: threads per call, polling, pinning, concurrent passes (default: one thread per
    ///   physical core this process may use, see `Threading`).
    /// - Parameter maximumCachedNetworks: input sizes whose networks stay built (default 4; at least 1). With
    ///   `.automatic` input sizes every new aspect ratio builds a network: this bounds the memory they hold.
    /// - Throws: `YOLOError.invalidArgument` for a `threading` setting out of range (a negative thread count).
    public init(model: Model, algorithm: ConvolutionAlgorithm = .auto, threading: Threading = Threading(),
                maximumCachedNetworks: Int = 4) throws {
        try threading.validate()
        guard !model.description.heads.isEmpty else {
            throw YOLOError.invalidConfig(path: model.description.path, line: 1, message: "the model has no [yolo] layer to detect with")
        }
        let channels = model.description.inputShape.channels
        guard channels == 1 || channels == 3 else {
            throw YOLOError.invalidConfig(path: model.description.path, line: 1,
                message: "the model takes \(channels)-channel input; images can feed 1-channel (gray) or 3-channel (RGB) models")
        }
        self.model = model
        self.algorithm = algorithm
        self.threading = threading
        self.threads = max(1, threading.resolvedThreads)
        self.workers = WorkerPool(threading)
        self.gate = PassGate(limit: threading.resolvedConcurrentPasses)
        self.maximumCachedNetworks = max(1, maximumCachedNetworks)
        BLAS.stopStartupThreads()
    }

    /// Drops every built network and all idle scratch memory; the next call builds what it needs again.
    /// Calls running now keep what they use until they return. Then asks the C allocator to give free
    /// memory back to the system (glibc's `malloc_trim`), so the process's resident size really drops.
    public func releaseCaches() {
        networks.withLock { $0 = NetworkCache() }
        pool.withLock { $0 = [:] }
        Self.returnFreeMemory()
    }

    /// glibc's `malloc_trim(0)`, found at run time (Glibc's Swift module does not declare it); nothing
    /// where the C library has no such call.
    private static func returnFreeMemory() {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// Input sizes with a built network, least recently used first.
    public var cachedInputSizes: [(width: Int, height: Int)] {
        networks.withLock { $0.order.map { ($0.width, $0.height) } }
    }

    /// Loads a darknet model (`.cfg`, `.weights`, names file).
    public convenience init(cfg: String, weights: String, names: String? = nil) throws {
        try self.init(model: Model(cfg: cfg, weights: weights, names: names))
    }

    /// The network input size `options` asks for, for an image region of `width × height` pixels.
    @_spi(Engine) public func networkSize(for options: DetectionOptions, regionWidth: Int, regionHeight: Int) throws -> (width: Int, height: Int) {
        let divisor = model.description.sizeDivisor
        switch options.inputSize {
        case .model:
            return (model.description.inputShape.width, model.description.inputShape.height)
        case .fixed(let width, let height):
            let side = ModelLimits.standard.maximumSide
            guard width > 0, height > 0, width <= side, height <= side, width % divisor == 0, height % divisor == 0 else {
                throw YOLOError.invalidArgument("network input size \(width)x\(height) must be multiples of \(divisor) in \(divisor)...\(side / divisor * divisor)")
            }
            return (width, height)
        case .automatic(let budget):
            let side = ModelLimits.standard.maximumSide
            guard budget >= divisor * divisor, budget <= side * side else {
                throw YOLOError.invalidArgument("pixel budget \(budget) is outside \(divisor * divisor)...\(side * side) (one \(divisor)x\(divisor) input to \(side)x\(side))")
            }
            return Geometry.automaticSize(aspect: Double(regionWidth) / Double(regionHeight), budget: budget, divisor: divisor)
        }
    }

    /// The network for a `width × height` input (built once, then cached), if it fits `memoryBudget`.
    @_spi(Engine) public func network(width: Int, height: Int, memoryBudget: Int = MemoryBudget.defaultBytes) throws -> Network {
        let key = Size(width: width, height: height)
        let cached: Network? = networks.withLock { cache in
            guard let network = cache.entries[key] else { return nil }
            cache.touch(key)
            return network
        }
        if let cached { return cached }
        let network = try workers.withCurrent {
            try Network(model: model, width: width, height: height, algorithm: algorithm, memoryBudget: memoryBudget,
                        threads: threads)
        }
        var evicted: [Size] = []
        let result = networks.withLock { cache in
            cache.touch(key)
            if let existing = cache.entries[key] { return existing }
            cache.entries[key] = network
            while cache.order.count > maximumCachedNetworks {
                let oldest = cache.order.removeFirst()
                cache.entries[oldest] = nil
                evicted.append(oldest)
            }
            return network
        }
        if !evicted.isEmpty { pool.withLock { for size in evicted { $0[size] = nil } } }
        return result
    }

    /// Detects objects in `image` (upright pixels). Boxes are normalized to the full image; for an
    /// image made from a camera frame with an orientation (``Image/init(pixelBuffer:orientation:)``)
    /// that is the oriented, upright image, as with Vision's orientation parameter.
    ///
    /// - Throws: `YOLOError.invalidArgument` for bad options (region of interest, input size, class names).
    public func detect(_ image: Image, options: DetectionOptions = DetectionOptions()) throws -> [Detection] {
        try detect(image, options: options, timing: nil)
    }

    /// `detect` that also reports how long each stage took (for `yolo bench`).
    @_spi(Engine) public func detect(_ image: Image, options: DetectionOptions, timing: ((DetectionStage, Duration) -> Void)?) throws -> [Detection] {
        let clock = ContinuousClock()
        var mark = clock.now
        func lap(_ stage: DetectionStage) {
            guard let timing else { return }
            let now = clock.now
            timing(stage, now - mark)
            mark = now
        }
        // The network's own build checks the memory budget, so it is not estimated twice here.
        let allowed = try checked(options, estimatingMemory: false)
        let crop = try Geometry.region(of: options.regionOfInterest, width: image.width, height: image.height)
        let size = try networkSize(for: options, regionWidth: crop.width, regionHeight: crop.height)
        let network = try network(width: size.width, height: size.height, memoryBudget: options.memoryBudget)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop,
                                 scaling: options.scaling ?? model.description.preferredScaling,
                                 networkWidth: size.width, networkHeight: size.height)
        gate.enter()
        defer { gate.leave() }
        let scratch = borrowScratch(for: network)
        defer { returnScratch(scratch, for: network) }
        Geometry.makeInput(image, plan: plan, channels: network.inputShape.channels, into: scratch.input)
        lap(.preprocess)
        network.forward(scratch.input, workspace: scratch.workspace)
        lap(.forward)
        var candidates = Candidates(classes: model.description.classCount)
        for (index, head) in zip(network.headIndices, network.heads) {
            AnchorDecoding.decode(scratch.workspace.output(of: index), head: head, networkWidth: size.width,
                                  networkHeight: size.height, threshold: options.confidenceThreshold, into: &candidates)
        }
        candidates.boxes = candidates.boxes.map(plan.inverse.apply)
        if let allowed {
            for i in 0..<candidates.count {
                for k in 0..<candidates.classes where !allowed.contains(k) { candidates.probabilities[i * candidates.classes + k] = 0 }
            }
        }
        lap(.decode)
        if options.classAgnostic {
            NonMaximumSuppression.classAgnostic(&candidates, threshold: options.iouThreshold,
                                                maximumCandidates: options.maximumCandidates, kind: model.description.suppression)
        } else {
            NonMaximumSuppression.perClass(&candidates, threshold: options.iouThreshold,
                                           maximumCandidates: options.maximumCandidates, kind: model.description.suppression)
        }
        var detections = makeDetections(candidates)
        if let limit = options.maximumDetections, detections.count > limit {
            detections.removeSubrange(limit...)
        }
        lap(.suppress)
        return detections
    }

    /// One `Detection` per candidate with a surviving class, most confident first.
    private func makeDetections(_ candidates: Candidates) -> [Detection] {
        var detections: [Detection] = []
        for i in 0..<candidates.count {
            var scores: [ClassScore] = []
            for k in 0..<candidates.classes {
                let p = candidates.probabilities[i * candidates.classes + k]
                if p > 0 { scores.append(ClassScore(classIndex: k, label: model.label(k), confidence: p)) }
            }
            guard !scores.isEmpty else { continue }
            scores.sort { $0.confidence > $1.confidence || ($0.confidence == $1.confidence && $0.classIndex < $1.classIndex) }
            detections.append(Detection(box: candidates.boxes[i], classIndex: scores[0].classIndex, label: scores[0].label,
                                        confidence: scores[0].confidence, labels: scores, objectness: candidates.objectness[i]))
        }
        // Stable: equal confidences keep decoding order.
        return detections.enumerated().sorted {
            $0.element.confidence > $1.element.confidence || ($0.element.confidence == $1.element.confidence && $0.offset < $1.offset)
        }.map(\.element)
    }

    /// Decoding options that let a large JPEG be decoded at a reduced DCT scale (1/2, 1/4, 1/8) while
    /// still giving the network at least as many pixels as it takes: the region of interest keeps at
    /// least the network input size in both axes. For `.automatic` input sizes the budget's square side is used.
    @_spi(Engine) public func decodingOptions(for options: DetectionOptions) -> ImageDecodingOptions {
        let (nw, nh): (Int, Int)
        switch options.inputSize {
        case .model: (nw, nh) = (model.description.inputShape.width, model.description.inputShape.height)
        case .fixed(let w, let h): (nw, nh) = (w, h)
        case .automatic(let budget):
            let side = Int(Double(max(budget, 1)).squareRoot().rounded(.up))
            (nw, nh) = (side, side)
        }
        let roi = options.regionOfInterest
        let minimum = (width: Int((Double(nw) / max(roi.width, 1e-6)).rounded(.up)),
                       height: Int((Double(nh) / max(roi.height, 1e-6)).rounded(.up)))
        return ImageDecodingOptions(minimumSize: minimum)
    }

    /// Decodes the image at `path` (JPEGs at a reduced DCT scale when that still covers the network input,
    /// see `decodingOptions(for:)`) and detects objects in it. Boxes are normalized to the full upright image.
    public func detect(contentsOf path: String, options: DetectionOptions = DetectionOptions()) throws -> (image: Image, detections: [Detection]) {
        let image = try Image(contentsOf: path, options: decodingOptions(for: options))
        return (image, try detect(image, options: options))
    }

    /// Checks everything about `options` that does not depend on an image: class names, the input
    /// size (and, when it does not depend on the image, that its network fits the memory budget), the
    /// region of interest's range and the thresholds. `detect` calls it on every call.
    public func validate(_ options: DetectionOptions) throws {
        _ = try checked(options, estimatingMemory: true)
    }

    /// `validate`'s checks; returns the allowed class indices (nil: all).
    private func checked(_ options: DetectionOptions, estimatingMemory: Bool) throws -> Set<Int>? {
        let allowed = try allowedClasses(options.classes)
        guard options.memoryBudget > 0 else {
            throw YOLOError.invalidArgument("memory budget must be positive, got \(options.memoryBudget)")
        }
        let size = try networkSize(for: options, regionWidth: 1, regionHeight: 1)
        // An automatic size depends on the image's aspect ratio: its budget is checked when its network is built.
        let automatic = if case .automatic = options.inputSize { true } else { false }
        if estimatingMemory, !automatic, networks.withLock({ $0.entries[Size(width: size.width, height: size.height)] }) == nil {
            _ = try Network.checkMemory(model.description, width: size.width, height: size.height, budget: options.memoryBudget,
                                        threads: threads)
        }
        _ = try Geometry.region(of: options.regionOfInterest, width: 1_000_000, height: 1_000_000)
        guard options.confidenceThreshold >= 0, options.confidenceThreshold < 1 else {
            throw YOLOError.invalidArgument("confidence threshold must be in [0, 1), got \(options.confidenceThreshold)")
        }
        guard options.iouThreshold > 0, options.iouThreshold <= 1 else {
            throw YOLOError.invalidArgument("IoU threshold must be in (0, 1], got \(options.iouThreshold)")
        }
        if let limit = options.maximumDetections, limit < 1 {
            throw YOLOError.invalidArgument("maximum detections must be at least 1, got \(limit)")
        }
        guard options.maximumCandidates >= 1 else {
            throw YOLOError.invalidArgument("maximum candidates must be at least 1, got \(options.maximumCandidates)")
        }
        return allowed
    }

    /// Resolves class selectors to indices; nil means all classes.
    @_spi(Engine) public func allowedClasses(_ selectors: Set<DetectionOptions.ClassSelector>?) throws -> Set<Int>? {
        guard let selectors else { return nil }
        guard !selectors.isEmpty else {
            throw YOLOError.invalidArgument("no classes selected: an empty set would report nothing (nil reports every class)")
        }
        var result = Set<Int>()
        for selector in selectors {
            switch selector {
            case .index(let k):
                guard k >= 0, k < model.description.classCount else {
                    throw YOLOError.invalidArgument("class index \(k) is outside the model's \(model.description.classCount) classes")
                }
                result.insert(k)
            case .label(let name):
                guard let k = model.labels.firstIndex(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) else {
                    throw YOLOError.invalidArgument("unknown class '\(name)'" + (model.labels.isEmpty ? " (the model has no names file)" : ""))
                }
                result.insert(k)
            }
        }
        return result
    }

    /// An idle scratch for `network`'s size, or a new one. Called inside the gate: with the ones in use, at most
    /// `gate.limit` scratches exist, since an idle one of another size is dropped before a new one is made.
    private func borrowScratch(for network: Network) -> Scratch {
        let key = Size(width: network.inputShape.width, height: network.inputShape.height)
        let reused: Scratch? = pool.withLock { pool in
            if let scratch = pool[key]?.popLast() { return scratch }
            let idle = pool.values.reduce(0) { $0 + $1.count }
            if idle > 0 && idle + gate.running > gate.limit, let other = pool.first(where: { !$0.value.isEmpty })?.key {
                pool[other]?.removeLast()
            }
            return nil
        }
        if let reused, reused.workspace.isBuilt(for: network) { return reused }
        return Scratch(network: network, pool: workers)
    }

    /// Keeps `scratch` for the next call at its size, unless that size's network has been evicted meanwhile
    /// (its memory is then simply freed).
    private func returnScratch(_ scratch: Scratch, for network: Network) {
        let key = Size(width: network.inputShape.width, height: network.inputShape.height)
        let current = networks.withLock { $0.entries[key]?.identity == network.identity }
        guard current else { return }
        pool.withLock { pool in
            if pool.values.reduce(0, { $0 + $1.count }) < gate.limit { pool[key, default: []].append(scratch) }
        }
    }

    /// Bytes of one call's scratch memory at `width × height` (the workspace and the input), the unit of the
    /// detector's memory cap: at most `threading.maximumConcurrentPasses` of them exist at once.
    public func scratchBytes(width: Int, height: Int) throws -> Int {
        let network = try network(width: width, height: height)
        return (Workspace(for: network, pool: workers, keeping: Set(network.headIndices)).arenaCount
                + network.inputShape.count) * MemoryLayout<Float>.stride
    }
}

/// A counting gate: at most `limit` threads between `enter()` and `leave()`; the others wait in `enter()`.
final class PassGate: @unchecked Sendable {
    let limit: Int
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let free = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private nonisolated(unsafe) var inside = 0

    init(limit: Int) {
        self.limit = max(1, limit)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(free, nil)
    }

    deinit {
        pthread_cond_destroy(free)
        pthread_mutex_destroy(lock)
        free.deallocate()
        lock.deallocate()
    }

    /// Threads inside now.
    var running: Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return inside
    }

    func enter() {
        pthread_mutex_lock(lock)
        while inside >= limit { pthread_cond_wait(free, lock) }
        inside += 1
        pthread_mutex_unlock(lock)
    }

    func leave() {
        pthread_mutex_lock(lock)
        inside -= 1
        pthread_cond_signal(free)
        pthread_mutex_unlock(lock)
    }
}

/// The stages of one `detect` call, for timing (`Detector.detect(_:options:timing:)`).
@_spi(Engine) public enum DetectionStage: String, Sendable, CaseIterable {
    /// Cropping, resizing and normalizing the image into the network input.
    case preprocess
    /// The network's forward pass.
    case forward
    /// Turning the YOLO heads' outputs into candidate boxes (anchors, thresholds).
    case decode
    /// Non-maximum suppression and mapping the boxes back to the image.
    case suppress
}
