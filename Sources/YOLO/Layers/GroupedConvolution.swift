import Foundation

/// A convolution whose filters are split into channel groups (ONNX `Conv` with `group` > 1; YOLO11's depthwise
/// 3×3 convolutions, where every channel is its own group): output channel `f` of group `g = f / (filters /
/// groups)` sums only input channels `g · inC/groups ..< (g + 1) · inC/groups`. Weights are `[filters][inC /
/// groups][size][size]`.
///
/// The plan is `ConvolutionPlan.Algorithm.grouped`: a direct sum per output row, the row kept in the output
/// while every (channel, kernel row, kernel column) term is added along it (eight lanes at a time at stride
/// 1), then bias and activation in one pass. One generic body, compiled once for the baseline ISA, serves
/// every kernel family; the threads split the output channels. No scratch.
@_spi(Engine) public struct GroupedConvolution: Layer {
    public let inputs: [Int]
    public let inputShape: Shape
    public let outputShape: Shape
    public let size: Int
    public let stride: Int
    public let padding: Int
    public let groups: Int
    public let activation: Activation
    /// `filters × (inChannels / groups) · size²` floats.
    public let weights: FloatBuffer
    public let biases: FloatBuffer

    /// - Precondition: the shapes divide into `groups` and the weight and bias counts match (the loaders check).
    public init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int, groups: Int,
                activation: Activation, weights: FloatBuffer, biases: FloatBuffer) {
        precondition(size >= 1 && stride >= 1 && padding >= 0 && groups >= 1, "GroupedConvolution: bad geometry")
        precondition(inputShape.channels % groups == 0 && filters % groups == 0, "GroupedConvolution: groups do not divide the channels")
        precondition(weights.count == filters * (inputShape.channels / groups) * size * size && biases.count == filters,
                     "GroupedConvolution: \(weights.count) weights, \(biases.count) biases for \(filters) filters")
        self.inputs = [input]
        self.inputShape = inputShape
        self.outputShape = Convolution.outputShape(input: inputShape, filters: filters, size: size, stride: stride, padding: padding)
        precondition(outputShape.width > 0 && outputShape.height > 0, "GroupedConvolution: empty output")
        (self.size, self.stride, self.padding, self.groups) = (size, stride, padding, groups)
        (self.activation, self.weights, self.biases) = (activation, weights, biases)
    }

    public var algorithm: String { "grouped direct" }

    public func forward(_ io: LayerIO) {
        let input = UncheckedSendable(io.input), output = UncheckedSendable(io.output)
        Parallel.forRanges(outputShape.channels, threads: io.threads) { filters in
            for f in filters { channel(f, input: input.value, output: output.value) }
        }
    }

    /// Output channel `f`, row by row.
    func channel(_ f: Int, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let (height, width) = (inputShape.height, inputShape.width)
        let (outHeight, outWidth) = (outputShape.height, outputShape.width)
        let perGroup = inputShape.channels / groups
        let firstChannel = f / (outputShape.channels / groups) * perGroup
        let filter = weights.pointer + f * perGroup * size * size
        // Output columns whose input column ox·stride − padding + kx lies inside the row, per kx.
        func columns(_ kx: Int) -> Range<Int> {
            let offset = kx - padding
            let low = offset >= 0 ? 0 : (-offset + stride - 1) / stride
            let high = width - 1 - offset < 0 ? 0 : min(outWidth, (width - 1 - offset) / stride + 1)
            return low..<max(low, high)
        }
        for oy in 0..<outHeight {
            let row = output + (f * outHeight + oy) * outWidth
            row.initialize(repeating: 0, count: outWidth)
            for c in 0..<perGroup {
                let plane = input + (firstChannel + c) * height * width
                for ky in 0..<size {
                    let iy = oy * stride - padding + ky
                    guard iy >= 0, iy < height else { continue }
                    let source = plane + iy * width
                    for kx in 0..<size {
                        let w = filter[(c * size + ky) * size + kx]
                        Self.addScaled(row, source, w, columns: columns(kx), stride: stride, offset: kx - padding)
                    }
                }
            }
            activation.applyBiased(row, count: outWidth, bias: biases.pointer[f])
        }
    }

    /// `row[x] += w · source[x · stride + offset]` for `x` in `columns`.
    @inline(__always)
    static func addScaled(_ row: UnsafeMutablePointer<Float>, _ source: UnsafePointer<Float>, _ w: Float, columns: Range<Int>,
                          stride: Int, offset: Int) {
        var x = columns.lowerBound
        if stride == 1 {
            let scale = SIMD8<Float>(repeating: w)
            while x + 8 <= columns.upperBound {
                let s = UnsafeRawPointer(source + x + offset).loadUnaligned(as: SIMD8<Float>.self)
                let r = UnsafeRawPointer(row + x).loadUnaligned(as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(row + x).storeBytes(of: r + scale * s, as: SIMD8<Float>.self)
                x += 8
            }
        }
        while x < columns.upperBound {
            row[x] += w * source[x * stride + offset]
            x += 1
        }
    }
}
