import YOLOKernels

/// A convolution computed in int8 (`ConvolutionPlan.Precision.int8`): u8 activations × s8 weights, summed
/// exactly in s32 by the plan's int8 kernel (`Int8KernelFamily`), then bias, activation and either a requantized
/// u8 store or a float store, in registers (`Int8Epilogue`).
///
/// Steps: the input, when float, is quantized into scratch (`input`'s quantization); im2col on bytes (none
/// for a 1×1 stride-1 layer), padding with the input's zero point; the product split over the workers by
/// a grid of filter × column parts (`ConvolutionPlan.Split`). Integer sums and one epilogue per element make the
/// result independent of the split, the thread count and the kernel.
///
/// Scratch (bytes, each part 64-byte aligned): `[quantized input | columns | per worker: Int8GEMM scratch]`.
@_spi(Engine) public struct Int8Convolution: Layer {
    public let inputs: [Int]
    let steps: ConvolutionSteps
    public let plan: ConvolutionPlan
    let kernel: Int8KernelFamily
    let packed: Int8PackedMatrix
    /// Per filter: `−zᵢ · Σₖ w_q`, the multiplier and the bias of the epilogue (`Int8Epilogue`).
    let compensation: SharedBuffer<Int32>
    let multipliers: FloatBuffer
    let biases: FloatBuffer
    /// The input's quantization.
    let input: ActivationQuantization
    /// True when the input tensor is float and this layer quantizes it.
    let quantizesInput: Bool
    /// The output's quantization; nil when the layer writes float.
    let output: ActivationQuantization?

