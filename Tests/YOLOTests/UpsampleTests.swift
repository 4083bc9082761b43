import Testing
import YOLOTestSupport
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

    /// On u8 codes (between int8 layers): copies of each code, against the definition; stride 2 takes the 16-bit pair
    /// path (`doubleBytes`), others the general one. Stale output is 0xAB.
    @Test(arguments: [(3, 13, 13, 2), (2, 5, 8, 2), (2, 4, 6, 3), (1, 3, 3, 1)], [1, 2, 3])
    func codesMatchDefinition(shape: (Int, Int, Int, Int), threads: Int) {
        let (c, h, w, stride) = shape
        var random = SeededRandom(seed: UInt64(h * w + c))
        let codes = (0..<c * h * w).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let layer = Upsample(input: -1, inputShape: Shape(channels: c, height: h, width: w), stride: stride, bytes: true)
        let output = LayerTestSupport.runBytes(layer, input: codes, threads: threads)
        var expected: [UInt8] = []
        for ch in 0..<c {
            for y in 0..<h * stride {
                for x in 0..<w * stride { expected.append(codes[(ch * h + y / stride) * w + x / stride]) }
            }
        }
        #expect(output == expected)
    }
}
