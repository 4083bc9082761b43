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
/// The direct path (`ConvolutionPlan.Algorithm.int8Direct`, 3×3 stride 1 or 2, padding 1) unfolds nothing: the
/// input is packed once into planes of channel quads (at stride 2, one per quad and phase: even or odd rows and
/// columns) with one pad column between rows (`Int8Kernel.PackQuads`, rows the output's `width + 1` quads apart),
/// so the 64 output positions of a tile are 64 consecutive quads of a plane for every tap, read in place at the
/// tap's offset (`Int8Kernel.DirectSweep`; the weights packed in the matching order of
/// k: channel quad, tap, channel within the quad). The product covers the padded grid (`height × (width + 1)`
/// positions, whole tile blocks) into scratch; the rows of the map are then copied to the output.
///
/// Scratch (bytes, each part 64-byte aligned): `[quantized input | columns | per worker: Int8GEMM scratch]`, or on
/// the direct path `[quantized input | quad planes | padded-grid output]`.
@_spi(Engine) public struct Int8Convolution: Layer {
    public let inputs: [Int]
    let steps: ConvolutionSteps
    public let plan: ConvolutionPlan
    let kernel: Int8KernelFamily
    let packed: Int8PackedMatrix
    /// Per filter: `−zᵢ · Σₖ w_q`, the multiplier and the bias of the epilogue (`Int8Epilogue`).
    let compensation: SharedBuffer<Int32>
    let multipliers: FloatBuffer
    /// `1/sₒ` of a u8 output, applied after a transcendental activation (`Int8Epilogue.outputReciprocal`).
    let outputReciprocal: Float
    let biases: FloatBuffer
    /// The input's quantization.
    let input: ActivationQuantization
    /// True when the input tensor is float and this layer quantizes it.
    let quantizesInput: Bool
    /// The output's quantization; nil when the layer writes float.
    let output: ActivationQuantization?
    /// The direct path's geometry, nil on the GEMM paths.
    let direct: Direct?
    /// The Winograd path's geometry and transformed weights (`Int8Winograd.swift`), nil on the other paths.
    let winograd: Int8WinogradGeometry?

    /// The geometry of the direct path (see the type's description).
    struct Direct {
        /// Quads of channels, the stride (1 or 2: a plane per quad and phase), the distance of two rows (the output's
        /// `width + 1`), tile blocks of the padded grid and quads per plane (covers every quad a block's taps read,
        /// 16-quad aligned).
        let quads: Int, stride: Int, pitch: Int, blocks: Int, planeStride: Int
        /// Per step (channel quad × tap): the byte offset of its quads from the grid position's.
        let offsets: SharedBuffer<Int32>

        init(steps: ConvolutionSteps, tileColumns: Int) {
            let (input, output) = (steps.inputShape, steps.outputShape)
            quads = (input.channels + 3) / 4
            stride = steps.stride
            pitch = output.width + 1
            blocks = (output.height * pitch + tileColumns - 1) / tileColumns
            planeStride = (max((output.height + 2) * pitch + 2, blocks * tileColumns + 2 * pitch + 2) + 15) / 16 * 16
            let (quads, stride, pitch, planeStride) = (quads, stride, pitch, planeStride)
            // Output (y, x) reads input (s·y + ky − 1, s·x + kx − 1): the pixel of phase (a, b) at (y + dy, x + dx), with
            // (a, dy) = (0, ky − 1) at stride 1; at stride 2 (1, −1), (0, 0), (1, 0) for ky = 0, 1, 2 (the same for x).
            func phase(_ k: Int) -> (Int, Int) { stride == 1 ? (0, k - 1) : k == 1 ? (0, 0) : (1, k == 0 ? -1 : 0) }
            offsets = SharedBuffer((0..<quads * 9).map { s in
                let (q, tap) = s.quotientAndRemainder(dividingBy: 9)
                let (a, dy) = phase(tap / 3), (b, dx) = phase(tap % 3)
                let plane = q * stride * stride + a * stride + b
                return Int32(4 * (plane * planeStride + (dy + 1) * pitch + dx + 1))
            })
        }

