import Foundation
@_spi(Engine) import YOLO

/// How the u8 range of each activation tensor is chosen from the float model's values on the calibration inputs.
public enum Int8ActivationRange: String, Sendable, CaseIterable {
    /// The whole range the values reach (with 0 inside): nothing clipped on the calibration inputs.
    case observed
    /// The clipping with the smallest expected squared error (clipping + rounding) over the values' histogram.
    /// It wins on the calibration inputs' own raw heads, but on new images it clips values that the detections
    /// need (docs/QUANTIZATION.md).
    case mse
}

/// What `ModelConverter.convertInt8` makes of a float model (`yolo convert --quantize int8`).
public struct Int8ConversionSettings: Sendable {
    /// Convolutions kept float32 whatever their measured sensitivity.
    public var keepFloat: [FloatLayerSelector] = []
    /// Convolutions kept float32 by measurement: each whose int8 version alone (weights and input quantized, every
    /// other layer float) moves the raw heads by at least this share of what the whole int8 model moves them
    /// (relative mean squared difference on the calibration inputs). nil: none by measurement.
    public var sensitivityShare: Double? = Int8ConversionSettings.defaultSensitivityShare
    /// Codes chosen for the layer's output error (GPTQ error feedback, then per-channel scales refitted), else
    /// nearest rounding of the largest-magnitude scale.
    public var gptq = true
    /// Biases corrected for the mean output shift of the weights' rounding (`BiasCorrection`).
    public var biasCorrection = true
    /// How each activation tensor's u8 range is chosen.
    public var activationRange = Int8ActivationRange.observed
    /// Channels between the early convolutions rescaled first, the float model's function unchanged, so each
    /// spreads over more of its tensor's u8 codes (`ChannelEqualization`). It pays where such a tensor feeds an
    /// int8 layer (yolov4-tiny's layer 1 into layer 2); docs/QUANTIZATION.md has the figures.
    public var equalization = false

    /// The default `sensitivityShare`.
    public static let defaultSensitivityShare = 0.2

    public init(keepFloat: [FloatLayerSelector] = [], sensitivityShare: Double? = Int8ConversionSettings.defaultSensitivityShare,
                gptq: Bool = true, biasCorrection: Bool = true, activationRange: Int8ActivationRange = .observed,
                equalization: Bool = false) {
        (self.keepFloat, self.sensitivityShare, self.gptq, self.biasCorrection) = (keepFloat, sensitivityShare, gptq, biasCorrection)
        (self.activationRange, self.equalization) = (activationRange, equalization)
    }

    /// One line naming the settings (stored in the model file's note).
    public var summary: String {
        let kept = keepFloat.isEmpty ? "none" : keepFloat.map(\.description).joined(separator: ",")
        let share = sensitivityShare.map { String(format: "%.2f", $0) } ?? "off"
        let activations = activationRange == .observed ? "over their observed range" : "MSE-calibrated"
        return "quantize int8 (s8 per-channel weights, u8 per-tensor activations \(activations)), \(gptq ? "gptq" : "nearest") codes, "
            + "keep-float \(kept), float by sensitivity share \(share)" + (biasCorrection ? ", bias correction" : "")
            + (equalization ? ", early channels equalized" : "")
    }
}

/// What a conversion to int8 measured and chose, layer by layer.
@_spi(Engine) public struct Int8ConversionReport: Sendable {
    public struct Layer: Sendable {
        public var index: Int
        /// True when the layer stays float32.
        public var float: Bool
        /// Why it stays float (`keep-float`, `sensitivity`), or nil.
        public var reason: String?
        /// Relative mean squared difference of the raw heads with this layer alone in int8 (nil: not measured).
        public var sensitivity: Double?
        /// Root mean square of the weight error, relative to the weights' root mean square.
        public var relativeWeightError: Double
        public var input: ActivationQuantization?
        public var output: ActivationQuantization?
    }
    public var layers: [Layer] = []
    /// Relative mean squared difference of the raw heads of the whole int8 model (before choosing float layers)
    /// and of the converted model, on the calibration inputs.
    public var allInt8Error: Double = 0
    public var convertedError: Double = 0

