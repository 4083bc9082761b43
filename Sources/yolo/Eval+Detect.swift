import Foundation
import YOLOReport
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOEvaluation

extension Eval {
    /// What a model run over the annotated images produced.
    struct RunOutcome {
        /// One result per (box, class) that passed the threshold, categories mapped, boxes clamped to the image.
        var results: [COCOResult] = []
        /// Images that were read and run (the set the figures cover).
        var covered: Set<Int> = []
        /// Images asked for (the annotation file's, or its first --limit).
        var planned = 0
        /// Images that could not be read.
        var failed = 0
        /// Whether Ctrl-C stopped the run early.
        var interrupted = false
        /// How the model's classes were mapped.
        var categoryMap: COCOCategoryMap?
        /// Detections of classes without a category (not scored).
        var unmapped = 0
        /// Wall time of the whole run, seconds.
        var seconds = 0.0
    }

    // MARK: Model run

    /// Runs the detector over every image of `truth` (file order), like darknet's `valid`: one result per
    /// (box, class) above `--conf`, the box clamped to the image, `[x, y, w, h]` in pixels rounded to 1e-4 px
    /// (as the reference tool writes them).
    func detectAll(truth: COCOAnnotations) throws -> RunOutcome {
        let loaded = try model.load()
        let detector = try Detector(model: loaded)
        let options = try detectionOptions()
        // A bad --size or budget is one error before the run, not a failure on every image.
        try detector.validate(options)
        var outcome = RunOutcome()
        let map = try categoryMapping(classNames: (0..<loaded.description.classCount).map(loaded.label), truth: truth)
        outcome.categoryMap = map
        let list = Array(truth.images.prefix(limit ?? truth.images.count))
        outcome.planned = list.count
        let progress = ProgressReporter(total: list.count, label: "images")
        let interrupt = InterruptFlag(message: "yolo: stopping after the current image (Ctrl-C again to quit now)")
        defer { interrupt.stop() }
        // A warning ends the progress bar's line first, so the two do not share a line.
        func note(_ message: String) {
            progress.finish()
            printError("yolo: warning: " + message)
        }
        let start = ContinuousClock.now
        for (index, entry) in list.enumerated() {
            if interrupt.isRaised {
                outcome.interrupted = true
                break
            }
            let path = (images! as NSString).appendingPathComponent(entry.fileName)
            do {
                let image = try Image(contentsOf: path, options: ImageDecodingOptions(applyOrientation: exif == .apply))
                for warning in image.decodeWarnings { note("image \(entry.id): \(path): \(warning)") }
                if let width = entry.width, let height = entry.height, (width, height) != (image.width, image.height) {
                    note("image \(entry.id): \(path) is \(image.width)x\(image.height), the annotations say \(width)x\(height)")
                }
                for detection in try detector.detect(image, options: options) {
                    let pixels = detection.pixelRect(width: image.width, height: image.height)
                    for label in detection.labels {
                        guard let category = map.categoryID(forClass: label.classIndex) else {
                            outcome.unmapped += 1
                            continue
                        }
                        var result = COCOResult(
                            imageID: entry.id, categoryID: category, score: Self.decimalScore(label.confidence),
                            left: pixels.minX, top: pixels.minY, right: pixels.maxX, bottom: pixels.maxY,
                            imageWidth: image.width, imageHeight: image.height)
                        result.bbox = result.bbox.rounded(decimals: 4)  // what is scored is what the file holds
                        outcome.results.append(result)
                    }
                }
                outcome.covered.insert(entry.id)
            } catch let error as YOLOError {
                note("image \(entry.id) skipped: \(error)")
                outcome.failed += 1
            }
            progress.update(done: index + 1)
        }
        progress.finish()
        let elapsed = ContinuousClock.now - start
        outcome.seconds = elapsed.seconds
        return outcome
    }

    /// The request options the flags describe.
    func detectionOptions() throws -> DetectionOptions {
        var options = DetectionOptions()
        options.confidenceThreshold = conf
        options.iouThreshold = iou
        scale?.apply(to: &options)
        if let (width, height) = try parseSize(size) { options.inputSize = .fixed(width: width, height: height) }
        options.memoryBudget = model.memoryBudgetBytes
        return options
    }

    /// The class → category map `--category-map` asks for.
    func categoryMapping(classNames: [String], truth: COCOAnnotations) throws -> COCOCategoryMap {
        switch categoryMap {
        case .auto: return COCOCategoryMap.automatic(classNames: classNames, categories: truth.categories)
        case .names: return COCOCategoryMap(classNames: classNames, categories: truth.categories)
        case .coco80:
            guard classNames.count == COCOCategoryMap.darknetCOCO80.count else {
                throw YOLOError.invalidArgument("--category-map coco80 needs an 80-class model; this one has \(classNames.count) classes")
            }
            return COCOCategoryMap.standard80(classNames: classNames)
        }
    }

    /// A confidence as the shortest decimal that reads back as the same Float (0.007898, not
    /// 0.007898000068962574), so results files stay short; the order of scores is unchanged.
    static func decimalScore(_ confidence: Float) -> Double {
        Double("\(confidence)") ?? Double(confidence)
    }
}
