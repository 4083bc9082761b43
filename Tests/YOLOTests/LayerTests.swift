import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

// Each layer against a plain-loop reference over a table of shapes, strides and paddings
// (ncnn's test_layer habit), odd sizes included.

/// Plain direct convolution: the definition, no im2col, no BLAS.
func referenceConvolution(_ input: [Float], shape: Shape, weights: [Float], biases: [Float], filters: Int,
                          size: Int, stride: Int, padding: Int, activation: Activation) -> (Shape, [Float]) {
    let out = Convolution.outputShape(input: shape, filters: filters, size: size, stride: stride, padding: padding)
    var result = [Float](repeating: 0, count: out.count)
    for f in 0..<filters {
        for oy in 0..<out.height {
            for ox in 0..<out.width {
                var sum: Double = 0
                for c in 0..<shape.channels {
                    for ky in 0..<size {
                        for kx in 0..<size {
                            let iy = oy * stride + ky - padding, ix = ox * stride + kx - padding
                            guard iy >= 0, iy < shape.height, ix >= 0, ix < shape.width else { continue }
                            let w = weights[((f * shape.channels + c) * size + ky) * size + kx]
                            sum += Double(w) * Double(input[(c * shape.height + iy) * shape.width + ix])
                        }
                    }
                }
                result[(f * out.height + oy) * out.width + ox] = activation(Float(sum) + biases[f])
            }
        }
    }
    return (out, result)
}

func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
    precondition(a.count == b.count)
    return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

struct ConvolutionCase: CustomTestStringConvertible, Sendable {
    var channels, height, width, filters, size, stride, padding: Int
    var activation: Activation
    var testDescription: String {
        "\(channels)x\(height)x\(width) → \(filters) k\(size) s\(stride) p\(padding) \(activation)"
    }
}

let convolutionCases: [ConvolutionCase] = [
    .init(channels: 3, height: 13, width: 13, filters: 4, size: 3, stride: 1, padding: 1, activation: .leaky),
    .init(channels: 5, height: 7, width: 9, filters: 3, size: 3, stride: 1, padding: 1, activation: .linear),
    .init(channels: 2, height: 8, width: 5, filters: 6, size: 3, stride: 2, padding: 1, activation: .relu),
    // Stride 2 on rows wide enough for im2col's 8-at-a-time path, with odd widths and scalar tails.
    .init(channels: 3, height: 9, width: 41, filters: 5, size: 3, stride: 2, padding: 1, activation: .leaky),
    .init(channels: 2, height: 6, width: 36, filters: 3, size: 3, stride: 2, padding: 0, activation: .linear),
    .init(channels: 2, height: 5, width: 35, filters: 4, size: 1, stride: 2, padding: 0, activation: .leaky),
    .init(channels: 4, height: 9, width: 11, filters: 5, size: 1, stride: 1, padding: 0, activation: .leaky),
    .init(channels: 3, height: 6, width: 6, filters: 2, size: 1, stride: 2, padding: 0, activation: .logistic),
    .init(channels: 1, height: 5, width: 7, filters: 3, size: 5, stride: 1, padding: 2, activation: .leaky),
    .init(channels: 3, height: 10, width: 7, filters: 2, size: 3, stride: 1, padding: 0, activation: .linear),
    .init(channels: 2, height: 4, width: 4, filters: 3, size: 3, stride: 3, padding: 2, activation: .linear),
    .init(channels: 17, height: 3, width: 2, filters: 9, size: 3, stride: 1, padding: 1, activation: .leaky),
    .init(channels: 2, height: 1, width: 1, filters: 2, size: 1, stride: 1, padding: 1, activation: .linear),
]