    /// - Parameters:
    ///   - inputIsFloat: the input tensor is float (the layer quantizes it), else u8 in `parameters.input`.
    ///   - writesBytes: the output is u8 in `parameters.output` (which must be set), else float.
    /// - Precondition: the weights fit the shapes (the loaders check user files); the plan is an int8 one.
    init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int, activation: Activation,
         parameters: Int8ConvolutionParameters, plan: ConvolutionPlan, kernel: Int8KernelFamily,
         inputIsFloat: Bool, writesBytes: Bool) {
        let steps = ConvolutionSteps(inputShape: inputShape, filters: filters, size: size, stride: stride, padding: padding,
                                     activation: activation)
        let w = parameters.weights
        precondition(w.rows == filters && w.rowLength == steps.patchLength,
                     "Int8Convolution: \(w.rows)x\(w.rowLength) weights for \(filters)x\(steps.patchLength)")
        precondition(plan.precision == .int8(kernel.name), "Int8Convolution: a plan for \(plan.precision)")
        precondition(!writesBytes || parameters.output != nil, "Int8Convolution: u8 output without its quantization")
        self.inputs = [input]
        self.steps = steps
        self.plan = plan
        self.kernel = kernel
        self.packed = Int8PackedMatrix(w.values.buffer, rows: filters, columns: steps.patchLength, kernel: kernel)
        self.input = parameters.input
        self.quantizesInput = inputIsFloat
        self.output = writesBytes ? parameters.output : nil
        let zero = Int32(parameters.input.zeroPoint)
        compensation = SharedBuffer(w.rowSums().map { -zero * $0 })
        // Scales combined in Double, rounded once: the same Float on every machine.
        let inputScale = Double(parameters.input.scale)
        let outputScale = Double(self.output?.scale ?? 1)
        multipliers = FloatBuffer((0..<filters).map { Float(Double(w.scales[$0]) * inputScale / outputScale) })
        biases = FloatBuffer((0..<filters).map { Float(Double(parameters.biases[$0]) / outputScale) })
    }

    public var outputShape: Shape { steps.outputShape }
    public var filters: Int { steps.outputShape.channels }
    public var maxThreads: Int { plan.maxThreads }
    public var ownedBytes: Int {
        packed.storage.count + compensation.count * MemoryLayout<Int32>.stride + multipliers.count * MemoryLayout<Float>.stride
    }

    public var algorithm: String {
        "int8 " + (steps.isPointwise ? "1x1 gemm" : "im2col+gemm") + " (\(kernel.name.rawValue))"
    }

    /// Output rows per band on the banded path (`ConvolutionPlan.Algorithm.gemmBands`), else nil.
    var bandRows: Int? {
        if case .gemmBands(let rows) = plan.algorithm { return rows }
        return nil
    }

    /// Bytes of the quantized input and of the unfolded columns (the whole map's, or each worker's band), 64-byte
    /// rounded; 0 when not needed.
    var quantizedBytes: Int { quantizesInput ? (steps.inputShape.count + 63) / 64 * 64 : 0 }
    var columnsBytes: Int {
        guard let bandRows else { return (steps.columnsCount + 63) / 64 * 64 }
        return (steps.patchLength * bandRows * steps.outputShape.width + 63) / 64 * 64 * maxThreads
    }
    var workerBytes: Int { Int8GEMM.scratchBytes(k: steps.patchLength, kernel: kernel.kernel) }
    public var scratchCount: Int { (quantizedBytes + columnsBytes + workerBytes * maxThreads) / 4 }

    /// The epilogue of every filter.
    var epilogue: Int8Epilogue {
        Int8Epilogue(compensation: compensation.pointer, multipliers: multipliers.pointer, biases: biases.pointer,
                     activation: steps.activation.code, zeroPoint: Float(output?.zeroPoint ?? 0), bytes: output != nil)
    }

    public func forward(_ io: LayerIO) {
        let scratch = UnsafeMutableRawPointer(io.scratch)
        let threads = min(io.threads, maxThreads)
        var source = UnsafeRawPointer(io.input).assumingMemoryBound(to: UInt8.self)
        if quantizesInput {
            let (values, target, q, quantize) = (io.input, scratch.assumingMemoryBound(to: UInt8.self), input, kernel.kernel.quantize)
            Parallel.forRanges(steps.inputShape.count, threads: threads) { range in
                quantize(range.count, values + range.lowerBound, q.reciprocal, Float(q.zeroPoint), target + range.lowerBound)
            }
            source = UnsafePointer(target)
        }
        if let bandRows {
            return forwardBands(source, bandRows: bandRows, into: UnsafeMutableRawPointer(io.output),
                                scratch: scratch + quantizedBytes, threads: threads)
        }
        var columns = source
        if !steps.isPointwise {
            let target = (scratch + quantizedBytes).assumingMemoryBound(to: UInt8.self)
            let (steps, pad, image) = (steps, input.zeroPoint, source)
            Parallel.forRanges(steps.patchLength, threads: threads) { rows in
                Im2col.unfoldBytes(image, shape: steps.inputShape, size: steps.size, stride: steps.stride,
                                   padding: steps.padding, pad: pad, outputRows: 0..<steps.outputShape.height,
                                   outputWidth: steps.outputShape.width, rows: rows, into: target)
            }
            columns = UnsafePointer(target)
        }
        multiply(columns, into: UnsafeMutableRawPointer(io.output), scratch: scratch + quantizedBytes + columnsBytes,
                 threads: threads)
    }

    /// The banded path: the output rows cut into one contiguous part per worker, each part into bands of
    /// `bandRows` rows whose unfolded columns stay in the worker's L2 while every filter multiplies them.
    func forwardBands(_ source: UnsafePointer<UInt8>, bandRows band: Int, into output: UnsafeMutableRawPointer,
                      scratch: UnsafeMutableRawPointer, threads: Int) {
        let (outH, outW) = (steps.outputShape.height, steps.outputShape.width)
        let plane = outH * outW
        let workers = min(threads, (outH + band - 1) / band)
        let bandBytes = columnsBytes / maxThreads
        let (steps, pad, packed, epilogue, workerBytes) = (steps, input.zeroPoint, packed, epilogue, workerBytes)
        let gemmScratch = scratch + columnsBytes
        Parallel.forWorkers(outH, threads: workers) { worker, part in
            let columns = (scratch + worker * bandBytes).assumingMemoryBound(to: UInt8.self)
            for y0 in Swift.stride(from: part.lowerBound, to: part.upperBound, by: band) {
                let rows = y0 ..< min(y0 + band, part.upperBound)
                Im2col.unfoldBytes(source, shape: steps.inputShape, size: steps.size, stride: steps.stride, padding: steps.padding,
                                   pad: pad, outputRows: rows, outputWidth: outW, rows: 0..<steps.patchLength, into: columns)
                let n = rows.count * outW
                Int8GEMM.multiply(packed, rows: 0..<packed.rows, b: columns, ldb: n, n: n,
                                  c: output + y0 * outW * epilogue.outputBytes, ldc: plane, epilogue: epilogue,
                                  scratch: gemmScratch + worker * workerBytes)
            }
        }
    }

    /// The product of the unfolded `columns` into `output`: with several threads cut into the plan's grid of
    /// filter × column parts, dealt out to `threads` workers; with one, one product.
    func multiply(_ columns: UnsafePointer<UInt8>, into output: UnsafeMutableRawPointer, scratch: UnsafeMutableRawPointer,
                  threads: Int) {
        let plane = outputShape.planeCount
        let (packed, epilogue, workerBytes) = (packed, epilogue, workerBytes)
        let outputBytes = epilogue.outputBytes
        let k = kernel.kernel
        var grid = ConvolutionPlan.Split.whole
        if threads > 1, case .gemm(let split) = plan.algorithm { grid = split }
        Parallel.forWorkers(grid.parts, threads: threads) { worker, parts in
            let own = scratch + worker * workerBytes
            for part in parts {
                let rows = Parallel.alignedPart(part / grid.columns, of: grid.filters, count: packed.rows, alignment: k.tileRows)
                let span = Parallel.alignedPart(part % grid.columns, of: grid.columns, count: plane, alignment: k.tileColumns)
                guard !rows.isEmpty, !span.isEmpty else { continue }
                Int8GEMM.multiply(packed, rows: rows, b: columns + span.lowerBound, ldb: plane, n: span.count,
                                  c: output + span.lowerBound * outputBytes, ldc: plane, epilogue: epilogue, scratch: own)
            }
        }
    }
}

// MARK: - Building from a model

extension Int8Convolution {
    /// Layer `index` of `model` (a `ConvolutionSpec` at `geometry`), from its int8 parameters.
    ///
    /// - Throws: `YOLOError.invalidConfig` when the weights do not fit the layer's shapes.
    init(model: Model, layer index: Int, spec s: ConvolutionSpec, geometry g: LayerGeometry, parameters: Int8ConvolutionParameters,
         plan: ConvolutionPlan, kernel: Int8KernelFamily, inputIsFloat: Bool, writesBytes: Bool) throws {
        let patch = g.inputShapes[0].channels * s.size * s.size
        guard parameters.weights.rows == s.filters, parameters.weights.rowLength == patch else {
            throw YOLOError.invalidConfig(path: model.description.path, line: s.line,
                message: "layer \(index) [convolutional]: expects \(s.filters)x\(patch) weights, the model holds \(parameters.weights.rows)x\(parameters.weights.rowLength) int8 values")
        }
        self.init(input: g.inputs[0], inputShape: g.inputShapes[0], filters: s.filters, size: s.size, stride: s.stride,
                  padding: s.padding, activation: s.activation, parameters: parameters, plan: plan, kernel: kernel,
                  inputIsFloat: inputIsFloat, writesBytes: writesBytes)
    }
}
