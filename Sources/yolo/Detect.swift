import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO
import YOLOVideo

struct Detect: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Detect objects in images, folders of images, videos, streams and cameras.",
        discussion: """
            Prints one line per detection (text), or one JSON object per image (json: an array; jsonl: one per \
            line). Boxes are in pixels of the upright original image (EXIF orientation applied), clipped to it. \
            Folders are walked for .jpg, .jpeg and .png files. A file that cannot be read is reported on stderr \
            and skipped; the exit status is then 1.

            One video file (.mp4, .mkv, .mov, .avi, .webm, ...), stream URL (rtsp://, http://, ...) or camera \
            (/dev/video0) instead: one line (text) or one JSON object (jsonl: frame, time, dropped, detections) per \
            frame detected; decoding runs on its own thread beside detection. Files detect every frame; cameras and \
            streams the latest (frames that arrive while the detector is busy are dropped and counted). --save \
            names the annotated video to write (H.264 .mp4 by default).
            """)

    @Argument(help: "Image files or folders.")
    var paths: [String] = []

    @Option(name: .customLong("files-from"), help: ArgumentHelp("Also read input paths from FILE, one per line (- for standard input), e.g. for a batch split over many processes.", valueName: "FILE"))
    var filesFrom: String?

    @Flag(name: [.customShort("0"), .customLong("null")], help: "With --files-from: paths are separated by NUL bytes instead of newlines.")
    var nullSeparated = false

    @Option(help: ArgumentHelp("Write JSONL results to FILE, keeping the images it already holds and skipping them: run the same command again after an interruption (Ctrl-C finishes the current image) to continue where it stopped.", valueName: "FILE"))
    var resume: String?

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Confidence threshold: objectness × class probability must exceed it (default 0.25). yolo track: also where tracks start; it detects down to 0.1 whatever this is, as ByteTrack's second association needs low-score boxes.")
    var conf: Float?

    @Option(help: "IoU above which a less confident box of the same class is suppressed (default: the model's, 0.45 for darknet models, 0.7 for Ultralytics' ONNX exports).")
    var iou: Float?

    @Option(help: "How the image fits the network input: fit (letterbox, pjreddie's darknet), stretch (darknet's resize, AlexeyAB's detector test), fill (stretch resampled like OpenCV's blobFromImage), crop (centre crop). Default: what the model expects (yolo info shows it).")
    var scale: ScaleOption?

    @Option(help: "Region of interest x,y,w,h, normalized to the upright image (e.g. 0.5,0,0.5,1 for the right half).")
    var roi: String?

    @Option(help: "Network input size WxH (multiples of 32, e.g. 416x256) or auto (keeps the aspect ratio, 416² pixel budget).")
    var size: String?

    @Option(help: "Report only these classes (comma-separated names or indices).")
    var classes: String?

    @Flag(help: "Suppress overlapping boxes across classes, not per class.")
    var agnostic = false

    @Option(name: .customLong("max-det"), help: "Keep at most N detections per image (default: the model's, all for darknet models, 300 for Ultralytics' ONNX exports).")
    var maxDetections: Int?

    @Option(help: "Threads per forward pass, this one included (default 0: one per physical core this process may use, within its CPU affinity and cgroup quota).")
    var threads: Int?

    @OptionGroup var threading: ThreadingOptions

    @Option(help: "Output format: text, json or jsonl.")
    var format: OutputFormat = .text

    @Option(help: "Write annotated copies (PNG or JPEG, like the input) into this folder; for a video, stream or camera, the annotated video file (e.g. out.mp4; a folder gets NAME.mp4).")
    var save: String?

    @Option(help: "Convolution algorithm: auto (Winograd where it pays; the default, the Swift API's and yolo serve's, so all three give the same bits), im2col, winograd2, winograd4, winograd6 (each gives other last bits; winograd6 only on maps at least 67 wide with the avx2 or avx512 family, winograd4 elsewhere).")
    var algorithm: String?

    @Option(name: .customLong("frame-policy"), help: "Video: which frames to detect: every (default for files), latest (default for cameras, streams and --realtime: drop frames that arrive while busy) or a number N (every Nth frame).")
    var framePolicy: String?

    @Flag(help: "Video: play a file at the pace of its timestamps, as a live source (frames the detector cannot keep up with are dropped).")
    var realtime = false

    @Flag(help: "Decode JPEGs at full size. By default a large JPEG is decoded at 1/2, 1/4 or 1/8 scale when that still covers the network input, which is much faster (--save always decodes at full size).")
    var fullDecode = false

    enum ScaleOption: String, ExpressibleByArgument, CaseIterable {
        case fit, stretch, fill, crop

        /// Sets the scaling and the resampling this name stands for (`OptionText.scalings`).
        func apply(to options: inout DetectionOptions) {
            try! OptionText.setScaling(rawValue, name: "--scale", in: &options)
        }
    }

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json, jsonl
    }

    func validate() throws {
        guard !paths.isEmpty || filesFrom != nil else { throw ValidationError("give at least one image file or folder (or --files-from)") }
        if nullSeparated && filesFrom == nil { throw ValidationError("-0/--null applies to --files-from") }
        if resume != nil && format == .json { throw ValidationError("--resume writes JSONL (one object per image); leave out --format json") }
        do {
            if let conf { _ = try OptionText.confidence(conf, name: "--conf") }
            if let iou { _ = try OptionText.iou(iou, name: "--iou") }
        } catch let error as YOLOError {
            throw ValidationError("\(error)")
        }
        if let maxDetections, maxDetections < 1 { throw ValidationError("--max-det must be at least 1") }
        if let threads, threads < 0 { throw ValidationError("--threads must be 0 (the default) or more, got \(threads)") }
    }

    /// From this many images on, a run pays for start-up work that makes each image faster: Winograd's
    /// filter transform and the expansion of LUT codes to float32. Fewer start with the leaner setup.
    /// The convolution algorithm (see `--algorithm`): `.auto` unless chosen. It and the expanded weights are the
    /// `Detector`'s defaults and `yolo serve`'s, so the three give the same detections, bit for bit; a faster
    /// start-up for a few images (LUT codes on the im2col path) would give other last bits.
    func convolutionAlgorithm() throws -> ConvolutionAlgorithm {
        guard let algorithm else { return .auto }
        guard let chosen = ConvolutionAlgorithm(rawValue: algorithm) else {
            throw YOLOError.invalidArgument("--algorithm must be one of \(ConvolutionAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")), got '\(algorithm)'")
        }
        return chosen
    }

    /// The request options the flags describe.
    func detectionOptions() throws -> DetectionOptions {
        var options = DetectionOptions()
        options.confidenceThreshold = conf ?? options.confidenceThreshold
        options.iouThreshold = iou
        scale?.apply(to: &options)
        options.classAgnostic = agnostic
        options.maximumDetections = maxDetections
        if let roi { options.regionOfInterest = try OptionText.region(roi, name: "--roi") }
        if let size { options.inputSize = try OptionText.inputSize(size, name: "--size") }
        if let classes { options.classes = try OptionText.classes(classes, name: "--classes") }
        options.memoryBudget = model.memoryBudgetBytes
        return options
    }

    /// Whether the one input is a video, stream or camera rather than images.
    var isVideo: Bool { paths.count == 1 && VideoSource.isVideo(paths[0]) }

    /// `--frame-policy` as a `FramePolicy`; nil for the source's default.
    func parsedFramePolicy() throws -> FramePolicy? {
        guard let framePolicy else { return nil }
        switch framePolicy.lowercased() {
        case "every": return .everyFrame
        case "latest": return .latest
        default:
            guard let n = Int(framePolicy), n >= 1 else {
                throw YOLOError.invalidArgument("--frame-policy must be every, latest or a positive number, got '\(framePolicy)'")
            }
            return n == 1 ? .everyFrame : .stride(n)
        }
    }

    func runVideo(options: DetectionOptions, tracking: TrackingRun? = nil) throws {
        if format == .json { throw YOLOError.invalidArgument("--format json is for images; use --format jsonl for a video (one object per frame)") }
        let policy = try parsedFramePolicy()
        let detector = try Detector(model: model.load(residency: .expanded), algorithm: convolutionAlgorithm(),
                                    threading: threading.threading(threads: threads))
        try detector.validate(options)
        try VideoDetectionRun(location: paths[0], detector: detector, options: options, format: format, save: save,
                              policy: policy, realtime: realtime, tracking: tracking).run()
    }

    func run() throws {
        let options = try detectionOptions()
        if isVideo { return try runVideo(options: options) }
        if framePolicy != nil || realtime {
            throw YOLOError.invalidArgument("--frame-policy and --realtime apply to one video, stream or camera input")
        }
        var failures = 0
        let listed = try filesFrom.map { try BatchInput.paths(from: $0, nullSeparated: nullSeparated) } ?? []
        var files = ImageFiles.collect(paths + listed) { error in
            failures += 1
            printError("yolo: error: \(error)")
        }
        let log = try resume.map { try ResumeLog(path: $0) }
        if let log {
            let before = files.count
            files.removeAll { log.done.contains($0) }
            if before > files.count { printError("yolo: \(log.path): \(before - files.count) image(s) already done, \(files.count) to go") }
        }
        let interrupt = log.map { _ in InterruptFlag(message: "yolo: stopping after this image (Ctrl-C again to quit at once)") }
        defer { interrupt?.stop() }
        // The API's defaults (expanded weights, automatic algorithm), whatever the image count: the same bits as
        // `Detector` and `yolo serve` (LUT codes on the im2col path start a one-image run faster and smaller, but
        // give other last bits).
        let detector = try Detector(model: model.load(residency: .expanded),
                                    algorithm: convolutionAlgorithm(),
                                    threading: threading.threading(threads: threads))
        try detector.validate(options)  // bad options fail before any image is read
        // Annotated copies keep the original's size, so --save decodes at full size.
        let decoding = fullDecode || save != nil ? ImageDecodingOptions() : detector.decodingOptions(for: options)
        if let save { try ImageFiles.makeFolder(save) }
        var reports: [String] = []
        var saved = SavedNames()
        for (done, file) in files.enumerated() {
            if interrupt?.isRaised == true {
                printError("yolo: interrupted after \(done) of \(files.count) image(s); run the same command to continue")
                throw ExitCode(130)
            }
            do {
                let start = ContinuousClock.now
                let image = try Image(contentsOf: file, options: decoding)
                for warning in image.decodeWarnings { printError("yolo: warning: \(file): \(warning)") }
                let detections = try detector.detect(image, options: options)
                let elapsed = ContinuousClock.now - start
                let report = DetectionReport(path: file, image: image, detections: detections, elapsed: elapsed)
                if let log {
                    try log.append(report.json(pretty: false))
                } else {
                    switch format {
                    case .text: print(report.text())
                    case .jsonl: print(report.json(pretty: false))
                    case .json: reports.append(report.json(pretty: true))
                    }
                }
                if let save {
                    try image.annotated(with: detections, classCount: detector.model.description.classCount)
                        .write(to: saved.path(for: file, in: save))
                }
            } catch let error as YOLOError {
                failures += 1
                printError("yolo: error: \(error)")
            }
        }
        if format == .json {
            print("[\n" + reports.map { $0.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") }.joined(separator: ",\n") + "\n]")
        }
        if failures > 0 {
            printError("yolo: \(failures) input(s) failed")
            throw ExitCode.failure
        }
    }
}

/// Output file names for `--save`, unique even when two inputs share a name.
struct SavedNames {
    private var used: Set<String> = []

    mutating func path(for input: String, in folder: String) -> String {
        let url = URL(fileURLWithPath: input)
        let stem = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension.isEmpty ? "png" : url.pathExtension
        var name = "\(stem).\(ext)"
        var n = 2
        while used.contains(name) {
            name = "\(stem)-\(n).\(ext)"
            n += 1
        }
        used.insert(name)
        return (folder as NSString).appendingPathComponent(name)
    }
}