    /// One line per layer, then the totals.
    public var lines: [String] {
        layers.map { l in
            let sensitivity = l.sensitivity.map { String(format: "%.3g", $0) } ?? "-"
            var line = String(format: "layer %2d: %@, sensitivity %@, weight rel RMSE %.3g", l.index,
                              l.float ? "float32 (\(l.reason ?? ""))" : "int8", sensitivity, l.relativeWeightError)
            if let input = l.input, !l.float { line += ", in \(input)" }
            if let output = l.output, !l.float { line += ", out \(output)" }
            return line
        } + [String(format: "raw heads, relative mean squared difference from float on the calibration inputs: all int8 %.3g, converted %.3g",
                    allInt8Error, convertedError)]
    }
}

extension ModelConverter {
    /// Quantizes `model` to linear int8 with calibration `inputs` (never evaluation images): per-output-channel
    /// symmetric s8 weights (GPTQ codes, refitted scales, corrected biases: `Int8ConversionSettings`), per-tensor
    /// u8 activation scales and zero points from the float model's values (`ActivationCalibration`), and the
    /// float32 layers chosen by `keepFloat` and by measured sensitivity. Deterministic for a given input order.
    ///
    /// - Throws: `YOLOError.invalidArgument` without inputs or for a non-finite weight; `YOLOError` when an input
    ///   does not fit the network.
    @_spi(Engine) public static func convertInt8(_ original: Model, settings: Int8ConversionSettings, calibration inputs: [Tensor],
                                                progress: (String) -> Void = { _ in }) throws -> (model: Model, report: Int8ConversionReport) {
        guard !inputs.isEmpty else {
            throw YOLOError.invalidArgument("int8 quantization needs calibration inputs (--calibrate IMAGES...) to choose the activations' scales")
        }
        let description = original.description
        let geometry = try description.geometry(width: description.inputShape.width, height: description.inputShape.height)
        // Grouped convolutions stay float32 (no int8 kernel runs them).
        let convolutions = original.convolutions.keys.sorted().filter { !description.groupedConvolutions.contains($0) }
        for index in convolutions where !original.convolutions[index]!.weights.buffer.allSatisfy(\.isFinite) {
            throw YOLOError.invalidArgument("layer \(index) holds a non-finite weight; it cannot be quantized (keep it float: --keep-float \(index))")
        }
        // Channels equalized first: the same float function, better spread over the u8 codes.
        let (model, equalized) = settings.equalization ? try ChannelEqualization.equalize(original, inputs: inputs) : (original, [:])
        for (layer, scales) in equalized.sorted(by: { $0.key < $1.key }) {
            progress(String(format: "layer %2d: channels equalized, %d of %d rescaled, by up to %.3g", layer,
                            scales.filter { $0 > 1 }.count, scales.count, scales.max() ?? 1))
        }
        // Activations.
        let groups = ActivationCalibration.groups(description, geometry: geometry)
        let quantizations = try ActivationCalibration.quantizations(model: model, inputs: inputs, groups: groups,
                                                                         range: settings.activationRange)
        progress("activation scales of \(quantizations.count) tensor groups from \(inputs.count) calibration inputs")
        let heads = Set(description.heads.map(\.index))
        func inputQuantization(_ index: Int) -> ActivationQuantization {
            let source = geometry[index].inputs[0]
            guard source >= 0 else { return ActivationQuantization(scale: 1 / 255, zeroPoint: 0) }  // pixels in [0, 1]
            return groups[source].flatMap { quantizations[$0] } ?? ActivationQuantization(scale: 1 / 255, zeroPoint: 0)
        }
        func outputQuantization(_ index: Int) -> ActivationQuantization? {
            let readers = description.layers.indices.filter { geometry[$0].inputs.contains(index) }
            guard !readers.allSatisfy(heads.contains) else { return nil }
            return groups[index].flatMap { quantizations[$0] }
        }
        // Weights.
        let grams = settings.gptq ? try InputGram.collect(model: model, inputs: inputs, layers: Set(convolutions)) : [:]
        let means = settings.biasCorrection ? try BiasCorrection.tapMeans(model: model, inputs: inputs) : [:]
        var int8: [Int: Int8ConvolutionParameters] = [:]
        var weightErrors: [Int: Double] = [:]
        for index in convolutions {
            let p = model.convolutions[index]!
            let weights = quantizeWeights(p.weights, rows: p.biases.count, gram: grams[index])
            let restored = weights.expanded()
            let error = withExtendedLifetime((p, restored)) { WeightError(p.weights.buffer, restored.buffer) }
            weightErrors[index] = error.rms > 0 ? error.rmse / error.rms : 0
            let biases = means[index].map { FloatBuffer(BiasCorrection.corrected(p.biases, restored: restored, original: p.weights, means: $0)) } ?? p.biases
            int8[index] = Int8ConvolutionParameters(weights: weights, biases: biases, input: inputQuantization(index),
                                                    output: outputQuantization(index))
        }
        progress("int8 weights of \(int8.count) convolutions (\(settings.gptq ? "GPTQ codes" : "nearest codes"))")
        // Which layers stay float.
        let kept = Set(try floatLayers(settings.keepFloat, in: description))
        let reference = try headsOf(model, inputs: inputs)
        var report = Int8ConversionReport()
        report.allInt8Error = try headError(withInt8: int8, in: model, inputs: inputs, reference: reference)
        var sensitivities: [Int: Double] = [:]
        if settings.sensitivityShare != nil {
            for index in convolutions where !kept.contains(index) {
                sensitivities[index] = try headError(withInt8: [index: int8[index]!], in: model, inputs: inputs, reference: reference)
                progress(String(format: "layer %2d alone in int8: raw heads' relative mean squared difference %.3g", index, sensitivities[index]!))
            }
        }
        var result = model
        for index in convolutions {
            let measured = settings.sensitivityShare.map { share in (sensitivities[index] ?? 0) >= share * report.allInt8Error } ?? false
            let float = kept.contains(index) || measured
            if !float {
                result.convolutions[index] = nil
                result.int8Convolutions[index] = int8[index]
            }
            report.layers.append(.init(index: index, float: float, reason: kept.contains(index) ? "keep-float" : measured ? "sensitivity" : nil,
                                       sensitivity: sensitivities[index], relativeWeightError: weightErrors[index]!,
                                       input: int8[index]!.input, output: int8[index]!.output))
        }
        report.convertedError = try headError(withInt8: result.int8Convolutions, in: model, inputs: inputs, reference: reference)
        return (result, report)
    }

