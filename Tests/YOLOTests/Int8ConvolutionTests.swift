import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOKernels
import YOLOTestSupport

/// `Int8Convolution` (every int8 kernel this CPU runs, 1 to 3 threads, grids of filter × column parts, the banded
/// and the direct paths) against a plain integer convolution of the same codes through the scalar epilogue (equal bits), and against the float convolution of
/// the original weights and input within the quantization's bound: per output, Σ over taps of
/// `|w|·sᵢ/2 + |x|·s_w/2 + sᵢ·s_w/4` (input rounding, weight rounding, both), times the activation's largest slope
/// (1 for the piecewise-linear ones and logistic, 1.1 for swish and mish), plus `sₒ/2` for a u8 output.
@Suite struct Int8ConvolutionTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let channels: Int, height: Int, width: Int, filters: Int, size: Int, stride: Int, padding: Int
        let activation: Activation
        var testDescription: String { "\(channels)x\(height)x\(width) -> \(filters) \(size)x\(size)/\(stride) pad \(padding) \(activation)" }
    }
    static let cases: [Case] = [
        Case(channels: 3, height: 13, width: 11, filters: 5, size: 3, stride: 1, padding: 1, activation: .leaky),
        Case(channels: 8, height: 9, width: 9, filters: 7, size: 3, stride: 2, padding: 1, activation: .leaky),
        Case(channels: 16, height: 7, width: 6, filters: 13, size: 1, stride: 1, padding: 0, activation: .linear),
        Case(channels: 5, height: 20, width: 31, filters: 70, size: 3, stride: 1, padding: 1, activation: .relu),
        Case(channels: 8, height: 12, width: 17, filters: 13, size: 3, stride: 1, padding: 1, activation: .leaky),
        Case(channels: 8, height: 70, width: 71, filters: 7, size: 3, stride: 2, padding: 1, activation: .linear),
        // Winograd F(2, 3) on AVX2 in chunks of blocks of 16 tiles starting mid-row: 29 blocks, at most 7 a chunk, so 5
        // chunks of 6 (the last one short) at 1 thread, 6 chunks of 5 at 2 and 3.
        Case(channels: 23, height: 40, width: 45, filters: 40, size: 3, stride: 1, padding: 1, activation: .leaky),
        // SiLU and logistic (imported ONNX models): real values through the activation, then the output's scale.
        Case(channels: 8, height: 12, width: 17, filters: 13, size: 3, stride: 1, padding: 1, activation: .swish),
        Case(channels: 16, height: 7, width: 6, filters: 13, size: 1, stride: 1, padding: 0, activation: .swish),
        Case(channels: 16, height: 7, width: 6, filters: 13, size: 1, stride: 1, padding: 0, activation: .logistic),
        Case(channels: 8, height: 9, width: 9, filters: 7, size: 3, stride: 2, padding: 1, activation: .swish),
        // Winograd's transcendental store on odd-sized maps (a partial last tile row and column), several chunks.
        Case(channels: 23, height: 41, width: 45, filters: 40, size: 3, stride: 1, padding: 1, activation: .logistic),
        Case(channels: 6, height: 11, width: 13, filters: 9, size: 3, stride: 1, padding: 1, activation: .mish),
    ]

    /// The float parameters, their int8 version and the input.
    struct Setup {
        let c: Case
        let input: [Float], weights: [Float], biases: [Float]
        let int8: Int8ConvolutionParameters
        var shape: Shape { Shape(channels: c.channels, height: c.height, width: c.width) }

        /// Seeded values, or the `input` and `weights` given.
        init(_ c: Case, outputQuantization: ActivationQuantization?, input: [Float]? = nil, weights: [Float]? = nil) {
            self.c = c
            self.input = input ?? LayerTestSupport.values(c.channels * c.height * c.width, seed: 7).map { 2 * $0 + 0.5 }
            self.weights = weights ?? LayerTestSupport.values(c.filters * c.channels * c.size * c.size, seed: 11).map { $0 * 0.3 }
            let weights = self.weights
            biases = LayerTestSupport.values(c.filters, seed: 13)
            let q = weights.withUnsafeBufferPointer { Int8Weights(quantizing: $0, rows: c.filters) }
            int8 = Int8ConvolutionParameters(weights: q, biases: FloatBuffer(biases), input: ActivationQuantization(covering: -1.5, 2.5),
                                             output: outputQuantization)
        }

        func layer(kernel: Int8KernelFamily, threads: Int, algorithm: ConvolutionPlan.Algorithm, writesBytes: Bool) -> Int8Convolution {
            let plan = ConvolutionPlan(algorithm: algorithm, weights: .float, fusion: nil, maxThreads: threads,
                                       precision: .int8(kernel.name))
            return Int8Convolution(input: -1, inputShape: shape, filters: c.filters, size: c.size, stride: c.stride, padding: c.padding,
                                   activation: c.activation, parameters: int8, plan: plan, kernel: kernel, inputIsFloat: true,
                                   writesBytes: writesBytes)
        }

        /// The plain integer convolution of the codes, through the scalar epilogue: float values, or u8 codes as floats.
        func reference(_ layer: Int8Convolution) -> [Float] {
            let out = layer.outputShape
            let codes = input.map { int8.input.code($0) }
            let values = int8.weights.values
            var result = [Float](repeating: 0, count: out.count)
            let e = layer.epilogue
            for f in 0..<c.filters {
                for oy in 0..<out.height {
                    for ox in 0..<out.width {
                        var acc: Int32 = 0
                        for ch in 0..<c.channels {
                            for ky in 0..<c.size {
                                for kx in 0..<c.size {
                                    let y = oy * c.stride + ky - c.padding, x = ox * c.stride + kx - c.padding
                                    let code = y >= 0 && y < c.height && x >= 0 && x < c.width
                                        ? codes[(ch * c.height + y) * c.width + x] : int8.input.zeroPoint
                                    acc += Int32(values[((f * c.channels + ch) * c.size + ky) * c.size + kx]) * Int32(code)
                                }
                            }
                        }
                        let index = (f * out.height + oy) * out.width + ox
                        result[index] = e.bytes ? Float(e.code(acc, row: f)) : e.real(acc, row: f)
                    }
                }
            }
            return result
        }
    }

    static var kernels: [Int8KernelFamily] { Int8KernelFamily.all.filter(\.isSupported) }

    @Test(arguments: cases)
    func matchesThePlainIntegerConvolution(_ c: Case) {
        for writesBytes in [false, true] {
            let setup = Setup(c, outputQuantization: writesBytes ? ActivationQuantization(covering: -0.5, 3) : nil)
            var first: [Float]?
            // The epilogue is the parameters', the same for every kernel, thread count and split: one reference.
            var expected: [Float]?
            for kernel in Self.kernels {
                for threads in 1...3 {
                    var algorithms: [ConvolutionPlan.Algorithm] = [.gemm(split: .init(filters: 1, columns: threads)),
                                                                   .gemm(split: .init(filters: threads, columns: 1)),
                                                                   .gemm(split: .init(filters: 2, columns: 3)), .gemmBands(rows: 2)]
                    if kernel.kernel.directSweep != nil && c.size == 3 && c.padding == 1 {
                        algorithms += [.int8Direct(split: .columns), .int8Direct(split: .filters)]
                    }
                    if kernel.kernel.storesSums && c.size == 3 && c.stride == 1 && c.padding == 1 {
                        algorithms.append(.int8Winograd(tile: 2))
                        if kernel.kernel.winograd4Output != nil { algorithms.append(.int8Winograd(tile: 4)) }
                    }
                    for split in algorithms {
                        let layer = setup.layer(kernel: kernel, threads: threads, algorithm: split, writesBytes: writesBytes)
                        var output = LayerTestSupport.run(layer, input: setup.input, threads: threads)
                        if writesBytes {
                            output = output.withUnsafeBytes { raw in (0..<layer.outputShape.count).map { Float(raw[$0]) } }
                        }
                        if expected == nil { expected = setup.reference(layer) }
                        let expected = expected!
                        let differing = zip(output, expected).filter { $0.bitPattern != $1.bitPattern }.count
                        #expect(differing == 0, "\(kernel.name) \(threads) threads \(split) bytes \(writesBytes): \(differing) differ")
                        if let first { #expect(output.map(\.bitPattern) == first.map(\.bitPattern)) } else { first = output }
                    }
                }
            }
        }
    }

    /// F(4×4, 3×3) at the edge of its range: every weight of a filter at 127 (or −127) and every input code at 255, so
    /// each sum is 255 · 127 · 9 · channels. With 115 channels that is 33,518,925, just under 2²⁵: the layer runs F(4×4)
    /// and the output transform's `· 9⁻¹ >> 6` modulo 2³² must still give it exactly; with 116 channels (33,810,300) the
    /// layer runs F(2×2) instead. Both equal the plain integer convolution bit for bit.
    @Test(arguments: [(115, "winograd F(4,3)"), (116, "winograd F(2,3)")])
    func winogradTile4AtTheEdgeOfItsRange(_ channels: Int, _ path: String) throws {
        guard let kernel = Self.kernels.first(where: { $0.kernel.winograd4Output != nil }) else { return }
        let c = Case(channels: channels, height: 9, width: 10, filters: 2, size: 3, stride: 1, padding: 1, activation: .linear)
        let taps = channels * 9
        let setup = Setup(c, outputQuantization: nil, input: [Float](repeating: 2.5, count: channels * 90),
                          weights: [Float](repeating: 1, count: taps) + [Float](repeating: -1, count: taps))
        #expect(setup.int8.weights.values.buffer.allSatisfy { abs($0) == 127 })
        #expect(setup.input.allSatisfy { setup.int8.input.code($0) == 255 })
        #expect(Int8WinogradGeometry.fitsTile4(setup.int8.weights.values.buffer, filters: 2, patchLength: taps) == (channels == 115))
        for threads in 1...2 {
            let layer = setup.layer(kernel: kernel, threads: threads, algorithm: .int8Winograd(tile: 4), writesBytes: false)
            #expect(layer.algorithm.contains(path), "\(layer.algorithm)")
            let output = LayerTestSupport.run(layer, input: setup.input, threads: threads)
            let expected = setup.reference(layer)
            #expect(output.map(\.bitPattern) == expected.map(\.bitPattern))
        }
    }

    @Test func winogradChunksShareTheBlocksEvenly() {
        #expect(Int8WinogradGeometry.evenChunkBlocks(blocks: 29, most: 7, threads: 1) == 6)
        #expect(Int8WinogradGeometry.evenChunkBlocks(blocks: 29, most: 7, threads: 2) == 5)
        #expect(Int8WinogradGeometry.evenChunkBlocks(blocks: 7, most: 3, threads: 2) == 2)      // 2 + 2 | 2 + 1
        #expect(Int8WinogradGeometry.evenChunkBlocks(blocks: 100, most: 16, threads: 2) == 13)  // 8 chunks: 52 | 48
        #expect(Int8WinogradGeometry.evenChunkBlocks(blocks: 5, most: 7, threads: 2) == 5)      // one chunk
    }

    @Test(arguments: cases)
    func staysWithinTheQuantizationBoundOfTheFloatConvolution(_ c: Case) throws {
        guard let kernel = Self.kernels.first else { return }
        for q in [nil, ActivationQuantization(covering: -0.5, 3)] {
            let setup = Setup(c, outputQuantization: q)
            let layer = setup.layer(kernel: kernel, threads: 2, algorithm: .gemmBands(rows: 3), writesBytes: q != nil)
            var output = LayerTestSupport.run(layer, input: setup.input, threads: 2)
            if let q { output = output.withUnsafeBytes { raw in (0..<layer.outputShape.count).map { q.value(raw[$0]) } } }
            let (expected, _) = LayerTestSupport.directConvolution(setup.input, shape: setup.shape, weights: setup.weights,
                                                                   biases: setup.biases, filters: c.filters, size: c.size, stride: c.stride,
                                                                   padding: c.padding, activation: c.activation)
            let si = Double(setup.int8.input.scale)
            let plane = layer.outputShape.planeCount
            let taps = c.channels * c.size * c.size
            let weightSums = (0..<c.filters).map { f in (0..<taps).reduce(0.0) { $0 + abs(Double(setup.weights[f * taps + $1])) } }
            // Every output checked; the outputs outside their bound are counted and the first is named (one
            // expectation per run rather than one per output).
            var outside = 0, firstOutside = ""
            for (index, (got, want)) in zip(output, expected).enumerated() {
                let f = index / plane
                let sw = Double(setup.int8.weights.scales[f])
                // Swish's slope reaches 1.0998 (near x = 2.4); logistic's 0.25, the others' 1.
                let slope = c.activation == .swish || c.activation == .mish ? 1.1 : 1
                var bound = slope * (weightSums[f] * si / 2 + Double(taps) * (2.5 * sw / 2 + si * sw / 4)) + 1e-5
                var target = want
                if let q {
                    bound += Double(q.scale) / 2
                    // Clipped outputs may be further off: compare with the clipped value.
                    let (low, high) = q.range
                    target = min(max(want, low), high)
                }
                if !(abs(Double(got) - Double(target)) <= bound) {
                    if outside == 0 { firstOutside = "output \(index): \(got) vs \(want), bound \(bound)" }
                    outside += 1
                }
            }
            #expect(outside == 0, "\(outside) of \(output.count) outputs outside their bound; first: \(firstOutside)")
        }
    }
}
