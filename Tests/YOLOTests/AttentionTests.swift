import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `Attention` against a plain Double loop that follows Ultralytics' `Attention.forward` literally (the N × N
/// score matrix, its softmax, `v @ attnᵀ`), on YOLO11n's C2PSA size at a 640 input (2 heads, key 32 and value
/// 64 channels a head, a 20×20 map) and on odd sizes (N not a multiple of 8).
@Suite struct AttentionTests {
    static func reference(_ input: [Float], heads: Int, key: Int, value: Int, positions n: Int, scale: Float) -> [Float] {
        var output = [Float](repeating: 0, count: heads * value * n)
        for h in 0..<heads {
            let q = h * key * n, k = (heads + h) * key * n, v = (2 * heads * key + h * value) * n
            var attention = [Double](repeating: 0, count: n * n)
            for i in 0..<n {
                for j in 0..<n {
                    var sum = 0.0
                    for c in 0..<key { sum += Double(input[q + c * n + i]) * Double(input[k + c * n + j]) }
                    attention[i * n + j] = sum * Double(scale)
                }
                let largest = attention[i * n ..< (i + 1) * n].max()!
                var total = 0.0
                for j in 0..<n { attention[i * n + j] = exp(attention[i * n + j] - largest); total += attention[i * n + j] }
                for j in 0..<n { attention[i * n + j] /= total }
            }
            for d in 0..<value {
                for i in 0..<n {
                    var sum = 0.0
                    for j in 0..<n { sum += Double(input[v + d * n + j]) * attention[i * n + j] }
                    output[(h * value + d) * n + i] = Float(sum)
                }
            }
        }
        return output
    }

    @Test(arguments: [(2, 32, 64, 20, 20), (2, 4, 8, 3, 3), (3, 5, 7, 7, 5)])
    func matchesThePlainLoop(_ c: (heads: Int, key: Int, value: Int, height: Int, width: Int)) {
        let shape = Shape(channels: c.heads * (2 * c.key + c.value), height: c.height, width: c.width)
        // Spread like a qkv convolution's outputs (±3), so the softmax is far from uniform.
        let input = LayerTestSupport.values(shape.count, seed: 21).map { 3 * $0 }
        let scale = 1 / Float(c.key).squareRoot()
        let expected = Self.reference(input, heads: c.heads, key: c.key, value: c.value, positions: shape.planeCount, scale: scale)
        for threads in [1, 3] {
            let layer = Attention(input: -1, inputShape: shape, heads: c.heads, keyChannels: c.key, valueChannels: c.value,
                                  scale: scale, threads: threads)
            #expect(layer.outputShape == Shape(channels: c.heads * c.value, height: c.height, width: c.width))
            let output = LayerTestSupport.run(layer, input: input, threads: threads)
            let worst = zip(output, expected).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 2e-5, "\(c), \(threads) threads: max difference \(worst)")
        }
    }

    /// The description checks an attention's fields and its input channels; the model file writes it as kind 9.
    @Test func descriptionAndModelFile() throws {
        let layers: [LayerSpec] = [
            .convolution(ConvolutionSpec(filters: 16, size: 1, stride: 1, padding: 0, batchNormalize: false, activation: .linear, line: 1)),
            .attention(AttentionSpec(heads: 2, keyChannels: 2, valueChannels: 4, scale: 0.5, line: 2)),
            .convolution(ConvolutionSpec(filters: 64 + 1, size: 1, stride: 1, padding: 0, batchNormalize: false, activation: .linear, line: 3)),
            .yolo(YOLOSpec(mask: [], anchors: [], classes: 1, scaleXY: 1, distributionBins: 16, line: 4)),
        ]
        let description = ModelDescription(inputShape: Shape(channels: 3, height: 8, width: 8), layers: layers, path: "a.yolo")
        try description.validate()
        let model = Model(description: description, convolutions: [
            0: ConvolutionParameters(weights: FloatBuffer(LayerTestSupport.values(48, seed: 1)), biases: FloatBuffer(LayerTestSupport.values(16, seed: 2))),
            2: ConvolutionParameters(weights: FloatBuffer(LayerTestSupport.values(65 * 8, seed: 3)), biases: FloatBuffer(LayerTestSupport.values(65, seed: 4))),
        ], labels: [])
        let bytes = [UInt8](ModelFile.encode(model))
        let loaded = try Model(modelFileData: Data(bytes), path: "a.yolo")
        guard case .attention(let spec) = loaded.description.layers[1] else { Issue.record("layer 1 is not an attention"); return }
        #expect(spec == AttentionSpec(heads: 2, keyChannels: 2, valueChannels: 4, scale: 0.5, line: 2))
        let input = Tensor(shape: description.inputShape, values: LayerTestSupport.values(192, seed: 5))
        #expect(try Network(model: loaded).forward(input).map(\.values) == Network(model: model).forward(input).map(\.values))
        var bad = description
        bad.layers[1] = .attention(AttentionSpec(heads: 2, keyChannels: 3, valueChannels: 4, scale: 0.5, line: 2))
        #expect(throws: YOLOError.self) { try bad.validate() }   // 2 × (6 + 4) = 20 input channels, the convolution gives 16
        bad.layers[1] = .attention(AttentionSpec(heads: 2, keyChannels: 2, valueChannels: 4, scale: .nan, line: 2))
        #expect(throws: YOLOError.self) { try bad.validate() }
    }
}
