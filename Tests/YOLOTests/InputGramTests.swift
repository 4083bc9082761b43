import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct InputGramTests {
    /// One 3×3 convolution on a 9×7×3 input.
    func model() throws -> Model {
        let description = try parse("""
            [net]
            width=9
            height=7
            channels=3
            [convolutional]
            filters=4
            size=3
            stride=1
            pad=1
            activation=leaky
            """)
        let parameters = ConvolutionParameters(weights: FloatBuffer(randomWeights(rows: 4, rowLength: 27, seed: 51)),
                                               biases: FloatBuffer([Float](repeating: 0, count: 4)))
        return Model(description: description, convolutions: [0: parameters], labels: [])
    }

    /// The gram is the mean of x xᵀ over the im2col columns of all inputs (computed here directly in
    /// Float64; tolerance 1e-5 for the Float32 BLAS sums of 126 products of values in [0, 1]).
    @Test func gramIsTheMeanOuterProductOfIm2colColumns() throws {
        let model = try model()
        var random = SeededRandom(seed: 52)
        let inputs = (0..<2).map { _ in Tensor(shape: model.description.inputShape, values: random.floats(3 * 63, 0, 1)) }
        let gram = try #require(try InputGram.collect(model: model, inputs: inputs, layers: [0])[0])
        var expected = [Double](repeating: 0, count: 27 * 27)
        for input in inputs {
            var columns = [Float](repeating: 0, count: 27 * 63)
            input.values.withUnsafeBufferPointer { source in
                columns.withUnsafeMutableBufferPointer {
                    Im2col.unfold(source.baseAddress!, shape: model.description.inputShape, size: 3, stride: 1, padding: 1,
                                  outputHeight: 7, outputWidth: 9, into: $0.baseAddress!)
                }
            }
            for i in 0..<27 { for j in 0..<27 { for p in 0..<63 {
                expected[i * 27 + j] += Double(columns[i * 63 + p]) * Double(columns[j * 63 + p]) / 126
            } } }
        }
        #expect(gram.count == 27 * 27)
        for k in 0..<27 * 27 { #expect(abs(Double(gram[k]) - expected[k]) < 1e-5) }
    }

    /// Layers not asked for are not measured.
    @Test func onlyTheRequestedLayers() throws {
        let model = try model()
        let input = Tensor(shape: model.description.inputShape, values: [Float](repeating: 0.5, count: 3 * 63))
        #expect(try InputGram.collect(model: model, inputs: [input], layers: []).isEmpty)
    }
}
