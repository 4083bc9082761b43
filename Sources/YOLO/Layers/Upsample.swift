/// Nearest-neighbour upsampling by an integer `stride`: `out[c][y][x] = scale · in[c][y / stride][x / stride]`.
@_spi(Engine) public struct Upsample: Layer {
    public let inputs: [Int]
    public let inputShape: Shape
    public let outputShape: Shape
    public let stride: Int
    /// Darknet's `scale` multiplier (1 in every published cfg).
    public let scale: Float
    /// True when the tensors are u8 codes (between int8 layers; `scale` is then 1).
    public let bytes: Bool

    public init(input: Int, inputShape: Shape, stride: Int, scale: Float = 1, bytes: Bool = false) {
        precondition(stride >= 1, "Upsample: stride must be positive")
        precondition(!bytes || scale == 1, "Upsample: codes are copied, so their scale must be 1")
        self.bytes = bytes
        self.inputs = [input]
        self.inputShape = inputShape
        self.stride = stride
        self.scale = scale
        self.outputShape = Shape(channels: inputShape.channels, height: inputShape.height * stride,
                                 width: inputShape.width * stride)
    }

    public var algorithm: String { bytes ? "nearest (u8)" : "nearest" }

    public func forward(_ io: LayerIO) {
        let (input, output) = (io.input, io.output)
        // Small maps get one thread from the planner (`ConvolutionPlanner.threadCap`).
        Parallel.forRanges(inputShape.channels, threads: io.threads) { channels in
            if bytes && stride == 2 {
                doubleBytes(channels, UnsafeRawPointer(input), UnsafeMutableRawPointer(output))
            } else if bytes {
                spread(channels, UnsafeRawPointer(input).assumingMemoryBound(to: UInt8.self),
                       UnsafeMutableRawPointer(output).assumingMemoryBound(to: UInt8.self)) { $0 }
            } else {
                spread(channels, input, output) { $0 * scale }
            }
        }
    }

    /// Codes at stride 2: each code as a 16-bit pair (`code · 0x0101`) into both of its output rows, one unit-stride
    /// loop LLVM vectorizes (where `spread` stores each pair apart and copies each row with `memmove`).
    func doubleBytes(_ channels: Range<Int>, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
        let (height, width) = (inputShape.height, inputShape.width)
        let outW = outputShape.width
        for c in channels {
            let source = (input + c * height * width).assumingMemoryBound(to: UInt8.self)
            let destination = output + c * outputShape.planeCount
            for y in 0..<height {
                let row = source + y * width
                let first = (destination + 2 * y * outW).assumingMemoryBound(to: UInt16.self)
                let second = (destination + (2 * y + 1) * outW).assumingMemoryBound(to: UInt16.self)
                for x in 0..<width {
                    let pair = UInt16(row[x]) &* 0x0101
                    first[x] = pair
                    second[x] = pair
                }
            }
        }
    }

    /// Each value of `channels`, mapped by `value`, copied to its `stride × stride` block.
    @inline(__always)
    func spread<Element>(_ channels: Range<Int>, _ input: UnsafePointer<Element>, _ output: UnsafeMutablePointer<Element>,
                         _ value: (Element) -> Element) {
        let (height, width) = (inputShape.height, inputShape.width)
        let outW = outputShape.width
        for c in channels {
            let source = input + c * height * width
            let destination = output + c * outputShape.planeCount
            for y in 0..<height {
                let row = source + y * width
                let first = destination + y * stride * outW
                for x in 0..<width {
                    (first + x * stride).update(repeating: value(row[x]), count: stride)
                }
                for copy in 1..<stride {
                    (first + copy * outW).update(from: first, count: outW)
                }
            }
        }
    }
}