@Suite struct ConvolutionTests {
    @Test(arguments: convolutionCases)
    func matchesDirectConvolution(_ c: ConvolutionCase) {
        var random = SeededRandom(seed: UInt64(c.channels * 1000 + c.size * 10 + c.stride))
        let shape = Shape(channels: c.channels, height: c.height, width: c.width)
        let input = random.floats(shape.count)
        let weights = random.floats(c.filters * c.channels * c.size * c.size)
        let biases = random.floats(c.filters)
        let layer = Convolution(input: -1, inputShape: shape, filters: c.filters, size: c.size, stride: c.stride,
                                padding: c.padding, activation: c.activation,
                                weights: FloatBuffer(weights), biases: FloatBuffer(biases))
        let (expectedShape, expected) = referenceConvolution(input, shape: shape, weights: weights, biases: biases,
            filters: c.filters, size: c.size, stride: c.stride, padding: c.padding, activation: c.activation)
        #expect(layer.outputShape == expectedShape)
        // Float32 sums in a different order than the Double reference: a few ulps of the sum's magnitude.
        #expect(maxDifference(runLayer(layer, inputs: [input]), expected) < 1e-5)
    }
}

/// Darknet's max-pool by definition: padded cells are -infinity and never win.
func referenceMaxPool(_ input: [Float], shape: Shape, size: Int, stride: Int, padding: Int) -> [Float] {
    let out = MaxPool.outputShape(input: shape, size: size, stride: stride, padding: padding)
    let offset = -(padding / 2)
    var result: [Float] = []
    for c in 0..<shape.channels {
        for oy in 0..<out.height {
            for ox in 0..<out.width {
                var best = -Float.infinity
                for ky in 0..<size {
                    for kx in 0..<size {
                        let iy = oy * stride + offset + ky, ix = ox * stride + offset + kx
                        let v = (iy >= 0 && iy < shape.height && ix >= 0 && ix < shape.width)
                            ? input[(c * shape.height + iy) * shape.width + ix] : -Float.infinity
                        best = max(best, v)
                    }
                }
                result.append(best)
            }
        }
    }
    return result
}

@Suite struct PoolingAndDataMovementTests {
    @Test(arguments: [(2, 2, 1), (2, 1, 1), (3, 1, 2), (3, 2, 2), (2, 2, 0), (5, 3, 4), (1, 1, 0)])
    func maxPoolMatchesDefinition(size: Int, stride: Int, padding: Int) {
        for (h, w) in [(13, 13), (7, 10), (1, 1), (6, 5)] {
            let shape = Shape(channels: 3, height: h, width: w)
            guard (h + padding - size) / stride + 1 > 0, (w + padding - size) / stride + 1 > 0 else { continue }
            var random = SeededRandom(seed: UInt64(size * 100 + stride * 10 + padding + h))
            // All values negative, so a padded cell read as 0 would win and be caught.
            let input = random.floats(shape.count, -2, -0.5)
            let layer = MaxPool(input: -1, inputShape: shape, size: size, stride: stride, padding: padding)
            #expect(runLayer(layer, inputs: [input]) == referenceMaxPool(input, shape: shape, size: size, stride: stride, padding: padding))
        }
    }

    @Test func tinyYOLOPoolKeepsThirteen() {
        let layer = MaxPool(input: -1, inputShape: Shape(channels: 512, height: 13, width: 13), size: 2, stride: 1, padding: 1)
        #expect(layer.outputShape == Shape(channels: 512, height: 13, width: 13))
        #expect(layer.offset == 0)
    }

    @Test(arguments: [1, 2, 3])
    func upsampleIsNearestNeighbour(stride: Int) {
        let shape = Shape(channels: 2, height: 3, width: 5)
        var random = SeededRandom(seed: 7)
        let input = random.floats(shape.count)
        let layer = Upsample(input: -1, inputShape: shape, stride: stride, scale: 1)
        let output = runLayer(layer, inputs: [input])
        let out = layer.outputShape
        #expect(out == Shape(channels: 2, height: 3 * stride, width: 5 * stride))
        for c in 0..<2 {
            for y in 0..<out.height {
                for x in 0..<out.width {
                    #expect(output[(c * out.height + y) * out.width + x] == input[(c * 3 + y / stride) * 5 + x / stride])
                }
            }
        }
    }

