import Foundation

/// Conversion steered by calibration inputs: what `yolo convert --calibrate` and `make model` run.
extension ModelConverter {
    // MARK: Inputs

    /// The network input for calibrating `model` with `image`: letterboxed to the model's input size
    /// (`.scaleFit`, darknet's), as `yolo detect` feeds images by default. `1×3×H×W` float in [0, 1].
    ///
    /// - Throws: `YOLOError` when the image cannot be placed (e.g. zero-sized).
    public static func calibrationInput(_ image: Image, for model: Model) throws -> Tensor {
        let shape = model.description.inputShape
        let crop = try Geometry.region(of: .unit, width: image.width, height: image.height)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: .scaleFit,
                                 networkWidth: shape.width, networkHeight: shape.height)
        var values = [Float](repeating: 0, count: shape.count)
        values.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, into: $0.baseAddress!) }
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
    public static func convert(_ model: Model, settings: ConversionSettings, calibration inputs: [Tensor],
                               progress: (String) -> Void = { _ in }) throws -> Model {
        guard settings.type != nil, !inputs.isEmpty else { return try convert(model, settings: settings, progress: progress) }
        let quantized = Set(model.convolutions.keys).subtracting(try floatLayers(settings.keepFloat, in: model.description))
        let grams = try InputGram.collect(model: model, inputs: inputs, layers: quantized)
        progress("input statistics of \(grams.count) layers from \(inputs.count) calibration inputs")
        var converted = try convert(model, settings: settings, grams: grams, progress: progress)
        guard !converted.quantizedConvolutions.isEmpty else { return converted }
        converted = BiasCorrection.correct(converted, reference: model, tapMeans: try BiasCorrection.tapMeans(model: model, inputs: inputs))
        progress("biases corrected with the mean activations of \(inputs.count) calibration inputs")
        return converted
    }
}
