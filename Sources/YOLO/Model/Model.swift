import Foundation

/// A loaded model: its description, the parameters of its convolutions and its class labels.
///
/// Immutable and `Sendable`: load once, then hand it to a ``Detector`` (which builds a network per
/// input size from it) and run detections on any number of threads. Load a darknet model with
/// ``init(cfg:weights:names:)`` or a converted SwiftYOLO file with ``init(contentsOf:residency:)``.
public struct Model: Sendable {
    @_spi(Engine) public var description: ModelDescription
    /// Parameters of each convolution, keyed by layer index.
    @_spi(Engine) public var convolutions: [Int: ConvolutionParameters]
    /// Class names, index = class id. Empty when no names file was given.
    public var labels: [String]
    /// Convolutions whose weights are kept as LUT codes, keyed by layer index (a model-file load with
    /// `WeightResidency.codes`, or a conversion). A layer is either here or in `convolutions`.
    @_spi(Engine) public var quantizedConvolutions: [Int: QuantizedConvolution] = [:]
    /// Convolutions stored as linear int8 (`yolo convert --quantize int8`), keyed by layer index: run in int8 where
    /// the kernel family has an int8 kernel, expanded to float otherwise. A layer is in one of the three maps.
    @_spi(Engine) public var int8Convolutions: [Int: Int8ConvolutionParameters] = [:]

    @_spi(Engine) public init(description: ModelDescription, convolutions: [Int: ConvolutionParameters], labels: [String]) {
        self.description = description
        self.convolutions = convolutions
        self.labels = labels
    }

    /// Loads a darknet model: `.cfg`, `.weights` and optionally a names file (one label per line).
    ///
    /// - Throws: `YOLOError` naming the file and what is wrong with it.
    public init(cfg: String, weights: String, names: String? = nil) throws {
        let description = try ModelDescription(cfgPath: cfg)
        let parameters = try DarknetWeights.load(weights, for: description)
        let labels = try names.map(Model.readLabels) ?? []
        if !labels.isEmpty, labels.count != description.classCount {
            throw YOLOError.invalidFile(path: names!, message: "holds \(labels.count) names, but the model has \(description.classCount) classes")
        }
        self.init(description: description, convolutions: parameters, labels: labels)
    }

    /// Reads a names file: one label per non-empty line.
    @_spi(Engine) public static func readLabels(_ path: String) throws -> [String] {
        try FileIO.readText(path).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// The label of class `index`, or `class N` when there is no names file.
    public func label(_ index: Int) -> String {
        index < labels.count ? labels[index] : "class \(index)"
    }

    // MARK: Facts for embedders

    /// The input width, in pixels, the model's cfg names (416 for yolov3-tiny); `DetectionOptions.InputSize.model`.
    /// How images are fitted into the input when a request does not say (`DetectionOptions.scaling` nil):
    /// `.scaleFill` for models from AlexeyAB's darknet (yolov4-tiny), letterbox `.scaleFit` for pjreddie's
    /// (yolov3-tiny), or what the cfg's `[net] letter_box` says. Stored in converted model files.
    public var preferredScaling: DetectionOptions.Scaling {
        get { description.preferredScaling }
        set { description.preferredScaling = newValue }
    }

    /// How pixels are resampled when a request does not say (`DetectionOptions.resampling` nil): `.darknet`
    /// for darknet models. Stored in converted model files with the scaling.
    public var preferredResampling: DetectionOptions.Resampling {
        get { description.preferredResampling }
        set { description.preferredResampling = newValue }
    }

    /// The IoU threshold a request gets when `DetectionOptions.iouThreshold` is nil: 0.45 as darknet, or 0.7 for
    /// Ultralytics' anchor-free models converted from ONNX, as Ultralytics' own suppression.
    public var preferredIoUThreshold: Float { description.preferredIoUThreshold }

    /// The detection limit a request gets when `DetectionOptions.maximumDetections` is nil: none (nil) for darknet
    /// models, 300 for Ultralytics' anchor-free models, as Ultralytics' own suppression.
    public var preferredMaximumDetections: Int? { description.preferredMaximumDetections }

    public var inputWidth: Int { description.inputShape.width }
    /// The input height, in pixels, the model's cfg names (416 for yolov3-tiny).
    public var inputHeight: Int { description.inputShape.height }
    /// Input channels: 3 for RGB models, 1 for gray ones (images are converted to match).
    public var inputChannels: Int { description.inputShape.channels }
    /// Classes each detection head scores (80 for COCO models); `labels` has this many names when a
    /// names file was given.
    public var classCount: Int { description.classCount }
    /// What every network input side must be a multiple of (the model's total stride: 32 for
    /// yolov3-tiny), for `DetectionOptions.InputSize.fixed(width:height:)`.
    public var inputSizeDivisor: Int { description.sizeDivisor }
    /// The file the model was loaded from (the `.cfg` or the `.yolo` file), for messages.
    public var path: String { description.path }
}
