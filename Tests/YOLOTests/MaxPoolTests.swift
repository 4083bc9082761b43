import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The max-pool layer (fast 2×2/2 path and general path, threaded) against a plain loop over the
/// window with darknet's padding rule. Exact: max involves no rounding.
@Suite struct MaxPoolTests {
    static func reference(_ input: [Float], shape: Shape, size: Int, stride: Int, padding: Int) -> [Float] {
        let out = MaxPool.outputShape(input: shape, size: size, stride: stride, padding: padding)
        var output: [Float] = []
        for c in 0..<shape.channels {
            for oy in 0..<out.height {
                for ox in 0..<out.width {
                    var best = -Float.greatestFiniteMagnitude
                    for dy in 0..<size {
                        for dx in 0..<size {
                            let y = oy * stride - padding / 2 + dy, x = ox * stride - padding / 2 + dx
                            if y >= 0, y < shape.height, x >= 0, x < shape.width {
                                best = max(best, input[(c * shape.height + y) * shape.width + x])
                            }
                        }
                    }
                    output.append(best)
                }
            }
        }
        return output
    }

    /// (channels, height, width, size, stride): even and odd maps, the stride-1 pool of layer 11, and
    /// one large enough (≥ 65,536 outputs) to be split over workers.
    @Test(arguments: [(3, 8, 8, 2, 2), (5, 13, 13, 2, 2), (2, 7, 10, 2, 2), (4, 13, 13, 2, 1), (3, 9, 9, 3, 2),
                      (1, 1, 1, 2, 2), (8, 201, 200, 2, 2)], [1, 2, 3])
    func matchesPlainLoop(shape: (Int, Int, Int, Int, Int), threads: Int) {
        let (c, h, w, size, stride) = shape
        let input = LayerTestSupport.values(c * h * w, seed: UInt32(h * w))
        let layer = MaxPool(input: -1, inputShape: Shape(channels: c, height: h, width: w), size: size,
                            stride: stride, padding: size - 1)
        let expected = Self.reference(input, shape: layer.inputShape, size: size, stride: stride, padding: size - 1)
        #expect(LayerTestSupport.run(layer, input: input, threads: threads) == expected)
    }

    /// On u8 codes (between int8 layers): the same windows on bytes, against the plain loop on the codes as floats
    /// (exact: every code is a float). 2×2/2 on even heights and widths runs over whole planes (`poolHalving`);
    /// otherwise widths of 32 and more reach the 16-output byte steps of the 2×2/2 path, with a scalar tail after
    /// them; the stride-1 and 3×3 shapes take the general path. Stale output is 0xAB.
    @Test(arguments: [(3, 8, 8, 2, 2), (2, 7, 33, 2, 2), (3, 52, 52, 2, 2), (5, 26, 26, 2, 2), (2, 26, 75, 2, 2), (4, 13, 13, 2, 1),
                      (3, 9, 9, 3, 2), (8, 201, 200, 2, 2)], [1, 2, 3])
    func codesMatchPlainLoop(shape: (Int, Int, Int, Int, Int), threads: Int) {
        let (c, h, w, size, stride) = shape
        var random = SeededRandom(seed: UInt64(h * w + c))
        let codes = (0..<c * h * w).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let layer = MaxPool(input: -1, inputShape: Shape(channels: c, height: h, width: w), size: size,
                            stride: stride, padding: size - 1, bytes: true)
        let expected = Self.reference(codes.map(Float.init), shape: layer.inputShape, size: size, stride: stride, padding: size - 1)
        let output = LayerTestSupport.runBytes(layer, input: codes, threads: threads)
        #expect(output.map(Float.init) == expected)
    }
}
