import Testing
@testable import YOLO

/// Nearest-neighbour upsampling, split over workers by channel, against the definition (exact).
@Suite struct UpsampleTests {
    @Test(arguments: [1, 2, 3], [1, 2, 3])
    func matchesDefinition(stride: Int, threads: Int) {
        let shape = Shape(channels: 5, height: 3, width: 4)
        let input = TestSupport.values(shape.count, seed: 7)
        let layer = Upsample(input: -1, inputShape: shape, stride: stride, scale: 2)
        let output = TestSupport.run(layer, input: input, threads: threads)
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
