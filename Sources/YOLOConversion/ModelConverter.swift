import Foundation
@_spi(Engine) import YOLO

/// A convolution that `ModelConverter` keeps in float32.
public enum FloatLayerSelector: Sendable, Hashable, CustomStringConvertible {
    /// The first convolution (it sees the raw pixels).
    case first
    /// The first `n` convolutions (`firstN`, e.g. `first3`).
    case leading(Int)
    /// The last convolution.
    case last
    /// Every convolution that feeds a YOLO head.
    case heads
    /// The layer with this index (as `yolo info` numbers them).
    case layer(Int)

    /// Parses `first`, `firstN`, `last`, `heads` or a layer index.
    @_spi(Engine) public init?(token: String) {
        switch token {
        case "first": self = .first
        case "last": self = .last
        case "heads": self = .heads
        default:
            if token.hasPrefix("first"), let n = Int(token.dropFirst(5)), n >= 1 {
                self = .leading(n)
                return
            }
            guard let index = Int(token), index >= 0 else { return nil }
            self = .layer(index)
        }
    }

    public var description: String {
        switch self {
        case .first: return "first"
        case .leading(let n): return "first\(n)"
        case .last: return "last"
        case .heads: return "heads"
        case .layer(let index): return "\(index)"
        }
    }

    /// Parses a comma-separated list (`first,last`, `none`).
    @_spi(Engine) public static func parseList(_ text: String) throws -> [FloatLayerSelector] {
        if text == "none" { return [] }
        return try text.split(separator: ",", omittingEmptySubsequences: false).map { token in
            guard let selector = FloatLayerSelector(token: String(token)) else {
                throw YOLOError.invalidArgument("layer lists take 'none' or a comma-separated list of first, firstN (e.g. first3), last, heads and layer indices; got '\(token)'")
            }
            return selector
        }
    }
}

/// What `ModelConverter` makes of a float model.
public struct ConversionSettings: Sendable {
    /// The LUT type for quantized layers; nil keeps every layer float32.
    public var type: LUTType? = .lut8
    /// One table per output channel (the default) or one per layer.
    public var granularity: LUTGranularity = .perChannel
    /// How the table values are chosen: k-means (the default) or evenly spaced.
    public var method: LUTMethod = .kmeans
    /// Convolutions kept float32.
    public var keepFloat: [FloatLayerSelector] = [.first]
    /// Convolutions quantized with 8-bit codes whatever `type` is (unless kept float).
    public var eightBit: [FloatLayerSelector] = []
    /// Convolutions quantized with 6-bit codes whatever `type` is (unless kept float); they take
    /// precedence over `eightBit`.
    public var sixBit: [FloatLayerSelector] = []
    /// Rounds of least-squares refinement of k-means fits (`LUTRefinement`); 0 keeps the first fit.
    public var refineRounds = ConversionSettings.defaultRefineRounds

    /// The default `refineRounds` (12).
    public static let defaultRefineRounds = LUTRefinement().maxRounds

    /// Settings with the given values; the defaults are `yolo convert`'s (8-bit per-channel k-means
    /// tables, the first convolution kept float).
    public init(type: LUTType? = .lut8, granularity: LUTGranularity = .perChannel, method: LUTMethod = .kmeans,
                keepFloat: [FloatLayerSelector] = [.first], eightBit: [FloatLayerSelector] = [],
                sixBit: [FloatLayerSelector] = [], refineRounds: Int = ConversionSettings.defaultRefineRounds) {
        precondition(refineRounds >= 0, "ConversionSettings: negative refine rounds")
        self.refineRounds = refineRounds
        self.type = type
        self.granularity = granularity
        self.method = method
        self.keepFloat = keepFloat
        self.eightBit = eightBit
        self.sixBit = sixBit
    }

    /// The default 8-bit layers for a type: for lut6 and lut4, the heads (they turn features
    /// directly into box coordinates and scores) and the first 4 or 3 convolutions (small, and their
    /// errors travel through the whole network), 3% of yolov3-tiny's weights; none for lut8.
    public static func defaultEightBit(for type: LUTType?) -> [FloatLayerSelector] {
        switch type {
        case .lut6: return [.leading(4), .heads]
        case .lut4: return [.leading(3), .heads]
        default: return []
        }
    }

    /// One line naming the settings (stored in the model file's note).
    public var summary: String {
        guard let type else { return "quantize none" }
        let kept = keepFloat.isEmpty ? "none" : keepFloat.map(\.description).joined(separator: ",")
        let eight = eightBit.isEmpty || type == .lut8 ? "" : ", lut8 layers " + eightBit.map(\.description).joined(separator: ",")
        let six = sixBit.isEmpty || type == .lut6 ? "" : ", lut6 layers " + sixBit.map(\.description).joined(separator: ",")
        let refine = method == .kmeans ? ", refine \(refineRounds)" : ""
        return "quantize \(type), tables \(granularity), method \(method.rawValue)\(refine), keep-float \(kept)" + eight + six
    }
}

