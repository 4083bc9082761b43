import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct LUTConvolutionTests {
    struct Case: Sendable, CustomStringConvertible {
        var channels, filters, size, stride, padding, height, width: Int
        var description: String { "\(channels)->\(filters) \(size)x\(size)/\(stride) pad \(padding) on \(width)x\(height)" }
    }

    /// Pointwise, 3×3 padded, strided, odd sizes, and a layer big enough to need several weight blocks.
    static let cases: [Case] = [
        Case(channels: 3, filters: 5, size: 1, stride: 1, padding: 0, height: 7, width: 9),
        Case(channels: 3, filters: 8, size: 3, stride: 1, padding: 1, height: 10, width: 6),
        Case(channels: 6, filters: 4, size: 3, stride: 2, padding: 1, height: 9, width: 11),
        Case(channels: 5, filters: 7, size: 5, stride: 1, padding: 0, height: 8, width: 8),
        Case(channels: 16, filters: 40, size: 3, stride: 1, padding: 1, height: 5, width: 4),
    ]

    /// The codes-resident layer against a plain `Convolution` holding the same weights expanded,
    /// with one block for the whole layer and with blocks of 6 filters (one GEMM panel; the last block
    /// partial where the filters are not a multiple of 6). Both run the same im2col; the GEMM runs on
    /// row blocks instead of all rows (with OpenBLAS that can change how it blocks the sum), so outputs
    /// are compared to 1e-5 relative.
    @Test(arguments: cases, LUTType.allCases)
    func matchesConvolutionWithExpandedWeights(shape c: Case, type: LUTType) {
        let inputShape = Shape(channels: c.channels, height: c.height, width: c.width)
        let patch = c.channels * c.size * c.size
        let codes = LUTQuantizer(type: type, method: .linear).quantize(randomWeights(rows: c.filters, rowLength: patch, seed: 4), rows: c.filters)
        var random = SeededRandom(seed: 8)
        let biases = FloatBuffer(random.floats(c.filters))
        let whole = LUTConvolution(input: -1, inputShape: inputShape, filters: c.filters, size: c.size, stride: c.stride,
                                   padding: c.padding, activation: .leaky, weights: codes, biases: biases)
        let blocked = LUTConvolution(input: -1, inputShape: inputShape, filters: c.filters, size: c.size, stride: c.stride,
                                     padding: c.padding, activation: .leaky, weights: codes, biases: biases, blockFloats: 6 * patch + 1)
        #expect(whole.blockRows == c.filters && blocked.blockRows == min(6, c.filters))
        let plain = Convolution(input: -1, inputShape: inputShape, filters: c.filters, size: c.size, stride: c.stride,
                                padding: c.padding, activation: .leaky, weights: codes.expanded(), biases: biases,
                                algorithm: .im2col)
        let input = random.floats(inputShape.count)
        let b = runLayer(plain, inputs: [input])
        for lut in [whole, blocked] {
            #expect(lut.outputShape == plain.outputShape)
            let a = runLayer(lut, inputs: [input])
            let worst = a.indices.map { abs(a[$0] - b[$0]) / max(1, abs(b[$0])) }.max()!
            #expect(worst <= 1e-5, "\(c) \(type), blocks of \(lut.blockRows): relative difference \(worst)")
        }
    }
}
