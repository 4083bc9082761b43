/// A convolution whose weights stay in memory as LUT codes (`WeightResidency.codes`).
///
/// Before its matrix product it expands a block of output channels' weights from codes straight into
/// the GEMM's packed layout in workspace scratch, multiplies that block (bias and activation fused),
/// and moves on to the next, so at most `blockRows × patchLength` float weights exist at once (≤ 1 MB),
/// whatever the layer's size. Otherwise it runs the same im2col and GEMM as `Convolution`'s plain
/// path and gives the same result as a `Convolution` holding the expanded weights on that path.
///
/// Scratch layout: `[columns | per worker: packed weight block, one expanded row, GEMM scratch]`,
/// each part rounded up to 16 floats. Blocks are split over `LayerIO.threads` workers.
struct LUTConvolution: Layer {
    let inputs: [Int]
    let steps: ConvolutionSteps
    /// `filters × inChannels·size²` codes.
    let weights: LUTWeights
    /// `filters` floats.
    let biases: FloatBuffer
    /// Output channels expanded and multiplied together.
    let blockRows: Int
    /// The most threads a pass gives this layer: its scratch holds that many workers' parts.
    let maxThreads: Int

    /// Floats of expanded weights a block may hold: 262,144 (1 MB).
    static let blockFloats = 262_144

    /// - Parameter blockFloats: the most expanded weights held at once (default `LUTConvolution.blockFloats`);
    ///   a block always holds at least one output channel.
    /// - Parameter threads: the most threads a pass will give the layer (`maxThreads`).
    /// - Precondition: the code and bias counts match the shapes (the model-file reader checks this).
    init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int,
                activation: Activation, weights: LUTWeights, biases: FloatBuffer, blockFloats: Int = LUTConvolution.blockFloats,
         threads: Int = Threading.defaultThreadCount) {
        let steps = ConvolutionSteps(inputShape: inputShape, filters: filters, size: size, stride: stride,
                                     padding: padding, activation: activation)
        precondition(weights.rows == filters && weights.rowLength == steps.patchLength,
                     "LUTConvolution: \(weights.rows)x\(weights.rowLength) codes for \(filters)x\(steps.patchLength) weights")
        precondition(biases.count == filters, "LUTConvolution: \(biases.count) biases for \(filters) filters")
        self.inputs = [input]
        self.steps = steps
        self.weights = weights
        self.biases = biases
        self.maxThreads = max(1, threads)
        self.blockRows = ConvolutionPlanner.lutBlockRows(
            ConvolutionPlanner.Layer(input: inputShape, filters: filters, size: size, stride: stride, padding: padding),
            family: .active, blockFloats: blockFloats)
    }

    var outputShape: Shape { steps.outputShape }
    var scratchCount: Int { lineRounded(steps.columnsCount) + workerScratch * maxThreads }
    var algorithm: String { "\(weights.type) codes, " + (steps.isPointwise ? "1x1 gemm" : "im2col+gemm") }

    /// Floats of one packed weight block (`blockRows` rows, panel padding included).
    var blockCount: Int { lineRounded(PackedMatrix.Layout(rows: blockRows, columns: steps.patchLength).matrixStride) }
    /// Floats of the row buffer codes are expanded into.
    var rowCount: Int { lineRounded(steps.patchLength) }
    /// One worker's scratch: a packed block, a row, the GEMM's scratch.
    var workerScratch: Int { blockCount + rowCount + GEMM.scratchCount }

    /// The workers claim runs of blocks of filters, each expanding and multiplying in its own scratch.
    func forward(_ io: LayerIO) {
        let columns = steps.columns(io.input, scratch: io.scratch)
        let scratch = io.scratch + lineRounded(steps.columnsCount)
        let (k, plane) = (steps.patchLength, steps.outputShape.planeCount)
        let output = io.output
        let blocks = (weights.rows + blockRows - 1) / blockRows
        Parallel.forClaimedRanges(blocks, threads: min(io.threads, maxThreads)) { worker, range in
            let block = scratch + worker * workerScratch
            let row = block + blockCount
            let gemmScratch = row + rowCount
            for index in range {
                let first = index * blockRows
                let count = min(blockRows, weights.rows - first)
                let layout = PackedMatrix.Layout(rows: count, columns: k)
                for r in 0..<count {
                    weights.expand(rows: first + r ..< first + r + 1, into: row)
                    layout.packRow(row, at: r, into: block)
                }
                GEMM.multiply(packed: block, m: count, k: k, b: columns, ldb: plane, n: plane, c: output + first * plane,
                              ldc: plane, bias: biases.pointer + first, activation: steps.activation, scratch: gemmScratch)
            }
        }
    }
}

// MARK: - Building from a model

extension LUTConvolution {
    /// The layer `layer` of `model`, whose weights are `parameters` (codes).
    ///
    /// - Throws: `YOLOError.invalidConfig` when the codes do not fit the layer's shapes.
    init(model: Model, layer index: Int, spec s: ConvolutionSpec, geometry g: LayerGeometry,
         parameters: QuantizedConvolution, threads: Int) throws {
        let patch = g.inputShapes[0].channels * s.size * s.size
        guard parameters.weights.rows == s.filters, parameters.weights.rowLength == patch else {
            throw YOLOError.invalidConfig(path: model.description.path, line: s.line,
                message: "layer \(index) [convolutional]: expects \(s.filters)x\(patch) weights, the model holds \(parameters.weights.rows)x\(parameters.weights.rowLength) codes")
        }
        self.init(input: g.inputs[0], inputShape: g.inputShapes[0], filters: s.filters, size: s.size, stride: s.stride,
                  padding: s.padding, activation: s.activation, weights: parameters.weights, biases: parameters.biases,
                  threads: threads)
    }
}
