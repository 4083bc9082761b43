import Testing
@_spi(Engine) @testable import YOLO

/// Nearest-neighbour upsampling, split over workers by channel, against the definition (exact).
@Suite struct UpsampleTests {
    /// A small map (one worker) and one large enough (≥ 65,536 outputs) to be split over workers.
    @Test(arguments: [1, 2, 3], [1, 2, 3])
    func matchesDefinition(stride: Int, threads: Int) {
        for shape in [Shape(channels: 5, height: 3, width: 4), Shape(channels: 16, height: 64, width: 70)] {
            check(shape: shape, stride: stride, threads: threads)
        }
    }

    func check(shape: Shape, stride: Int, threads: Int) {
        let input = LayerTestSupport.values(shape.count, seed: 7)
        let layer = Upsample(input: -1, inputShape: shape, stride: stride, scale: 2)
        let output = LayerTestSupport.run(layer, input: input, threads: threads)
        let (outH, outW) = (shape.height * stride, shape.width * stride)
        var expected: [Float] = []
        for c in 0..<shape.channels {
            for y in 0..<outH {
                for x in 0..<outW { expected.append(2 * input[(c * shape.height + y / stride) * shape.width + x / stride]) }
            }
        }
        #expect(output == expected)
    }
}
