/// Darknet's shortcut (residual) layer: `activation(previous + from)`, element-wise, same shapes.
@_spi(Engine) public struct Shortcut: Layer {
    public let inputs: [Int]
    public let outputShape: Shape
    public let activation: Activation

    /// - Parameters: `previous` is the layer before, `from` the earlier layer to add.
    public init(previous: Int, from: Int, shape: Shape, activation: Activation) {
        self.inputs = [previous, from]
        self.outputShape = shape
        self.activation = activation
    }

    public var algorithm: String { "add" }

    /// The sum in pieces of at least `pieceValues` values, one per thread; 16 lanes at a time without an activation
    /// (the same bits: one addition a value either way).
    public func forward(_ io: LayerIO) {
        let (a, b, output, count) = (io.inputs[0], io.inputs[1], io.output, outputShape.count)
        let blocks = (count + 15) / 16
        Parallel.forRanges(blocks, threads: min(io.threads, max(1, count / Self.pieceValues))) { range in
            let (start, end) = (range.lowerBound * 16, min(count, range.upperBound * 16))
            var i = start
            if activation == .linear {
                while i + 16 <= end {
                    let sum = UnsafeRawPointer(a + i).loadUnaligned(as: SIMD16<Float>.self)
                        + UnsafeRawPointer(b + i).loadUnaligned(as: SIMD16<Float>.self)
                    UnsafeMutableRawPointer(output + i).storeBytes(of: sum, as: SIMD16<Float>.self)
                    i += 16
                }
            }
            while i < end {
                output[i] = activation(a[i] + b[i])
                i += 1
            }
        }
    }

    /// The fewest values a thread adds (below, waking a worker costs about what it saves).
    static let pieceValues = 65_536
}
