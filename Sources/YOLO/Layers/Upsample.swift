/// Nearest-neighbour upsampling by an integer `stride`: `out[c][y][x] = scale · in[c][y / stride][x / stride]`.
@_spi(Engine) public struct Upsample: Layer {
    public let inputs: [Int]
    public let inputShape: Shape
    public let outputShape: Shape
    public let stride: Int
    /// Darknet's `scale` multiplier (1 in every published cfg).
    public let scale: Float

    public init(input: Int, inputShape: Shape, stride: Int, scale: Float = 1) {
        precondition(stride >= 1, "Upsample: stride must be positive")
        self.inputs = [input]
        self.inputShape = inputShape
        self.stride = stride
        self.scale = scale
        self.outputShape = Shape(channels: inputShape.channels, height: inputShape.height * stride,
                                 width: inputShape.width * stride)
    }

    public var algorithm: String { "nearest" }

    public func forward(_ io: LayerIO) {
        let (height, width) = (inputShape.height, inputShape.width)
        let outW = outputShape.width
        let (input, output) = (io.input, io.output)
        // Small maps get one thread from the planner (`ConvolutionPlanner.threadCap`).
        Parallel.forRanges(inputShape.channels, threads: io.threads) { channels in
            for c in channels {
                let source = input + c * height * width
                let destination = output + c * outputShape.planeCount
                for y in 0..<height {
                    let row = source + y * width
                    let first = destination + y * stride * outW
                    for x in 0..<width {
                        let value = row[x] * scale
                        (first + x * stride).update(repeating: value, count: stride)
                    }
                    for copy in 1..<stride {
                        (first + copy * outW).update(from: first, count: outW)
                    }
                }
            }
        }
    }
}