    /// Per-channel s8 weights for `weights` (`rows` filters): nearest codes of the largest-magnitude scale, or, with
    /// the layer's input second moments `gram`, GPTQ's error-feedback codes on the 255-level grid with every
    /// channel's scale refitted for the output error (`GPTQRounding`).
    static func quantizeWeights(_ weights: FloatBuffer, rows: Int, gram: [Float]?) -> Int8Weights {
        let nearest = Int8Weights(quantizing: weights.buffer, rows: rows)
        guard let gram else { return nearest }
        let table = LUTQuantizer.linearTable(255)  // (code − 127) / 127
        let scales = nearest.scales.array.map { $0 * Float(Int8Weights.maximum) }
        let rounding = GPTQRounding()
        guard let codes = rounding.codes(weights.buffer, rows: rows, table: table, scales: scales, gram: gram) else { return nearest }
        let refitted = GPTQRounding.outputScales(weights.buffer, codes: codes, rows: rows, table: table, scales: scales, gram: gram)
        let rowLength = weights.count / rows
        let values = SharedBuffer<Int8>(count: weights.count) { out in
            for r in 0..<rows where scales[r] > 0 {
                for k in 0..<rowLength { out[r * rowLength + k] = Int8(Int(codes[r * rowLength + k]) - 127) }
            }
        }
        return Int8Weights(rows: rows, rowLength: rowLength, values: values,
                           scales: FloatBuffer(refitted.map { $0 / Float(Int8Weights.maximum) }))
    }

    /// The raw heads of `model` on every input.
    static func headsOf(_ model: Model, inputs: [Tensor]) throws -> [[Tensor]] {
        try inputs.map { input in
            try Network(model: model, width: input.shape.width, height: input.shape.height, threads: 1).forward(input)
        }
    }

    /// `Σ (h − h_ref)² / Σ h_ref²` over the heads of every input, for `model` with the convolutions in `int8` in int8.
    static func headError(withInt8 int8: [Int: Int8ConvolutionParameters], in model: Model, inputs: [Tensor],
                          reference: [[Tensor]]) throws -> Double {
        var candidate = model
        for (index, parameters) in int8 {
            candidate.convolutions[index] = nil
            candidate.int8Convolutions[index] = parameters
        }
        var (difference, energy) = (0.0, 0.0)
        for (input, heads) in zip(inputs, reference) {
            let network = try Network(model: candidate, width: input.shape.width, height: input.shape.height, threads: 1)
            for (a, b) in zip(try network.forward(input), heads) {
                for (x, y) in zip(a.values, b.values) {
                    difference += Double(x - y) * Double(x - y)
                    energy += Double(y) * Double(y)
                }
            }
        }
        return energy > 0 ? difference / energy : 0
    }
}
