import Foundation
@_spi(Engine) import YOLO

/// Conversion steered by calibration inputs: what `yolo convert --calibrate` and `make model` run.
extension ModelConverter {
    // MARK: Inputs

    /// The network input for calibrating `model` with `image`: fitted to the model's input size the way
    /// the model expects (`Model.preferredScaling`), as `yolo detect` feeds images by default.
    /// `1×3×H×W` float in [0, 1].
    ///
    /// - Throws: `YOLOError` when the image cannot be placed (e.g. zero-sized).
    @_spi(Engine) public static func calibrationInput(_ image: Image, for model: Model) throws -> Tensor {
        try calibrationInput(image, shape: model.description.inputShape, scaling: model.preferredScaling,
                             resampling: model.preferredResampling)
    }

    /// The inputs `image` gives for calibrating `model`: the plain input first, then one per
    /// view in `views` order (`CalibrationView`). Deterministic.
    ///
    /// - Throws: `YOLOError` when the image cannot be placed.
    @_spi(Engine) public static func calibrationInputs(_ image: Image, for model: Model, views: [CalibrationView]) throws -> [Tensor] {
        let shape = model.description.inputShape
        let (scaling, resampling) = (model.preferredScaling, model.preferredResampling)
        let fill = model.description.letterboxFill
        return try [calibrationInput(image, shape: shape, scaling: scaling, resampling: resampling, fill: fill)] + views.map { view in
            var viewShape = shape
            if let size = view.size { (viewShape.width, viewShape.height) = (size, size) }
            return try calibrationInput(image, shape: viewShape, scaling: scaling, resampling: resampling, fill: fill,
                                        mirrored: view.mirrored)
        }
    }

    /// `image` fitted to `shape` (any network input size) by `scaling` and `resampling`, optionally mirrored left-right.
    @_spi(Engine) public static func calibrationInput(_ image: Image, shape: Shape, scaling: DetectionOptions.Scaling = .scaleFit,
                                                     resampling: DetectionOptions.Resampling = .darknet, fill: Float = 0.5,
                                                     mirrored: Bool = false) throws -> Tensor {
        guard shape.channels == 1 || shape.channels == 3 else {
            throw YOLOError.invalidArgument("calibration images can feed 1-channel (gray) or 3-channel (RGB) models, not \(shape.channels) channels")
        }
        let crop = try Geometry.region(of: .unit, width: image.width, height: image.height)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: scaling,
                                 resampling: resampling, networkWidth: shape.width, networkHeight: shape.height)
        var values = [Float](repeating: 0, count: shape.count)
        values.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, channels: shape.channels, fill: fill, into: $0.baseAddress!) }
        if mirrored {
            for row in 0..<(shape.channels * shape.height) { values[(row * shape.width)..<((row + 1) * shape.width)].reverse() }
        }
        return Tensor(shape: shape, values: values)
    }

    // MARK: Calibrated conversion

    /// Quantizes `model` like `convert(_:settings:grams:progress:)`, with every quantized layer's
    /// input second moments measured on `inputs` by the float model (`InputGram`): codes chosen by
    /// `GPTQRounding`, per-channel scales refitted for the output error, then the biases corrected
    /// for the mean output shift (`BiasCorrection`). With no inputs it is the plain conversion.
    /// The inputs must never be evaluation images. Deterministic for a given input order.
    ///
    /// - Throws: `YOLOError` when an input does not fit the network or a weight is not finite.
    @_spi(Engine) public static func convert(_ model: Model, settings: ConversionSettings, calibration inputs: [Tensor],
                               progress: (String) -> Void = { _ in }) throws -> Model {
        guard settings.type != nil, !inputs.isEmpty else { return try convert(model, settings: settings, progress: progress) }
        let quantized = Set(model.convolutions.keys).subtracting(try floatLayers(settings.keepFloat, in: model.description))
            .subtracting(model.description.groupedConvolutions)
        let grams = try InputGram.collect(model: model, inputs: inputs, layers: quantized)
        progress("input statistics of \(grams.count) layers from \(inputs.count) calibration inputs")
        var converted = try convert(model, settings: settings, grams: grams, progress: progress)
        guard !converted.quantizedConvolutions.isEmpty else { return converted }
        converted = BiasCorrection.correct(converted, reference: model, tapMeans: try BiasCorrection.tapMeans(model: model, inputs: inputs))
        progress("biases corrected with the mean activations of \(inputs.count) calibration inputs")
        return converted
    }

    /// Quantizes `model` with calibration photos, as `yolo convert --calibrate` does: each image is
    /// letterboxed to the model's input size (and to each of `views`), the float model's layer inputs
    /// on them steer the codes and correct the biases (`convert(_:settings:calibration:progress:)`).
    /// With no images it is the plain `convert(_:settings:grams:progress:)`. Use a few (about ten)
    /// photos like the ones the model will see, never evaluation images. Deterministic for a given
    /// image order.
    ///
    /// ```swift
    /// let float = try Model(cfg: "yolov3-tiny.cfg", weights: "yolov3-tiny.weights", names: "coco.names")
    /// let photos = try ["a.jpg", "b.jpg"].map { try Image(contentsOf: $0) }
    /// let lut8 = try ModelConverter.convert(float, settings: ConversionSettings(), calibrationImages: photos)
    /// try ModelFile.write(lut8, to: "model.yolo")
    /// ```
    ///
    /// - Parameters:
    ///   - model: a float model (`Model(cfg:weights:names:)`).
    ///   - settings: the table size, granularity, method and layers kept float or at more bits.
    ///   - images: calibration photos, any size.
    ///   - views: extra views of each photo (other square sizes, mirrored); none by default.
    ///   - progress: receives one line per step (per layer, per statistics pass).
    /// - Returns: the model with its quantized convolutions.
    /// - Throws: `YOLOError` when an image cannot feed the model or a weight is not finite.
    public static func convert(_ model: Model, settings: ConversionSettings, calibrationImages images: [Image],
                               views: [CalibrationView] = [], progress: (String) -> Void = { _ in }) throws -> Model {
        let inputs = try images.flatMap { try calibrationInputs($0, for: model, views: views) }
        return try convert(model, settings: settings, calibration: inputs, progress: progress)
    }
}

