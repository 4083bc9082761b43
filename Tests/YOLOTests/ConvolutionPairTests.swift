import Testing
@_spi(Engine) @testable import YOLO

/// Two convolutions fused band by band (`ConvolutionPair`) against the two layers run one after the other.
/// Exact: every output of a product is the same sum in the same order whatever the band, and the second
/// unfolding reads the same values from the window as from the whole map. Runs with every kernel family
/// with its own kernel (CI runs the suite once per family). Not on the portable family: OpenBLAS's bits depend
/// on a product's shape (`GEMM.multiplyWithBLAS`), so no pair is planned there.
struct ConvolutionPairTests {
    /// Two im2col convolutions: `channels × height × width` in, the first with `filters.0` 3×3 filters at
    /// `strides.0`, the second with `filters.1` 3×3 filters at `strides.1`; and their pair, if it qualifies.
    static func layers(channels: Int, height: Int, width: Int, filters: (Int, Int), strides: (Int, Int),
                       activations: (Activation, Activation) = (.leaky, .leaky))
        -> (Convolution, Convolution, ConvolutionPair?) {
        let shape = Shape(channels: channels, height: height, width: width)
        let first = Convolution(input: -1, inputShape: shape, filters: filters.0, size: 3, stride: strides.0, padding: 1,
                                activation: activations.0,
                                weights: FloatBuffer(LayerTestSupport.values(filters.0 * channels * 9, seed: 3)),
                                biases: FloatBuffer(LayerTestSupport.values(filters.0, seed: 4)), algorithm: .im2col)
        let second = Convolution(input: 0, inputShape: first.outputShape, filters: filters.1, size: 3, stride: strides.1,
                                 padding: 1, activation: activations.1,
                                 weights: FloatBuffer(LayerTestSupport.values(filters.1 * filters.0 * 9, seed: 5)),
                                 biases: FloatBuffer(LayerTestSupport.values(filters.1, seed: 6)), algorithm: .im2col)
        return (first, second, ConvolutionPair(first: first, firstIndex: 0, second: second))
    }

    /// (channels, height, width, filters, strides): yolov4-tiny's layers 0 and 1 in small (stride 2 twice,
    /// bands of whole 16-column blocks), a stride-1 second layer (windows of 3 rows, 2 shared), and widths
    /// whose bands are not whole blocks (the products' edge path), with a short last band.
    @Test(arguments: [(3, 96, 416, (32, 16), (2, 2)), (3, 40, 300, (16, 12), (1, 1)), (2, 60, 410, (5, 7), (1, 2))],
          [1, 2, 3])
    func matchesTheTwoConvolutions(shape: (Int, Int, Int, (Int, Int), (Int, Int)), threads: Int) throws {
        let (channels, height, width, filters, strides) = shape
        let input = LayerTestSupport.values(channels * height * width, seed: UInt32(height * width))
        for activations in [(Activation.leaky, Activation.leaky), (.linear, .leaky), (.leaky, .linear)] {
            let (first, second, pair) = Self.layers(channels: channels, height: height, width: width, filters: filters,
                                                    strides: strides, activations: activations)
            guard GEMM.usesOwnKernel else {
                #expect(pair == nil, "\(shape) fused on OpenBLAS")
                continue
            }
            let layer = try #require(pair, "\(shape) should fuse")
            let between = LayerTestSupport.run(first, input: input, threads: 1)
            let expected = LayerTestSupport.run(second, input: between, threads: 1)
            #expect(LayerTestSupport.runFused(layer, input: input, threads: threads) == expected, "\(shape) \(activations)")
            // Not fused (the workspace keeps the first convolution's output): the second convolution of input 0.
            #expect(LayerTestSupport.run(layer, input: between, threads: threads) == expected)
        }
    }

    @Test func onlyQualifyingPairsFuse() {
        #expect((Self.layers(channels: 3, height: 96, width: 416, filters: (32, 16), strides: (2, 2)).2 != nil) == GEMM.usesOwnKernel)
        // Maps too small for bands (one band would be the whole map).
        #expect(Self.layers(channels: 3, height: 16, width: 16, filters: (8, 16), strides: (2, 2)).2 == nil)
        let (first, second, _) = Self.layers(channels: 3, height: 96, width: 416, filters: (32, 16), strides: (2, 2))
        // A second layer reading something else, and a Winograd or 1×1 second layer.
        let elsewhere = Convolution(input: 5, inputShape: first.outputShape, filters: 16, size: 3, stride: 2, padding: 1,
                                    activation: .leaky, weights: second.weights, biases: second.biases, algorithm: .im2col)
        #expect(ConvolutionPair(first: first, firstIndex: 0, second: elsewhere) == nil)
        let wide = Shape(channels: 16, height: 96, width: 416)
        let winograd = Convolution(input: 0, inputShape: wide, filters: 16, size: 3, stride: 1, padding: 1, activation: .leaky,
                                   weights: FloatBuffer(LayerTestSupport.values(16 * 16 * 9, seed: 9)),
                                   biases: FloatBuffer(LayerTestSupport.values(16, seed: 10)), algorithm: .winograd4)
        let firstWide = Convolution(input: -1, inputShape: Shape(channels: 3, height: 96, width: 416), filters: 16, size: 3,
                                    stride: 1, padding: 1, activation: .leaky, weights: FloatBuffer(LayerTestSupport.values(16 * 27, seed: 11)),
                                    biases: FloatBuffer(LayerTestSupport.values(16, seed: 12)), algorithm: .im2col)
        #expect(ConvolutionPair(first: firstWide, firstIndex: 0, second: winograd) == nil)
        let pointwise = Convolution(input: 0, inputShape: wide, filters: 8, size: 1, stride: 1, padding: 0, activation: .leaky,
                                    weights: FloatBuffer(LayerTestSupport.values(8 * 16, seed: 13)),
                                    biases: FloatBuffer(LayerTestSupport.values(8, seed: 14)), algorithm: .im2col)
        #expect(ConvolutionPair(first: firstWide, firstIndex: 0, second: pointwise) == nil)
    }
}
