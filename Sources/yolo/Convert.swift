import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOConversion

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a darknet model or an Ultralytics YOLOv8 ONNX export into one SwiftYOLO model file (.yolo), optionally with quantized weights.",
        discussion: """
            Batch norm is folded into the weights first. Quantized weights become n-bit codes into a table of \
            2^n values (lut8: 8 bits, lut6, lut4); a per-channel table is the layer's table times one float \
            scale per output channel. The codes are stored deflated (zlib level 9, lossless: about 4% smaller for \
            yolov4-tiny lut8, inflated at load) unless --codes plain. The same inputs always give a byte-identical \
            file. Progress goes to stderr.

            Defaults, measured on yolov3-tiny (scripts/measure-quantization.sh): lut8, the size of Apple's \
            YOLOv3TinyInt8LUT (8.89 MB). Per-channel tables: folded batch norm gives each filter its own scale, \
            and a per-channel scale costs 4 bytes. k-means tables, then alternating least squares of scales, \
            table and codes (--refine-rounds). --keep-float first: the first convolution sees the raw pixels and \
            has 432 weights. For lut6 and lut4, --lut8-layers defaults to the heads and the first 4 / 3 \
            convolutions (3% of the weights, 50-100 KB).

            --calibrate (images that are NOT evaluation images) measures each layer's input correlations and \
            picks codes that reduce the layer's output error (GPTQ-style error feedback, columns by input \
            energy), refits each channel's scale for that output error, then corrects the biases. `make model` \
            calibrates the default model on Weights/calibration (Weights/CALIBRATION.md). Float detections kept \
            (photos + coco-val2017-dev, 170; docs/QUANTIZATION.md): lut8 97.6% -> 99.4% (IoU >= 0.9), \
            lut6 94.1% -> 96.5% (0.85), lut4 78.2% -> 84.7% (0.8). \
            --calibration-views adds mirrored and larger letterboxed views of each calibration image (more \
            positions for the deep layers' statistics); --lut6-layers spends bytes on 6-bit codes. Best lut4 \
            (4,149,120 bytes; 4,599,040 with --codes plain): --lut6-layers 4,6,13,heads --calibration-views mirror,608,608-mirror,704,704-mirror, \
            91.2% (0.8).
            """)

    @OptionGroup var model: ModelOptions

    @Option(name: [.short, .customLong("output")], help: "The model file to write (.yolo).")
    var output: String

    @Option(name: .customLong("quantize"), help: "Weight storage: none (float32), lut8, lut6, lut4, or int8 (linear int8 weights and activations, run by the int8 kernels; needs --calibrate). Default: lut8, none with --onnx.")
    var quantizeOption: String?

    @Option(name: .customLong("onnx"), help: "Convert this Ultralytics-exported YOLOv8 detector (.onnx) instead of darknet files (docs/ONNX.md); class names from --names, else the file's metadata.")
    var onnx: String?

    var quantize: String { quantizeOption ?? (onnx == nil ? "lut8" : "none") }

    @Option(help: "Tables: per-channel (one scale per output channel) or per-layer.")
    var lut: String = "per-channel"

    @Option(help: "How tables are made: kmeans (Lloyd, deterministic) or linear (evenly spaced).")
    var method: String = "kmeans"

    @Option(name: .customLong("refine-rounds"), help: "Rounds of least-squares refinement of k-means scales, tables and codes (0: max-magnitude scales, nearest codes).")
    var refineRounds: Int = LUTRefinement().maxRounds

    @Option(name: .customLong("keep-float"), help: "Convolutions kept float32: none, or a comma-separated list of first, last, heads and layer indices (default: first for the LUT types, none for int8, whose float layers are also chosen by measured sensitivity).")
    var keepFloat: String?

    @Option(name: .customLong("sensitivity-share"), help: "int8: keep float32 each convolution whose int8 version alone moves the raw heads by at least this share of what the whole int8 model moves them, on the calibration inputs; off: none by measurement.")
    var sensitivityShare: String = String(Int8ConversionSettings.defaultSensitivityShare)

    @Option(name: .customLong("activation-range"), help: "int8: each activation tensor's u8 range, from the float model's values on the calibration inputs: observed (all they reach) or mse (the clipping with the smallest expected squared error; fits the calibration images, clips values new images need). Default: observed.")
    var activationRange: String = Int8ActivationRange.observed.rawValue

    @Flag(name: .customLong("equalize"), help: "int8: before quantizing, rescale the channels of the early convolutions (each channel up to half its tensor's largest value on the calibration inputs, the readers' weights rescaled back: the float function is unchanged), so they use more of the u8 codes (make model does this for yolov4-tiny-int8).")
    var equalize = false

    @Option(name: .customLong("lut8-layers"), help: "Convolutions given 8-bit codes whatever --quantize says: none, or a list as for --keep-float (default: heads for lut6 and lut4, none for lut8).")
    var lut8Layers: String?

    @Option(name: .customLong("lut6-layers"), help: "Convolutions given 6-bit codes whatever --quantize says (before --lut8-layers, which they override): none, or a list as for --keep-float (default none).")
    var lut6Layers: String = "none"

    @Option(parsing: .upToNextOption, help: "Calibration images or .npy input blobs (never the evaluation images): their mean activations let the biases absorb the mean output shift of quantized weights, and their input correlations steer the choice of codes (GPTQ-style error feedback).")
    var calibrate: [String] = []

    @Option(name: .customLong("calibration-views"), help: "More views of each calibration image (not of .npy blobs): none, or a comma-separated list of mirror (left-right), N (letterboxed to NxN, N a multiple of 32) and N-mirror. Each view is one more calibration input.")
    var calibrationViews: String = "none"

    @Option(help: "How LUT codes are stored: deflate (zlib level 9, lossless, inflated at load; format 1.3) or plain (used in place from the memory map; readable by readers of format 1.0-1.2).")
    var codes: String = "deflate"

    @Option(parsing: .upToNextOption, help: "After converting, compare float and converted detections on these images.")
    var report: [String] = []

    @Option(name: .customLong("match-iou"), help: "IoU a converted detection needs to match a float one (default: 0.9 for lut8, 0.85 lut6, 0.8 lut4).")
    var matchIoU: Double?

    /// True for `--quantize int8`.
    var isInt8: Bool { quantize == "int8" }

    func int8Settings() throws -> Int8ConversionSettings {
        var settings = Int8ConversionSettings()
        settings.keepFloat = try FloatLayerSelector.parseList(keepFloat ?? "none")
        if sensitivityShare == "off" {
            settings.sensitivityShare = nil
        } else {
            guard let share = Double(sensitivityShare), share > 0, share.isFinite else {
                throw YOLOError.invalidArgument("--sensitivity-share must be a positive number or off; got '\(sensitivityShare)'")
            }
            settings.sensitivityShare = share
        }
        guard let range = Int8ActivationRange(rawValue: activationRange) else {
            throw YOLOError.invalidArgument("--activation-range must be observed or mse; got '\(activationRange)'")
        }
        settings.activationRange = range
        settings.equalization = equalize
        return settings
    }

    func settings() throws -> ConversionSettings {
        var settings = ConversionSettings()
        if isInt8 {
            settings.type = nil
        } else if quantize == "none" {
            settings.type = nil
        } else {
            guard let type = LUTType(name: quantize) else {
                throw YOLOError.invalidArgument("--quantize must be none, lut8, lut6, lut4 or int8; got '\(quantize)'")
            }
            settings.type = type
        }
        guard let granularity = LUTGranularity(name: lut) else {
            throw YOLOError.invalidArgument("--lut must be per-layer or per-channel; got '\(lut)'")
        }
        guard let method = LUTMethod(rawValue: method) else {
            throw YOLOError.invalidArgument("--method must be kmeans or linear; got '\(self.method)'")
        }
        settings.granularity = granularity
        settings.method = method
        guard refineRounds >= 0 else {
            throw YOLOError.invalidArgument("--refine-rounds must be 0 or more; got \(refineRounds)")
        }
        settings.refineRounds = refineRounds
        settings.keepFloat = try FloatLayerSelector.parseList(keepFloat ?? "first")
        settings.eightBit = try lut8Layers.map(FloatLayerSelector.parseList) ?? ConversionSettings.defaultEightBit(for: settings.type)
        settings.sixBit = try FloatLayerSelector.parseList(lut6Layers)
        return settings
    }

    /// Whether `--codes` asks for deflated codes.
    func compressCodes() throws -> Bool {
        switch codes {
        case "deflate": return true
        case "plain": return false
        default: throw YOLOError.invalidArgument("--codes must be deflate or plain; got '\(codes)'")
        }
    }

    func validate() throws {
        if onnx != nil, model.cfg != nil || model.weights != nil || model.modelFile != nil {
            throw YOLOError.invalidArgument("--onnx replaces --cfg, --weights and --model; give one model")
        }
        _ = try settings()
        _ = try int8Settings()
        if isInt8 && calibrate.isEmpty {
            throw YOLOError.invalidArgument("--quantize int8 needs --calibrate IMAGES... (photos like the ones the model will see, not evaluation images): they choose the activations' scales")
        }
        _ = try compressCodes()
        _ = try CalibrationView.parseList(calibrationViews)
        if let matchIoU, !(matchIoU > 0 && matchIoU <= 1) {
            throw YOLOError.invalidArgument("--match-iou must be in (0, 1]; got \(matchIoU)")
        }
    }

    func run() throws {
        let settings = try settings()
        // The report's images are read first: a missing or broken one must fail before the model is written.
        for path in report { _ = try Image(contentsOf: path) }
        let start = ContinuousClock.now
        let float: Model
        if let onnx {
            float = try Model(onnx: onnx, names: model.names)
            printError("loaded \(onnx): \(float.description.layers.count) layers, \(float.convolutions.count) convolutions, \(float.classCount) classes")
        } else {
            float = try model.load(convertedDefault: false)
            printError("loaded \(model.cfg ?? Defaults.cfg): \(float.convolutions.count) convolutions")
        }
        let views = try CalibrationView.parseList(calibrationViews)
        let inputs = try calibrate.flatMap { try NetworkInput.calibrationInputs($0, for: float, views: views) }
        let viewNote = views.isEmpty ? "" : " (views " + views.map(\.description).joined(separator: ",") + ")"
        let summary: String
        if isInt8 {
            let int8 = try int8Settings()
            let (converted, conversion) = try ModelConverter.convertInt8(float, settings: int8, calibration: inputs, progress: printError)
            conversion.lines.forEach { print($0) }
            summary = int8.summary + ", calibrated on \(calibrate.count) inputs" + viewNote
            try ModelFile.write(converted, to: output, note: summary)
        } else {
            let converted = try ModelConverter.convert(float, settings: settings, calibration: inputs, progress: printError)
            summary = settings.summary
            try ModelFile.write(converted, to: output, note: settings.summary + (calibrate.isEmpty ? "" : ", bias correction on \(calibrate.count) inputs" + viewNote),
                                compressCodes: try compressCodes())
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        print(String(format: "%@: %d bytes (%.3f MB), %@, converted in %.2f s", output, bytes, Double(bytes) / 1e6,
                     summary, (ContinuousClock.now - start).seconds))
        if !report.isEmpty {
            let written = try Model(contentsOf: output, residency: .codes)
            let iou = matchIoU ?? ModelComparison.defaultMatchIoU(for: settings.type)
            try ModelComparison.printReport(reference: float, candidate: written, images: report, matchIoU: iou)
        }
    }
}
