/// A convolution whose weights stay in memory as LUT codes (`WeightResidency.codes`).
///
/// Before its matrix product it expands a block of output channels' weights from codes into
/// workspace scratch, multiplies that block, and moves on to the next, so at most
/// `blockRows × patchLength` float weights exist at once (≤ 1 MB), whatever the layer's size.
/// Otherwise it runs the same im2col / GEMM / bias-and-activation steps as `Convolution`
/// (`ConvolutionSteps`) and gives the same result as a `Convolution` holding the expanded weights.
///
/// Scratch layout: `[columns (steps.columnsCount floats) | weight block (blockRows·patchLength) |
/// GEMM scratch (steps.multiplyScratchCount)]`.
public struct LUTConvolution: Layer {
    public let inputs: [Int]
    public let steps: ConvolutionSteps
    /// `filters × inChannels·size²` codes.
    public let weights: LUTWeights
    /// `filters` floats.
    public let biases: FloatBuffer
    /// Output channels expanded and multiplied together.
    public let blockRows: Int

    /// Floats of expanded weights a block may hold: 262,144 (1 MB).
    public static let blockFloats = 262_144

    /// - Parameter blockFloats: the most expanded weights held at once (default `LUTConvolution.blockFloats`);
    ///   a block always holds at least one output channel.
    /// - Precondition: the code and bias counts match the shapes (the model-file reader checks this).
    public init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int,
                activation: Activation, weights: LUTWeights, biases: FloatBuffer, blockFloats: Int = LUTConvolution.blockFloats) {
        let steps = ConvolutionSteps(inputShape: inputShape, filters: filters, size: size, stride: stride,
                                     padding: padding, activation: activation)
        precondition(weights.rows == filters && weights.rowLength == steps.patchLength,
                     "LUTConvolution: \(weights.rows)x\(weights.rowLength) codes for \(filters)x\(steps.patchLength) weights")
        precondition(biases.count == filters, "LUTConvolution: \(biases.count) biases for \(filters) filters")
        self.inputs = [input]
        self.steps = steps
        self.weights = weights
        self.biases = biases
        self.blockRows = max(1, min(filters, blockFloats / steps.patchLength))
    }

    public var outputShape: Shape { steps.outputShape }
    public var scratchCount: Int { steps.columnsCount + blockRows * steps.patchLength + steps.multiplyScratchCount }
    public var algorithm: String { "\(weights.type) codes, " + (steps.isPointwise ? "1x1 gemm" : "im2col+gemm") }

    public func forward(_ io: LayerIO) {
        let columns = steps.columns(io.input, scratch: io.scratch)
        let block = io.scratch + steps.columnsCount
        let gemmScratch = block + blockRows * steps.patchLength
        var row = 0
        while row < weights.rows {
            let rows = row ..< min(row + blockRows, weights.rows)
            weights.expand(rows: rows, into: block)
            steps.multiply(rows: rows, weights: UnsafePointer(block), columns: columns, output: io.output,
                           scratch: gemmScratch)
            row = rows.upperBound
        }
        steps.finish(io.output, biases: biases)
    }
}

// MARK: - Building from a model

extension LUTConvolution {
    /// The layer `layer` of `model`, whose weights are `parameters` (codes).
    ///
    /// - Throws: `YOLOError.invalidConfig` when the codes do not fit the layer's shapes.
    init(model: Model, layer index: Int, spec s: ConvolutionSpec, geometry g: LayerGeometry,
         parameters: QuantizedConvolution) throws {
        let patch = g.inputShapes[0].channels * s.size * s.size
        guard parameters.weights.rows == s.filters, parameters.weights.rowLength == patch else {
            throw YOLOError.invalidConfig(path: model.description.path, line: s.line,
                message: "layer \(index) [convolutional]: expects \(s.filters)x\(patch) weights, the model holds \(parameters.weights.rows)x\(parameters.weights.rowLength) codes")
        }
        self.init(input: g.inputs[0], inputShape: g.inputShapes[0], filters: s.filters, size: s.size, stride: s.stride,
                  padding: s.padding, activation: s.activation, weights: parameters.weights, biases: parameters.biases)
    }
}