    @Test func routeConcatenatesInCfgOrder() {
        let a = Shape(channels: 2, height: 3, width: 3), b = Shape(channels: 3, height: 3, width: 3)
        let va = (0..<a.count).map(Float.init), vb = (0..<b.count).map { Float(1000 + $0) }
        let layer = Route(inputs: [4, 1], inputShapes: [a, b])
        #expect(layer.outputShape == Shape(channels: 5, height: 3, width: 3))
        #expect(runLayer(layer, inputs: [va, vb]) == va + vb)
    }

    @Test func routeGroupTakesChannelSlice() {
        let a = Shape(channels: 4, height: 2, width: 2)
        let va = (0..<a.count).map(Float.init)
        let layer = Route(inputs: [0], inputShapes: [a], groups: 2, groupIndex: 1)
        #expect(layer.outputShape == Shape(channels: 2, height: 2, width: 2))
        #expect(runLayer(layer, inputs: [va]) == Array(va[8...]))
    }

    /// Copies of more than `Route.parallelBytes` are shared by the threads in blocks: the same bytes at any count,
    /// a part not a multiple of the block included.
    @Test(arguments: [1, 2, 3])
    func routeCopiesLargePartsOnThreads(threads: Int) {
        let a = Shape(channels: 3, height: 100, width: 701), b = Shape(channels: 2, height: 100, width: 701)
        var random = SeededRandom(seed: 12)
        let va = random.floats(a.count), vb = random.floats(b.count)
        #expect((a.count + b.count) * 4 > Route.parallelBytes)
        #expect(runLayer(Route(inputs: [4, 1], inputShapes: [a, b]), inputs: [va, vb], threads: threads) == va + vb)
        let half = Route(inputs: [0], inputShapes: [Shape(channels: 6, height: 100, width: 701)], groups: 2, groupIndex: 1)
        let whole = random.floats(6 * 100 * 701)
        #expect(runLayer(half, inputs: [whole], threads: threads) == Array(whole[(3 * 100 * 701)...]))
    }

    /// A shortcut large enough for the threads to share (`Shortcut.pieceValues`), of a size that leaves a tail after
    /// the 16-lane blocks: the same values as the plain sum at every thread count.
    @Test(arguments: Activation.allCases, [1, 3])
    func largeShortcutOnThreads(activation: Activation, threads: Int) {
        let shape = Shape(channels: 3, height: 200, width: 229)
        #expect(shape.count > 2 * Shortcut.pieceValues && shape.count % 16 != 0)
        var random = SeededRandom(seed: 13)
        let a = random.floats(shape.count), b = random.floats(shape.count)
        let layer = Shortcut(previous: 2, from: 0, shape: shape, activation: activation)
        #expect(runLayer(layer, inputs: [a, b], threads: threads) == zip(a, b).map { activation($0 + $1) })
    }

    @Test(arguments: Activation.allCases)
    func shortcutAddsThenActivates(activation: Activation) {
        let shape = Shape(channels: 3, height: 4, width: 5)
        var random = SeededRandom(seed: 11)
        let a = random.floats(shape.count), b = random.floats(shape.count)
        let layer = Shortcut(previous: 2, from: 0, shape: shape, activation: activation)
        #expect(runLayer(layer, inputs: [a, b]) == zip(a, b).map { activation($0 + $1) })
    }

    @Test func activationsFollowDarknet() {
        #expect(Activation.leaky(-2) == -0.2)
        #expect(Activation.leaky(3) == 3)
        #expect(Activation.relu(-1) == 0)
        #expect(abs(Activation.logistic(0) - 0.5) < 1e-7)
        var values: [Float] = [-1, 0, 2]
        values.withUnsafeMutableBufferPointer { Activation.leaky.applyBiased($0.baseAddress!, count: 3, bias: 0.5) }
        #expect(values == [Float(-0.5) * 0.1, 0.5, 2.5])
    }
}