        /// Bytes of the quad planes.
        var planesBytes: Int { (quads * stride * stride * planeStride * 4 + 63) / 64 * 64 }
        /// Columns of one row of the padded-grid output.
        func gridColumns(_ tileColumns: Int) -> Int { blocks * tileColumns }

        /// `values` (`rows × channels·9`, k = channel·9 + tap) in the direct path's order of k (channel quad, tap,
        /// channel within the quad), the channels past the last padded with zero weights.
        func reordered(_ values: UnsafeBufferPointer<Int8>, rows: Int, channels: Int) -> [Int8] {
            let k = quads * 36
            var result = [Int8](repeating: 0, count: rows * k)
            for r in 0..<rows {
                for s in 0..<quads * 9 {
                    let (q, tap) = s.quotientAndRemainder(dividingBy: 9)
                    for g in 0..<4 where 4 * q + g < channels {
                        result[r * k + 4 * s + g] = values[r * channels * 9 + (4 * q + g) * 9 + tap]
                    }
                }
            }
            return result
        }
    }

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
        if case .int8Direct = plan.algorithm {
            precondition(size == 3 && (stride == 1 || stride == 2) && padding == 1 && kernel.kernel.directSweep != nil,
                         "Int8Convolution: the direct path for a \(size)x\(size)/\(stride) layer on \(kernel.name)")
            let direct = Direct(steps: steps, tileColumns: kernel.kernel.tileColumns)
            self.direct = direct
            let values = direct.reordered(w.values.buffer, rows: filters, channels: inputShape.channels)
            self.packed = values.withUnsafeBufferPointer {
                Int8PackedMatrix($0, rows: filters, columns: direct.quads * 36, kernel: kernel)
            }
            self.winograd = nil
        } else if case .int8Winograd(let tile) = plan.algorithm {
            let fits = tile == 2 || Int8WinogradGeometry.fitsTile4(w.values.buffer, filters: filters, patchLength: steps.patchLength)
            let winograd = Int8WinogradGeometry(steps: steps, weights: w.values.buffer, tile: fits ? tile : 2, kernel: kernel,
                                                threads: plan.maxThreads)
            self.winograd = winograd
            self.direct = nil
            self.packed = winograd.weights[0]
        } else {
            self.direct = nil
            self.winograd = nil
            self.packed = Int8PackedMatrix(w.values.buffer, rows: filters, columns: steps.patchLength, kernel: kernel)
        }
        self.input = parameters.input
        self.quantizesInput = inputIsFloat
        self.output = writesBytes ? parameters.output : nil
        let zero = Int32(parameters.input.zeroPoint)
        compensation = SharedBuffer(w.rowSums().map { -zero * $0 })
        // Scales combined in Double, rounded once: the same Float on every machine. A piecewise-linear
        // activation commutes with the division by the output's scale, so it is folded in here; the others
        // (logistic, swish, mish) take real values, and the epilogue divides after them (`Int8Epilogue`).
        let inputScale = Double(parameters.input.scale)
        let outputScale = Double(self.output?.scale ?? 1)
        let folded = activation.isPiecewiseLinear ? outputScale : 1
        multipliers = FloatBuffer((0..<filters).map { Float(Double(w.scales[$0]) * inputScale / folded) })
        biases = FloatBuffer((0..<filters).map { Float(Double(parameters.biases[$0]) / folded) })
        outputReciprocal = Float(1 / outputScale)
    }

    public var outputShape: Shape { steps.outputShape }
    public var filters: Int { steps.outputShape.channels }
    public var maxThreads: Int { plan.maxThreads }
    public var ownedBytes: Int {
        (winograd?.weights.dropFirst().reduce(0) { $0 + $1.storage.count } ?? 0)
            + packed.storage.count + compensation.count * MemoryLayout<Int32>.stride + multipliers.count * MemoryLayout<Float>.stride
            + (direct?.offsets.count ?? 0) * MemoryLayout<Int32>.stride
    }

    public var algorithm: String {
        let path = direct != nil ? "direct" : winograd.map { "winograd F(\($0.tile),3)" } ?? (steps.isPointwise ? "1x1 gemm" : "im2col+gemm")
        return "int8 " + path + " (\(kernel.name.rawValue))"
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
        if let direct { return direct.planesBytes }
        if let winograd { return winograd.scratchBytes(threads: maxThreads) }
        guard let bandRows else { return (steps.columnsCount + 63) / 64 * 64 }
        return (steps.patchLength * bandRows * steps.outputShape.width + 63) / 64 * 64 * maxThreads
    }
    var workerBytes: Int { Int8GEMM.scratchBytes(k: steps.patchLength, kernel: kernel.kernel) }
    /// Bytes of the direct path's padded-grid output.
    var gridBytes: Int {
        guard let direct else { return 0 }
        return (filters * direct.gridColumns(kernel.kernel.tileColumns) * epilogue.outputBytes + 63) / 64 * 64
    }
    public var scratchCount: Int {
        (quantizedBytes + columnsBytes + (direct != nil ? gridBytes : winograd != nil ? 0 : workerBytes * maxThreads) + 3) / 4
    }

    /// The epilogue of every filter.
    var epilogue: Int8Epilogue {
        Int8Epilogue(compensation: compensation.pointer, multipliers: multipliers.pointer, biases: biases.pointer,
                     activation: steps.activation.code, zeroPoint: Float(output?.zeroPoint ?? 0), bytes: output != nil,
                     outputReciprocal: outputReciprocal)
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
        if let direct {
            return forwardDirect(source, direct, into: UnsafeMutableRawPointer(io.output), scratch: scratch + quantizedBytes,
                                 threads: threads)
        }
        if let winograd {
            return forwardWinograd(source, winograd, into: UnsafeMutableRawPointer(io.output), scratch: scratch + quantizedBytes,
                                   threads: threads)
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

    /// The direct path: the quad planes, then the product over the padded grid and the map's pixels copied out.
    func forwardDirect(_ source: UnsafePointer<UInt8>, _ d: Direct, into output: UnsafeMutableRawPointer,
                       scratch: UnsafeMutableRawPointer, threads: Int) {
        let (shape, pad, k) = (steps.inputShape, input.zeroPoint, kernel.kernel)
        let (planes, grid) = (scratch, scratch + d.planesBytes)
        let pack = k.packQuads!
        Parallel.forRanges(d.quads * d.stride * d.stride, threads: threads) { planeRange in
            pack(source, shape.channels, shape.height, shape.width, pad, d.stride, d.pitch, planeRange.lowerBound,
                 planeRange.upperBound, d.planeStride, planes)
        }
        let (packed, epilogue) = (packed, epilogue)
        let ldc = d.gridColumns(k.tileColumns)
        let byColumns: Bool
        if case .int8Direct(.filters) = plan.algorithm { byColumns = false } else { byColumns = true }
        let (height, width, outputBytes) = (outputShape.height, outputShape.width, epilogue.outputBytes)
        // Each worker copies out the map's pixels among the grid positions it computed, in the same region.
        Parallel.forRanges(threads, threads: threads) { workers in
            for worker in workers {
                let rows = byColumns ? 0..<packed.rows : Parallel.alignedPart(worker, of: threads, count: packed.rows, alignment: k.tileRows)
                let blocks = byColumns ? Parallel.part(worker, of: threads, count: d.blocks) : 0..<d.blocks
                guard !rows.isEmpty, !blocks.isEmpty else { continue }
                Int8GEMM.multiplyDirect(packed, rows: rows, b: planes, offsets: d.offsets.pointer, blocks: blocks, c: grid, ldc: ldc,
                                        epilogue: epilogue)
                let positions = blocks.lowerBound * k.tileColumns ..< min(blocks.upperBound * k.tileColumns, height * d.pitch)
                guard !positions.isEmpty else { continue }
                for f in rows {
                    for y in positions.lowerBound / d.pitch ... (positions.upperBound - 1) / d.pitch {
                        let start = max(positions.lowerBound, y * d.pitch), end = min(positions.upperBound, y * d.pitch + width)
                        guard start < end else { continue }
                        (output + (f * height * width + y * width + start - y * d.pitch) * outputBytes)
                            .copyMemory(from: grid + (f * ldc + start) * outputBytes, byteCount: (end - start) * outputBytes)
                    }
                }
            }
        }
    }

    /// The banded path: the output rows cut into one contiguous part per worker, each part into bands of
    /// `bandRows` rows whose unfolded columns stay in the worker's L2 while every filter multiplies them. The
    /// threads claim the bands in order (`BandPieces`).
    func forwardBands(_ source: UnsafePointer<UInt8>, bandRows band: Int, into output: UnsafeMutableRawPointer,
                      scratch: UnsafeMutableRawPointer, threads: Int) {
        let (outH, outW) = (steps.outputShape.height, steps.outputShape.width)
        let plane = outH * outW
        let workers = min(threads, (outH + band - 1) / band)
        let bandBytes = columnsBytes / maxThreads
        let (steps, pad, packed, epilogue, workerBytes) = (steps, input.zeroPoint, packed, epilogue, workerBytes)
        let gemmScratch = scratch + columnsBytes
        let bands = BandPieces(count: outH, parts: workers, band: band, aligned: false)
        Parallel.forClaimed(bands.pieces, threads: workers) { worker, piece in
            let columns = (scratch + worker * bandBytes).assumingMemoryBound(to: UInt8.self)
            let rows = bands.rows(piece)
            guard !rows.isEmpty else { return }
            Im2col.unfoldBytes(source, shape: steps.inputShape, size: steps.size, stride: steps.stride, padding: steps.padding,
                               pad: pad, outputRows: rows, outputWidth: outW, rows: 0..<steps.patchLength, into: columns)
            let n = rows.count * outW
            Int8GEMM.multiply(packed, rows: 0..<packed.rows, b: columns, ldb: n, n: n,
                              c: output + rows.lowerBound * outW * epilogue.outputBytes, ldc: plane, epilogue: epilogue,
                              scratch: gemmScratch + worker * workerBytes)
        }
    }

    /// The product of the unfolded `columns` into `output`: with several threads cut into the pieces of the
    /// plan's grid of filter × column parts, which the threads claim; with one, one product.
    func multiply(_ columns: UnsafePointer<UInt8>, into output: UnsafeMutableRawPointer, scratch: UnsafeMutableRawPointer,
                  threads: Int) {
        let plane = outputShape.planeCount
        let (packed, epilogue, workerBytes) = (packed, epilogue, workerBytes)
        let outputBytes = epilogue.outputBytes
        let k = kernel.kernel
        var grid = ConvolutionPlan.Split.whole
        if threads > 1, case .gemm(let split) = plan.algorithm { grid = split }
        Parallel.forClaimed(grid.pieces, threads: threads) { worker, piece in
            let (rows, span) = grid.piece(piece, rows: packed.rows, columns: plane, rowAlignment: k.tileRows,
                                          columnAlignment: k.tileColumns)
            guard !rows.isEmpty, !span.isEmpty else { return }
            Int8GEMM.multiply(packed, rows: rows, b: columns + span.lowerBound, ldb: plane, n: span.count,
                              c: output + span.lowerBound * outputBytes, ldc: plane, epilogue: epilogue,
                              scratch: scratch + worker * workerBytes)
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