/// One more view of a calibration image (`yolo convert --calibration-views`): the image letterboxed to
/// another square input size and/or mirrored left-right, as the network meets objects at other scales
/// and orientations. Deep layers see few positions per image (13×13 at the 416 input) against
/// thousands of input taps, so ten images leave their input statistics rank-deficient and code choices
/// fitted to them generalize poorly; more views of the same licensed images give more positions.
public struct CalibrationView: Sendable, Hashable, CustomStringConvertible {
    /// The square input size (a multiple of 32), or nil for the model's own.
    public var size: Int?
    /// Whether the view is mirrored left-right.
    public var mirrored: Bool

    /// The view at square input `size` (nil: the model's own size), mirrored or not.
    public init(size: Int?, mirrored: Bool) {
        self.size = size
        self.mirrored = mirrored
    }

    /// Parses `mirror`, `N` or `N-mirror` (N a multiple of 32 from 32 to 2048).
    @_spi(Engine) public init?(token: String) {
        let mirrored = token == "mirror" || token.hasSuffix("-mirror")
        if token == "mirror" {
            self.init(size: nil, mirrored: true)
            return
        }
        guard let size = Int(mirrored ? String(token.dropLast(7)) : token), size >= 32, size <= 2048, size % 32 == 0 else { return nil }
        self.init(size: size, mirrored: mirrored)
    }

    public var description: String {
        switch (size, mirrored) {
        case (nil, true): return "mirror"
        case (nil, false): return "plain"
        case (let size?, true): return "\(size)-mirror"
        case (let size?, false): return "\(size)"
        }
    }

    /// Parses a comma-separated list (`none` for no extra view).
    @_spi(Engine) public static func parseList(_ text: String) throws -> [CalibrationView] {
        if text == "none" { return [] }
        return try text.split(separator: ",", omittingEmptySubsequences: false).map { token in
            guard let view = CalibrationView(token: String(token)) else {
                throw YOLOError.invalidArgument("--calibration-views takes 'none' or a comma-separated list of mirror, N and N-mirror (N a multiple of 32, 32...2048); got '\(token)'")
            }
            return view
        }
    }
}