/// Turns a float model into one with LUT-quantized convolutions.
public enum ModelConverter {
    /// The convolution layer indices `selectors` name in `description`, ascending (`--keep-float`, `--lut8-layers`).
    ///
    /// - Throws: `YOLOError.invalidArgument` for an index that is not a convolution.
    @_spi(Engine) public static func floatLayers(_ selectors: [FloatLayerSelector], in description: ModelDescription) throws -> [Int] {
        let convolutions = description.layers.indices.filter {
            if case .convolution = description.layers[$0] { return true }
            return false
        }
        var chosen = Set<Int>()
        for selector in selectors {
            switch selector {
            case .first: if let first = convolutions.first { chosen.insert(first) }
            case .leading(let n): chosen.formUnion(convolutions.prefix(n))
            case .last: if let last = convolutions.last { chosen.insert(last) }
            case .heads:
                for head in description.heads.map(\.index) where convolutions.contains(head - 1) { chosen.insert(head - 1) }
            case .layer(let index):
                guard convolutions.contains(index) else {
                    throw YOLOError.invalidArgument("keep float \(index): layer \(index) is not a convolution (convolutions: \(convolutions.map(String.init).joined(separator: ",")))")
                }
                chosen.insert(index)
            }
        }
        return chosen.sorted()
    }

    /// Quantizes every convolution of `model` not kept float, in layer order. `progress` gets one
    /// line per layer (layer, storage, time, weight RMSE and largest error).
    ///
    /// `grams[layer]`, when given, is the layer's input second moments (`InputGram.collect`, from
    /// calibration inputs): the codes are then chosen by `GPTQRounding` to reduce the output error.
    ///
    /// - Throws: `YOLOError.invalidArgument` when a layer to quantize holds a non-finite weight.
    public static func convert(_ model: Model, settings: ConversionSettings, grams: [Int: [Float]] = [:],
                               progress: (String) -> Void = { _ in }) throws -> Model {
        guard let type = settings.type else { return model }
        let kept = Set(try floatLayers(settings.keepFloat, in: model.description))
        var result = model
        let eightBit = Set(try floatLayers(settings.eightBit, in: model.description))
        let sixBit = Set(try floatLayers(settings.sixBit, in: model.description))
        let grouped = model.description.groupedConvolutions
        for index in model.convolutions.keys.sorted() where !kept.contains(index) && !grouped.contains(index) {
            let layerType = sixBit.contains(index) ? LUTType.lut6 : eightBit.contains(index) ? LUTType.lut8 : type
            let quantizer = LUTQuantizer(type: layerType, granularity: settings.granularity, method: settings.method,
                                         refinement: LUTRefinement(maxRounds: settings.refineRounds))
            let parameters = model.convolutions[index]!
            guard parameters.weights.buffer.allSatisfy(\.isFinite) else {
                throw YOLOError.invalidArgument("layer \(index) holds a non-finite weight; it cannot be quantized (keep it float: ConversionSettings.keepFloat, yolo convert --keep-float \(index))")
            }
            let start = ContinuousClock.now
            let rows = parameters.biases.count
            var weights = quantizer.quantize(parameters.weights.buffer, rows: rows)
            var rounding = "nearest"
            if let gram = grams[index] {
                let rowLength = parameters.weights.count / rows
                precondition(gram.count == rowLength * rowLength, "ModelConverter: gram of \(gram.count) for rows of \(rowLength)")
                if let codes = GPTQRounding().codes(parameters.weights.buffer, rows: rows, table: weights.table.array,
                                                    scales: weights.scales.array, gram: gram) {
                    let scales = settings.granularity == .perChannel
                        ? GPTQRounding.outputScales(parameters.weights.buffer, codes: codes, rows: rows, table: weights.table.array,
                                                    scales: weights.scales.array, gram: gram)
                        : weights.scales.array
                    weights = LUTWeights(type: weights.type, granularity: weights.granularity, rows: rows, rowLength: rowLength,
                                         table: weights.table, scales: FloatBuffer(scales), codes: ByteBuffer(layerType.traits.pack(codes)))
                    rounding = "gptq"
                }
            }
            let expanded = weights.expanded()
            let error = withExtendedLifetime((parameters, expanded)) { WeightError(parameters.weights.buffer, expanded.buffer) }
            result.convolutions[index] = nil
            result.quantizedConvolutions[index] = QuantizedConvolution(weights: weights, biases: parameters.biases)
            let elapsed = ContinuousClock.now - start  // one clock read for both parts
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            progress(String(format: "layer %2d: %@ %@, %@ codes, %d weights, %.2f s, RMSE %.3g, max error %.3g",
                            index, layerType.description, settings.granularity.description, rounding, weights.count, seconds,
                            error.rmse, error.maxError))
        }
        return result
    }
}
