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

    public func forward(_ io: LayerIO) {
        let (a, b) = (io.inputs[0], io.inputs[1])
        for i in 0..<outputShape.count { io.output[i] = activation(a[i] + b[i]) }
    }
}
