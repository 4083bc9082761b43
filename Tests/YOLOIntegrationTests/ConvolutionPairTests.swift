import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `ConvolutionPair` in the real yolov4-tiny (the pair against its two layers: the unit tests' ConvolutionPairTests.swift).
@Suite struct ConvolutionPairTests {
    /// yolov4-tiny fuses its layers 0 and 1 (and nothing else this way; nothing on the portable family); a workspace that keeps only the heads
    /// skips layer 0 and gives the same heads, bit for bit, as one that keeps every output.
    @Test(.enabled(if: TestPaths.hasV4Weights, "\(Skip.noV4Weights)"), arguments: [1, 2])
    func yolov4TinyFusesItsFirstTwoLayers(threads: Int) throws {
        let network = try Network(model: try #require(TinyYOLO.v4))
        // No pair on the portable family (OpenBLAS's bits depend on a product's shape: GEMM.multiplyWithBLAS).
        let fused = GEMM.usesOwnKernel
        #expect(network.layers.indices.filter { network.layers[$0] is ConvolutionPair } == (fused ? [1] : []))
        #expect(network.convolution(at: 1)?.stride == 2)
        let compact = Workspace(for: network, threads: threads, keeping: Set(network.headIndices))
        let full = Workspace(for: network, threads: threads)
        #expect(network.layers.indices.filter { compact.skips($0) } == (fused ? [0] : []))
        #expect(!network.layers.indices.contains { full.skips($0) })
        var random = SeededRandom(seed: 5)
        let input = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        #expect(try network.forward(input, workspace: compact) == network.forward(input, workspace: full))
    }
}
