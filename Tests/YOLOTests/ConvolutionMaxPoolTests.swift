import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The fused convolution + max-pool (`ConvolutionMaxPool`, `DirectConvolution`) against the two layers
/// run separately on the plain path (im2col + GEMM, then `MaxPool`). Exact: the direct kernel sums the
/// same products in the same order as the im2col product, and the pool compares the same values.
/// Fusion is a fast path of the AVX2 and AVX-512 kernel families (CI runs the suite once per family the
/// machine supports, `YOLO_KERNEL=...`); the portable family has no direct convolution.
@Suite(.enabled(if: KernelFamily.active.has(.directConvolutionMaxPool),
                "the \(KernelFamily.active.name) kernel family has no fused convolution + max-pool"))
struct ConvolutionMaxPoolTests {
    /// The fused layer for a `channels × height × width` input, or nil when the pair does not qualify.
    static func layers(channels: Int, height: Int, width: Int, filters: Int, activation: Activation,
                       convolutionChannels: Int? = nil) -> (Convolution, MaxPool, ConvolutionMaxPool?) {
        let shape = Shape(channels: channels, height: height, width: width)
        let convolution = Convolution(input: -1, inputShape: shape, filters: filters, size: 3, stride: 1, padding: 1,
                                      activation: activation,
                                      weights: FloatBuffer(LayerTestSupport.values(filters * channels * 9, seed: 7)),
                                      biases: FloatBuffer(LayerTestSupport.values(filters, seed: 8)), algorithm: .im2col)
        let pool = MaxPool(input: 0, inputShape: convolution.outputShape, size: 2, stride: 2, padding: 1)
        return (convolution, pool, ConvolutionMaxPool(pool: pool, convolution: convolution, convolutionIndex: 0))
    }

    /// (channels, height, width, filters): one band and several (416 wide: 16-row bands, the last one
    /// short), filters not a multiple of the kernel's 6 rows, widths not a multiple of 64, 2×2 maps.
    @Test(arguments: [(3, 8, 8, 4), (3, 40, 416, 16), (16, 34, 50, 32), (1, 2, 2, 1), (5, 12, 130, 7), (31, 6, 10, 13)],
          [1, 2, 3])
    func matchesConvolutionThenPool(shape: (Int, Int, Int, Int), threads: Int) throws {
        let (channels, height, width, filters) = shape
        let input = LayerTestSupport.values(channels * height * width, seed: UInt32(height * width))
        for activation in [Activation.leaky, .linear] {
            let (convolution, pool, fused) = Self.layers(channels: channels, height: height, width: width,
                                                         filters: filters, activation: activation)
            let layer = try #require(fused)
            let expected = LayerTestSupport.run(pool, input: LayerTestSupport.run(convolution, input: input, threads: 1),
                                                threads: 1)
            #expect(LayerTestSupport.runFused(layer, input: input, threads: threads) == expected, "\(shape) \(activation)")
            // Not fused (the workspace keeps the convolution's output): a plain max-pool of input 0.
            let convolved = LayerTestSupport.run(convolution, input: input, threads: 1)
            #expect(LayerTestSupport.run(layer, input: convolved, threads: threads) == expected)
        }
    }

    @Test func onlyQualifyingPairsFuse() {
        #expect(Self.layers(channels: 16, height: 8, width: 8, filters: 8, activation: .leaky).2 != nil)
        // 32 input channels and more: Winograd is faster there.
        #expect(Self.layers(channels: 32, height: 8, width: 8, filters: 8, activation: .leaky).2 == nil)
        // An odd map (the pool would read its padding) and a logistic activation (not applied in registers).
        #expect(Self.layers(channels: 3, height: 7, width: 8, filters: 8, activation: .leaky).2 == nil)
        #expect(Self.layers(channels: 3, height: 8, width: 8, filters: 8, activation: .logistic).2 == nil)
        // A stride-1 pool, and a pool that does not read the convolution.
        let (convolution, _, _) = Self.layers(channels: 3, height: 8, width: 8, filters: 4, activation: .leaky)
        let strideOne = MaxPool(input: 0, inputShape: convolution.outputShape, size: 2, stride: 1, padding: 1)
        #expect(ConvolutionMaxPool(pool: strideOne, convolution: convolution, convolutionIndex: 0) == nil)
        let elsewhere = MaxPool(input: 3, inputShape: convolution.outputShape, size: 2, stride: 2, padding: 1)
        #expect(ConvolutionMaxPool(pool: elsewhere, convolution: convolution, convolutionIndex: 0) == nil)
    }

    /// A workspace that keeps only the heads skips the fused convolutions (and gives them no memory);
    /// one that keeps every output runs them as layers. Both give the same heads (`WorkspacePlanTests`).
    @Test func workspaceSkipsFusedConvolutionsItDoesNotKeep() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        // Layer 2's output is also read by a route, so only layers 0 + 1 fuse.
        #expect(network.layers[1] is ConvolutionMaxPool && network.layers[3] is MaxPool)
        let compact = Workspace(for: network, keeping: Set(network.headIndices))
        let full = Workspace(for: network)
        #expect(network.layers.indices.filter { compact.skips($0) } == [0])
        #expect(!network.layers.indices.contains { full.skips($0) })
        let keepingFirst = Workspace(for: network, keeping: Set(network.headIndices + [0]))
        #expect(!network.layers.indices.contains { keepingFirst.skips($0) })
        // The plain path (`.im2col`) fuses nothing.
        #expect(!(try Network(model: model, algorithm: .im2col)).layers.contains { $0 is ConvolutionMaxPool })
    }
}
