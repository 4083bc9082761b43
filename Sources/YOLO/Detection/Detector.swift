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
    /// Built networks and the calls' scratch memory, with their bounds.
    private let memory: DetectorMemory

    /// How many networks (one per input size) stay built; the least recently used goes first.
    /// Each holds its own packed weights (`Network.ownedBytes`, about 35 MB for yolov3-tiny with `.auto`),
    /// and its idle scratch memory goes with it.
    public var maximumCachedNetworks: Int { memory.maximumNetworks }

    /// The most bytes the detector holds at once beyond its model: its built networks' own memory and every
    /// call's scratch memory (nil: no limit but `maximumCachedNetworks` and
    /// `Threading.maximumConcurrentPasses`). See `init(model:algorithm:threading:maximumCachedNetworks:memoryLimit:)`.
    public var memoryLimit: Int? { memory.byteLimit }

    /// Bytes the detector holds now beyond its model: built networks and scratch memory, idle or in use.
    public var heldMemory: Int { memory.heldBytes }

    /// A detector for `model`. Networks are built lazily, one per input size, on the first call that needs it.
    ///
    /// - Parameter model: the loaded model (it needs at least one `[yolo]` head and 1- or 3-channel input).
    /// - Parameter algorithm: `.auto` (the default) for the fastest forward pass; `.im2col` skips the Winograd
    ///   filter transform at network build, which makes the first call cheaper (see `yolo detect`).
    /// - Parameter threading: threads per call, polling, pinning, concurrent passes (default: one thread per
    ///   physical core this process may use, see `Threading`).
    /// - Parameter maximumCachedNetworks: input sizes whose networks stay built (default 4; at least 1). With
    ///   `.automatic` input sizes every new aspect ratio builds a network: this bounds the memory they hold.
    /// - Parameter memoryLimit: the most bytes the detector holds at once beyond its model: its networks' own
    ///   memory (packed weights) and the scratch memory of its calls, idle or running (`heldMemory`). A call
    ///   that needs more first frees idle scratch and networks no call is using, least recently used first,
    ///   then waits for running calls to finish; a call whose network and scratch alone exceed the limit
    ///   throws. nil (the default): no limit in bytes.
    /// - Throws: `YOLOError.invalidArgument` for a `threading` setting out of range (a negative thread count)
    ///   or a memory limit that is not positive.
    public init(model: Model, algorithm: ConvolutionAlgorithm = .auto, threading: Threading = Threading(),
                maximumCachedNetworks: Int = 4, memoryLimit: Int? = nil) throws {
        try threading.validate()
        if let memoryLimit, memoryLimit <= 0 {
            throw YOLOError.invalidArgument("memory limit must be positive, got \(memoryLimit)")
        }
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
        self.memory = DetectorMemory(passLimit: threading.resolvedConcurrentPasses, byteLimit: memoryLimit,
                                     maximumNetworks: maximumCachedNetworks)
    }

    /// Drops every built network and all idle scratch memory; the next call builds what it needs again.
    /// Calls running now keep what they use until they return. Then asks the C allocator to give free
    /// memory back to the system (glibc's `malloc_trim`), so the process's resident size really drops.
    public func releaseCaches() {
        releaseCaches(keepingInputSizes: [])
    }

    /// `releaseCaches()`, except that the networks for the `keepingInputSizes` stay built (their idle
    /// scratch memory goes too): e.g. a service that goes idle keeps the size most requests use.
    public func releaseCaches(keepingInputSizes sizes: [(width: Int, height: Int)]) {
        memory.release(keeping: Set(sizes.map { DetectorMemory.Size(width: $0.width, height: $0.height) }))
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
        memory.cachedSizes.map { ($0.width, $0.height) }
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
        if let cached = memory.network(DetectorMemory.Size(width: width, height: height)) { return cached }
        let network = try workers.withCurrent {
            try Network(model: model, width: width, height: height, algorithm: algorithm, memoryBudget: memoryBudget,
                        threads: threads)
        }
        return memory.insert(network)
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
        let built = try network(width: size.width, height: size.height, memoryBudget: options.memoryBudget)
        let (scaling, resampling) = model.description.fitting(options)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: scaling,
                                 resampling: resampling, networkWidth: size.width, networkHeight: size.height)
        let (network, scratch) = try memory.borrow(for: built, pool: workers)
        defer { memory.giveBack(scratch, for: network) }
        Geometry.makeInput(image, plan: plan, channels: network.inputShape.channels, fill: model.description.letterboxFill,
                           into: scratch.input)
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
        let suppression = model.description.suppressionSettings(options)
        if options.classAgnostic {
            NonMaximumSuppression.classAgnostic(&candidates, threshold: suppression.iou,
                                                maximumCandidates: options.maximumCandidates, kind: model.description.suppression)
        } else {
            NonMaximumSuppression.perClass(&candidates, threshold: suppression.iou,
                                           maximumCandidates: options.maximumCandidates, kind: model.description.suppression)
        }
        var detections = makeDetections(candidates, clippingBoxes: options.clipsBoxes)
        if let limit = suppression.limit, detections.count > limit {
            detections.removeSubrange(limit...)
        }
        lap(.suppress)
        return detections
    }

    /// One `Detection` per candidate with a surviving class, most confident first; boxes clipped to the image
    /// when `clippingBoxes`.
    private func makeDetections(_ candidates: Candidates, clippingBoxes: Bool) -> [Detection] {
        var detections: [Detection] = []
        for i in 0..<candidates.count {
            var scores: [ClassScore] = []
            for k in 0..<candidates.classes {
                let p = candidates.probabilities[i * candidates.classes + k]
                if p > 0 { scores.append(ClassScore(classIndex: k, label: model.label(k), confidence: p)) }
            }
            guard !scores.isEmpty else { continue }
            scores.sort { $0.confidence > $1.confidence || ($0.confidence == $1.confidence && $0.classIndex < $1.classIndex) }
            let box = clippingBoxes ? candidates.boxes[i].clippedToUnit : candidates.boxes[i]
            detections.append(Detection(box: box, classIndex: scores[0].classIndex, label: scores[0].label,
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
        if estimatingMemory, !automatic, memory.network(DetectorMemory.Size(width: size.width, height: size.height)) == nil {
            _ = try Network.checkMemory(model.description, width: size.width, height: size.height, budget: options.memoryBudget,
                                        threads: threads)
        }
        _ = try Geometry.region(of: options.regionOfInterest, width: 1_000_000, height: 1_000_000)
        guard options.confidenceThreshold >= 0, options.confidenceThreshold < 1 else {
            throw YOLOError.invalidArgument("confidence threshold must be in [0, 1), got \(options.confidenceThreshold)")
        }
        if let iou = options.iouThreshold, !(iou > 0 && iou <= 1) {
            throw YOLOError.invalidArgument("IoU threshold must be in (0, 1], got \(iou)")
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

    /// Bytes of one call's scratch memory at `width × height` (the workspace and the input), the unit of the
    /// detector's memory cap: at most `threading.maximumConcurrentPasses` of them exist at once. Builds the
    /// network for that size if needed; allocates no scratch.
    public func scratchBytes(width: Int, height: Int) throws -> Int {
        DetectorMemory.scratchBytes(try network(width: width, height: height))
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
