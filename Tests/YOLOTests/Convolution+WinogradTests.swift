import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// Every convolution path against a plain direct loop in Double, over a table of shapes (the real model's heads
/// against OpenCV with every fast path on: YOLOIntegrationTests' Convolution+WinogradTests.swift).
@Suite struct ConvolutionWinogradTests {
    /// (channels, height, width, filters): odd sizes, channels not a multiple of 8, 13×13, 1×1 maps,
    /// a map big enough to be cut into several Winograd tile blocks (40→32 channels at 36×36), ≥ 128
    /// channels (the small maps take the transposed products with the own kernel: 13×13 gives 49 tiles
    /// of F(2×2), 16 of F(4×4)), and maps wide enough (≥ 12 tiles) for the row-vectorized transforms: a full 16-tile
    /// group (64 wide), a full group plus a partial one with partial edge tiles and several blocks
    /// (50×70), 13 tiles of F(4×4) as in yolov3-tiny's 52×52 layer.
    static let shapes: [(Int, Int, Int, Int)] = [
        (3, 5, 7, 4), (8, 13, 13, 16), (5, 9, 11, 3), (13, 26, 26, 9), (16, 1, 1, 5), (16, 2, 3, 8),
        (9, 17, 6, 10), (40, 36, 36, 32), (130, 7, 9, 12), (7, 21, 64, 5), (16, 50, 70, 20), (17, 52, 52, 13),
    ]

    /// Largest error of each algorithm relative to Σ|w·x| + |b| of the output (the scale float
    /// rounding grows with). Measured on this table (1–3 threads): im2col ≤ 1.9e-7, F(2×2) ≤ 1.1e-7,
    /// F(4×4) ≤ 1.7e-6, and F(6×6) ≤ 3.4e-6 on `tile6MatchesDirectConvolution`'s shapes; the bounds leave 5–10×
    /// headroom. Winograd's larger error comes from its transform constants (up to 8 and 1/24 for F(4×4), 32 and
    /// 1/90 for F(6×6)), which amplify the rounding of each transformed value.
    static let tolerance: [ConvolutionAlgorithm: Double] = [.im2col: 1e-6, .winograd2: 1e-6, .winograd4: 1e-5,
                                                            .winograd6: 2e-5]

    static func check(_ algorithm: ConvolutionAlgorithm, channels: Int, height: Int, width: Int, filters: Int,
                      threads: Int, activation: Activation = .leaky) -> Double {
        let shape = Shape(channels: channels, height: height, width: width)
        let input = LayerTestSupport.values(shape.count, seed: UInt32(channels * 31 + height))
        let weights = LayerTestSupport.values(filters * channels * 9, seed: UInt32(filters + 7))
        let biases = LayerTestSupport.values(filters, seed: 11)
        let layer = Convolution(input: -1, inputShape: shape, filters: filters, size: 3, stride: 1, padding: 1,
                                activation: activation, weights: FloatBuffer(weights), biases: FloatBuffer(biases),
                                algorithm: algorithm)
        #expect(layer.method == algorithm)
        let output = LayerTestSupport.run(layer, input: input, threads: threads)
        let reference = LayerTestSupport.directConvolution(input, shape: shape, weights: weights, biases: biases,
                                                      filters: filters, size: 3, stride: 1, padding: 1,
                                                      activation: activation)
        var worst = 0.0
        for i in output.indices {
            worst = max(worst, abs(Double(output[i]) - Double(reference.output[i])) / max(reference.scale[i], 1e-30))
        }
        return worst
    }

    @Test(arguments: [ConvolutionAlgorithm.im2col, .winograd2, .winograd4], [1, 2, 3])
    func matchesDirectConvolution(algorithm: ConvolutionAlgorithm, threads: Int) {
        for (c, h, w, k) in Self.shapes {
            let error = Self.check(algorithm, channels: c, height: h, width: w, filters: k, threads: threads)
            print("\(algorithm) \(c)x\(h)x\(w)→\(k), \(threads) threads: relative error \(error)")
            #expect(error <= Self.tolerance[algorithm]!, "\(algorithm) \(c)x\(h)x\(w)→\(k), \(threads) threads: \(error)")
        }
    }

    /// F(6×6) on maps wide enough for its row transforms (≥ 12 tiles): one partial 16-tile group (80 wide, as
    /// nudenet's and fall v8s's layers), two groups (160 wide), a width that is not a multiple of 6 with odd
    /// channels and several blocks, and a map one group wide exactly (96); families without row transforms
    /// run F(4×4) instead.
    @Test(arguments: [(16, 20, 80, 16), (32, 14, 160, 24), (17, 40, 74, 9), (40, 36, 96, 32)], [1, 2, 3])
    func tile6MatchesDirectConvolution(shape: (Int, Int, Int, Int), threads: Int) {
        let (c, h, w, k) = shape
        let rows = KernelFamily.active.has(.winogradRows)
        let layer = Convolution(input: -1, inputShape: Shape(channels: c, height: h, width: w), filters: k, size: 3,
                                stride: 1, padding: 1, activation: .leaky,
                                weights: FloatBuffer(LayerTestSupport.values(c * k * 9, seed: 1)),
                                biases: FloatBuffer(LayerTestSupport.values(k, seed: 2)), algorithm: .winograd6)
        #expect(layer.method == (rows ? .winograd6 : .winograd4))
        guard rows else { return }
        let error = Self.check(.winograd6, channels: c, height: h, width: w, filters: k, threads: threads)
        print("winograd6 \(c)x\(h)x\(w)→\(k), \(threads) threads: relative error \(error)")
        #expect(error <= Self.tolerance[.winograd6]!, "\(shape), \(threads) threads: \(error)")
        let swish = Self.check(.winograd6, channels: c, height: h, width: w, filters: k, threads: threads, activation: .swish)
        #expect(swish <= Self.tolerance[.winograd6]!, "swish \(shape), \(threads) threads: \(swish)")
    }

