import ArgumentParser
import Foundation
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOEvaluation

/// `yolo eval`: COCO mAP of a results file, or of the model run over an annotated image set.
struct Eval: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Score detections against COCO annotations: the 12 mAP/mAR figures, computed as pycocotools does.",
        discussion: """
            Score an existing COCO results file:
              yolo eval --annotations instances.json --results results.json
            Or run the model over every image of the annotation file first:
              yolo eval --images DIR --annotations instances.json --results OUT.json
            Results for images not in the annotations are skipped and counted. Ctrl-C during a run stops after \
            the current image, writes the partial results and scores the images covered (exit status 130). \
            Images that cannot be read are reported, left out of the figures, and make the exit status 1.
            """)

    @Option(help: "COCO instances annotation file (images, annotations, categories).")
    var annotations: String

    @Option(help: "COCO results file: read and scored, or, with --images, written.")
    var results: String?

    @Option(help: "Folder with the annotation file's images: run the model over them.")
    var images: String?

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Confidence threshold for the model's detections (mAP wants a low one).")
    var conf: Float = 0.005

    @Option(help: "IoU above which a less confident box of the same class is suppressed (default: the model's, 0.45 for darknet models, 0.7 for Ultralytics' ONNX exports).")
    var iou: Float?

    @Option(help: "How an image fits the network input: fit (letterbox, pjreddie's darknet), stretch (darknet's resize, AlexeyAB's), fill (OpenCV's stretch), crop (centre crop). Default: what the model expects.")
    var scale: Detect.ScaleOption?

    @Option(help: "EXIF orientation: ignore (darknet's valid and COCO's boxes use the stored pixel grid) or apply.")
    var exif: Exif = .ignore

    @Option(help: "Network input size WxH (multiples of 32; default: the cfg's).")
    var size: String?

    @Option(name: .customLong("category-map"),
            help: "Class → COCO category: coco80 (darknet's 80-class table), names (match class names), auto.")
    var categoryMap: CategoryMapChoice = .auto

    @Option(help: "Run over the first N images of the annotation file only.")
    var limit: Int?

    @Flag(name: .customLong("per-class"), help: "Also print AP@[.5:.95] and AP@.5 per category.")
    var perClass = false

    @Option(help: "Output: text (pycocotools' layout, 3 decimals) or json (full precision).")
    var format: Format = .text

    // MARK: Option types

    enum Exif: String, ExpressibleByArgument, CaseIterable {
        case ignore, apply
    }

    enum CategoryMapChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, coco80, names
    }

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    // MARK: Running

    func validate() throws {
        if images == nil {
            guard results != nil else { throw ValidationError("give --results FILE to score, or --images DIR to run the model") }
            if model.cfg != nil || model.weights != nil || model.names != nil || limit != nil || size != nil || exif != .ignore {
                throw ValidationError("--cfg, --weights, --names, --size, --exif and --limit need --images (a model run)")
            }
        }
        guard conf >= 0, conf < 1 else { throw ValidationError("--conf must be in [0, 1), got \(conf)") }
        if let iou, !(iou > 0 && iou <= 1) { throw ValidationError("--iou must be in (0, 1], got \(iou)") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        try checkPathsBeforeTheRun()
        let truth = try COCOAnnotations(contentsOf: annotations)
        let report: EvalReport
        if images != nil {
            let outcome = try detectAll(truth: truth)
            if let results { try COCOResults.write(outcome.results, to: results) }
            let evaluation = COCOEvaluator(annotations: truth).evaluate(outcome.results, imageIDs: outcome.covered)
            report = EvalReport(evaluation: evaluation, truth: truth, resultCount: outcome.results.count, run: outcome)
        } else {
            let loaded = try COCOResults.load(results!)
            report = EvalReport(evaluation: COCOEvaluator(annotations: truth).evaluate(loaded), truth: truth,
                                resultCount: loaded.count, run: nil)
        }
        for warning in report.warnings { printError("yolo: warning: \(warning)") }
        print(format == .json ? report.json(perClass: perClass) : report.text(perClass: perClass))
        if report.run?.interrupted == true { throw ExitCode(130) }
        if let run = report.run, run.failed > 0 { throw ExitCode.failure }  // like `yolo detect`: scripts notice
    }

    /// A model run takes minutes: a missing image folder (every image would be skipped, one warning each)
    /// or a results file that cannot be written (found only at the end) is one error before it starts.
    private func checkPathsBeforeTheRun() throws {
        guard let images else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: images, isDirectory: &isDirectory) else {
            throw YOLOError.fileNotFound(path: images)
        }
        guard isDirectory.boolValue else { throw YOLOError.invalidArgument("--images \(images): not a folder") }
        if let results {
            // Not NSString.deletingLastPathComponent: Foundation (Swift 6.3, Linux) traps on some short paths
            // ("." and "./", found by fuzz-mutate as cli-0217; also "x"), not on "out.json".
            let parent = results.lastIndex(of: "/").map { $0 == results.startIndex ? "/" : String(results[..<$0]) } ?? "."
            if FileManager.default.fileExists(atPath: results, isDirectory: &isDirectory), isDirectory.boolValue {
                throw YOLOError.invalidArgument("--results \(results): is a folder, not a file to write")
            }
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw YOLOError.invalidArgument("--results \(results): folder \(parent) does not exist")
            }
            guard FileManager.default.isWritableFile(atPath: parent) else {
                throw YOLOError.invalidArgument("--results \(results): folder \(parent) is not writable")
            }
        }
    }
}
