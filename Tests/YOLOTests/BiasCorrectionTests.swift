import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct BiasCorrectionTests {
    /// One linear 3×3 convolution on a 9×7 input.
    func model() throws -> Model {
        let description = try parse("""
            [net]
            width=9
            height=7
            channels=3
            [convolutional]
            filters=6
            size=3
            stride=1
            pad=1
            activation=linear
            """)
        var random = SeededRandom(seed: 21)
        let parameters = ConvolutionParameters(weights: FloatBuffer(randomWeights(rows: 6, rowLength: 27, seed: 22)),
                                               biases: FloatBuffer(random.floats(6)))
        return Model(description: description, convolutions: [0: parameters], labels: [])
    }

    @Test func tapMeansAreTheMeansOfTheIm2colRows() throws {
        let network = try Network(model: try model())
        let convolution = try #require(network.layers[0] as? Convolution)
        var random = SeededRandom(seed: 2)
        let input = random.floats(network.inputShape.count, 0, 1)
        var columns = [Float](repeating: 0, count: convolution.patchLength * convolution.outputShape.planeCount)
        input.withUnsafeBufferPointer { source in
            columns.withUnsafeMutableBufferPointer {
                Im2col.unfold(source.baseAddress!, shape: convolution.inputShape, size: 3, stride: 1, padding: 1,
                              outputHeight: 7, outputWidth: 9, into: $0.baseAddress!)
            }
        }
        let means = BiasCorrection.tapMeans(input, convolution: convolution)
        for row in 0..<convolution.patchLength {
            let expected = columns[row * 63 ..< (row + 1) * 63].reduce(0.0) { $0 + Double($1) } / 63
            #expect(abs(means[row] - expected) < 1e-9)
        }
    }

    /// After correction the quantized layer's output has the float layer's mean on the calibration
    /// inputs (linear activation, so the mean shift is exactly what the bias absorbs); tolerance
    /// 1e-5 for float32 sums over 63 positions.
    @Test func correctedBiasesRemoveTheMeanOutputShift() throws {
        let float = try model()
        let quantized = try ModelConverter.convert(float, settings: ConversionSettings(type: .lut4, keepFloat: []))
        var random = SeededRandom(seed: 3)
        let inputs = (0..<2).map { _ in Tensor(shape: float.description.inputShape, values: random.floats(3 * 63, 0, 1)) }
        let corrected = BiasCorrection.correct(quantized, reference: float, tapMeans: try BiasCorrection.tapMeans(model: float, inputs: inputs))
        // The network has no head, so read the convolution's output from the workspace.
        func output(_ model: Model, _ input: Tensor) throws -> Tensor {
            let network = try Network(model: model)
            let workspace = Workspace(for: network)
            _ = try network.forward(input, workspace: workspace)
            return workspace.tensor(of: 0)
        }
        func meanShift(_ model: Model) throws -> [Double] {
            var shift = [Double](repeating: 0, count: 6)
            for input in inputs {
                let a = try output(model, input), b = try output(float, input)
                for f in 0..<6 { for i in 0..<63 { shift[f] += Double(a.values[f * 63 + i] - b.values[f * 63 + i]) / 126 } }
            }
            return shift
        }
        #expect(try meanShift(corrected).allSatisfy { abs($0) < 1e-5 })
        #expect(try meanShift(quantized).contains { abs($0) > 1e-3 }, "the uncorrected codes shift the mean")
    }
}