    /// Sixteen threads cut each Winograd product along the filters (`ConvolutionPlanner.productParts`); every
    /// output value equals the one-thread result bit for bit (each filter's sums are the same in any part).
    @Test(arguments: [ConvolutionAlgorithm.winograd2, .winograd4])
    func manyThreadsSplitProductsWithoutChangingResults(algorithm: ConvolutionAlgorithm) {
        for (c, h, w, k) in [(64, 13, 13, 128), (32, 52, 52, 64), (64, 26, 26, 256), (40, 36, 36, 32)] {
            let shape = Shape(channels: c, height: h, width: w)
            let input = LayerTestSupport.values(shape.count, seed: 5)
            let layer = Convolution(input: -1, inputShape: shape, filters: k, size: 3, stride: 1, padding: 1, activation: .leaky,
                                    weights: FloatBuffer(LayerTestSupport.values(k * c * 9, seed: 6)),
                                    biases: FloatBuffer(LayerTestSupport.values(k, seed: 7)), algorithm: algorithm, threads: 16)
            #expect(ConvolutionPlanner.productParts(products: (layer.winograd!.transform.alpha * layer.winograd!.transform.alpha),
                                                    filters: k, alignment: 1, threads: 16) > 1)
            #expect(LayerTestSupport.run(layer, input: input, threads: 16) == LayerTestSupport.run(layer, input: input, threads: 1),
                    "\(algorithm) \(c)x\(h)x\(w)→\(k) (\(layer.plan))")
        }
    }

    @Test(arguments: Activation.allCases, [13, 52])
    func fusesEveryActivation(activation: Activation, width: Int) {
        let error = Self.check(.winograd4, channels: 9, height: 13, width: width, filters: 10, threads: 2, activation: activation)
        #expect(error <= Self.tolerance[.winograd4]!)
    }

    /// Maps cut into several tile blocks: 64→64 channels at 80×64 (row-vectorized transforms with
    /// the own kernel, two large blocks run one after another), 16→16 at 320×64 (row-vectorized, eight or
    /// more blocks small enough for L2 with 16- or 64-column tiles, dealt out whole to the workers; at 296×64 seven
    /// full blocks and a short one, so two workers share the last two) and 40→32 at 120×40 (10 tiles wide, too
    /// narrow for them, too many tiles for the transposed products: 8-lane path, four full blocks and a short one).
    @Test(arguments: [(64, 80, 64, 64), (16, 320, 64, 16), (16, 296, 64, 16), (40, 120, 40, 32)], [1, 2])
    func severalTileBlocksMatchDirectConvolution(shape: (Int, Int, Int, Int), threads: Int) {
        let (c, h, w, k) = shape
        let layer = Convolution(input: -1, inputShape: Shape(channels: c, height: h, width: w), filters: k, size: 3,
                                stride: 1, padding: 1, activation: .leaky,
                                weights: FloatBuffer(LayerTestSupport.values(c * k * 9, seed: 1)),
                                biases: FloatBuffer(LayerTestSupport.values(k, seed: 2)), algorithm: .winograd4)
        #expect((layer.winograd?.blocks ?? 0) > 1)
        if c == 16 { #expect(layer.winograd?.dealsBlocks == true) }
        let error = Self.check(.winograd4, channels: c, height: h, width: w, filters: k, threads: threads)
        #expect(error <= Self.tolerance[.winograd4]!, "\(shape), \(threads) threads: \(error)")
    }

    @Test func wideMapsUseTheRowVectorizedTransformsWithTheOwnKernel() {
        func plan(width: Int) -> WinogradPlan? {
            Convolution(input: -1, inputShape: Shape(channels: 16, height: 20, width: width), filters: 8, size: 3,
                        stride: 1, padding: 1, activation: .leaky,
                        weights: FloatBuffer(LayerTestSupport.values(16 * 8 * 9, seed: 1)),
                        biases: FloatBuffer(LayerTestSupport.values(8, seed: 2)), algorithm: .winograd4).winograd
        }
        #expect(plan(width: 52)?.rowVectorized == KernelFamily.active.has(.winogradRows))
        #expect(plan(width: 26)?.rowVectorized == false)
        // Narrow, small maps (≤ 256 tiles) take the transposed products; the shape table covers them.
        #expect(plan(width: 26)?.transposed == KernelFamily.active.has(.winogradTransposed))
    }

    @Test func winogradFallsBackWhereItDoesNotApply() {
        let strided = Convolution(input: -1, inputShape: Shape(channels: 8, height: 8, width: 8), filters: 4, size: 3,
                                  stride: 2, padding: 1, activation: .leaky,
                                  weights: FloatBuffer(LayerTestSupport.values(8 * 4 * 9, seed: 1)),
                                  biases: FloatBuffer(LayerTestSupport.values(4, seed: 2)), algorithm: .winograd4)
        #expect(strided.method == .im2col && strided.winograd == nil)
    }
}
