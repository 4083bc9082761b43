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

    /// (channels, height, width, size, stride): even and odd maps, the stride-1 pool of layer 11, the 5×5
    /// stride-1 pools of SPPF and other stride-1 windows of 3 or more (the separable path; maps smaller than the
    /// window among them), and one large enough (≥ 65,536 outputs) to be split over workers.
    @Test(arguments: [(3, 8, 8, 2, 2), (5, 13, 13, 2, 2), (2, 7, 10, 2, 2), (4, 13, 13, 2, 1), (3, 9, 9, 3, 2),
                      (1, 1, 1, 2, 2), (8, 201, 200, 2, 2), (6, 10, 10, 5, 1), (3, 20, 17, 5, 1), (2, 7, 9, 3, 1),
                      (2, 3, 4, 5, 1), (1, 1, 1, 5, 1), (2, 12, 11, 4, 1), (4, 9, 13, 9, 1), (8, 130, 130, 5, 1)], [1, 2, 3])
    func matchesPlainLoop(shape: (Int, Int, Int, Int, Int), threads: Int) {
        let (c, h, w, size, stride) = shape
        let input = LayerTestSupport.values(c * h * w, seed: UInt32(h * w))
        let layer = MaxPool(input: -1, inputShape: Shape(channels: c, height: h, width: w), size: size,
                            stride: stride, padding: size - 1)
        let expected = Self.reference(input, shape: layer.inputShape, size: size, stride: stride, padding: size - 1)
        #expect(LayerTestSupport.run(layer, input: input, threads: threads) == expected)
    }

    /// Stride-1 windows with paddings other than darknet's default `size − 1` (smaller and larger maps out), on the
    /// separable path for floats and codes.
    @Test(arguments: [(5, 0), (5, 2), (3, 0), (3, 4), (5, 7), (5, 8), (4, 1)])
    func separablePathWithOtherPaddings(window: (size: Int, padding: Int)) {
        let shape = Shape(channels: 3, height: 11, width: 8)
        let input = LayerTestSupport.values(shape.count, seed: UInt32(window.size * 16 + window.padding))
        let layer = MaxPool(input: -1, inputShape: shape, size: window.size, stride: 1, padding: window.padding)
        #expect(layer.isSeparable)
        let expected = Self.reference(input, shape: shape, size: window.size, stride: 1, padding: window.padding)
        #expect(LayerTestSupport.run(layer, input: input, threads: 2) == expected)
        var random = SeededRandom(seed: UInt64(window.size * 16 + window.padding))
        let codes = (0..<shape.count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let byteLayer = MaxPool(input: -1, inputShape: shape, size: window.size, stride: 1, padding: window.padding, bytes: true)
        let expectedCodes = Self.reference(codes.map(Float.init), shape: shape, size: window.size, stride: 1, padding: window.padding)
        #expect(LayerTestSupport.runBytes(byteLayer, input: codes, threads: 1).map(Float.init) == expectedCodes)
    }

    /// On u8 codes (between int8 layers): the same windows on bytes, against the plain loop on the codes as floats
    /// (exact: every code is a float). 2×2/2 on even heights and widths runs over whole planes (`poolHalving`);
    /// otherwise widths of 32 and more reach the 16-output byte steps of the 2×2/2 path, with a scalar tail after
    /// them; the 2×2 stride-1 and 3×3 stride-2 shapes take the general path, stride-1 windows of 3 or more the separable one. Stale output is 0xAB.
    @Test(arguments: [(3, 8, 8, 2, 2), (2, 7, 33, 2, 2), (3, 52, 52, 2, 2), (5, 26, 26, 2, 2), (2, 26, 75, 2, 2), (4, 13, 13, 2, 1),
                      (3, 9, 9, 3, 2), (8, 201, 200, 2, 2), (6, 10, 10, 5, 1), (3, 20, 17, 5, 1), (2, 3, 4, 5, 1), (2, 12, 11, 4, 1)],
          [1, 2, 3])
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
