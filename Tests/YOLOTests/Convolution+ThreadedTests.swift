import Testing
@_spi(Engine) @testable import YOLO

/// The im2col + GEMM path split over workers (by pixels, by filters, or in row bands) against a
/// plain direct loop in Double. Float GEMM error relative to Σ|w·x| + |b| stays below 2e-7 here (measured);
/// the bound 1e-6 leaves headroom for other BLAS kernels' summation orders.
@Suite struct ConvolutionThreadedTests {
    /// (channels, height, width, filters, size, stride, padding)
    static let cases: [(Int, Int, Int, Int, Int, Int, Int)] = [
        (3, 96, 96, 16, 3, 1, 1),      // row bands (small filters, tall map)
        (3, 208, 208, 8, 3, 2, 1),     // row bands, stride 2
        (4, 301, 97, 8, 3, 2, 1),      // row bands, stride 2, odd width (the last output column's kx = 2 tap is padding)
        (13, 13, 13, 30, 1, 1, 0),     // 1×1: split by filters (map smaller than filter count)
        (7, 26, 26, 5, 1, 1, 0),       // 1×1: split by pixels
        (10, 11, 9, 6, 3, 2, 1),       // strided 3×3, odd sizes
        (64, 13, 13, 300, 3, 1, 1),    // many weights: whole-map columns, split by filters
    ]

    @Test(arguments: [1, 2, 3])
    func matchesDirectConvolution(threads: Int) {
        for (c, h, w, k, size, stride, padding) in Self.cases {
            let shape = Shape(channels: c, height: h, width: w)
            let input = LayerTestSupport.values(shape.count, seed: UInt32(c + h))
            let weights = LayerTestSupport.values(k * c * size * size, seed: UInt32(k))
            let biases = LayerTestSupport.values(k, seed: 3)
            let layer = Convolution(input: -1, inputShape: shape, filters: k, size: size, stride: stride,
                                    padding: padding, activation: .leaky, weights: FloatBuffer(weights),
                                    biases: FloatBuffer(biases), algorithm: .im2col)
            let output = LayerTestSupport.run(layer, input: input, threads: threads)
            let reference = LayerTestSupport.directConvolution(input, shape: shape, weights: weights, biases: biases,
                                                          filters: k, size: size, stride: stride, padding: padding,
                                                          activation: .leaky)
            let worst = output.indices.map {
                abs(Double(output[$0]) - Double(reference.output[$0])) / max(reference.scale[$0], 1e-30)
            }.max() ?? .infinity
            print("im2col \(c)x\(h)x\(w)→\(k) \(size)x\(size)/\(stride), \(threads) threads: relative error \(worst)")
            #expect(worst <= 1e-6, "\(c)x\(h)x\(w)→\(k) \(size)x\(size)/\(stride), \(threads) threads: \(worst)")
        }
    }

    /// A whole-map product cut into any grid of filter × column parts, run on any number of threads, gives the
    /// same bits as one product: the parts never change a value's arithmetic (the inner dimension is never cut).
    @Test func gridsDoNotChangeResults() {
        for (c, h, w, k, size) in [(64, 13, 13, 300, 1), (32, 26, 26, 100, 3), (16, 52, 52, 40, 1)] {
            let shape = Shape(channels: c, height: h, width: w)
            let input = LayerTestSupport.values(shape.count, seed: UInt32(c + h))
            let weights = FloatBuffer(LayerTestSupport.values(k * c * size * size, seed: UInt32(k)))
            let biases = FloatBuffer(LayerTestSupport.values(k, seed: 3))
            func run(_ split: ConvolutionPlan.Split, threads: Int) -> [UInt32] {
                let plan = ConvolutionPlan(algorithm: .gemm(split: split), weights: .float, fusion: nil, maxThreads: threads)
                let layer = Convolution(input: -1, inputShape: shape, filters: k, size: size, stride: 1, padding: size / 2,
                                        activation: .leaky, weights: weights, biases: biases, plan: plan)
                return LayerTestSupport.run(layer, input: input, threads: threads).map(\.bitPattern)
            }
            let whole = run(.whole, threads: 1)
            for (filters, columns) in [(1, 4), (4, 1), (2, 3), (4, 4), (16, 1), (1, 16)] {
                for threads in [2, 3, 16] {
                    #expect(run(.init(filters: filters, columns: columns), threads: threads) == whole,
                            "\(c)x\(h)x\(w)→\(k) \(size)x\(size): \(filters) × \(columns) parts on \(threads) threads")
                }
            }
        }
    }

    @Test func rowBandsAreUsedWhereIntended() {
        let small = Convolution(input: -1, inputShape: Shape(channels: 3, height: 96, width: 96), filters: 16, size: 3,
                                stride: 1, padding: 1, activation: .leaky,
                                weights: FloatBuffer(LayerTestSupport.values(16 * 27, seed: 1)),
                                biases: FloatBuffer(LayerTestSupport.values(16, seed: 2)), algorithm: .im2col)
        #expect(small.bandRows != nil)
        let large = Convolution(input: -1, inputShape: Shape(channels: 64, height: 13, width: 13), filters: 300, size: 3,
                                stride: 1, padding: 1, activation: .leaky,
                                weights: FloatBuffer(LayerTestSupport.values(300 * 576, seed: 1)),
                                biases: FloatBuffer(LayerTestSupport.values(300, seed: 2)), algorithm: .im2col)
        #expect(large.bandRows == nil)
    }
}
