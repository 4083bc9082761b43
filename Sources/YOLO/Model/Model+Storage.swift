/// How a model holds each convolution's parameters, for `yolo info` and the conversion tools.
@_spi(Engine) extension Model {
    /// The float parameters of convolution `layer` (codes expanded on the fly), or nil.
    public func parameters(ofLayer layer: Int) -> ConvolutionParameters? {
        convolutions[layer] ?? quantizedConvolutions[layer]?.expanded() ?? int8Convolutions[layer]?.expanded()
    }

    /// The activation quantization of every int8 convolution, for the planner.
    public var int8Quantization: [Int: Int8Quantization] {
        int8Convolutions.mapValues { Int8Quantization(input: $0.input, output: $0.output) }
    }

    /// How convolution `layer` is held (`f32` or e.g. `lut8 per-channel`) and the bytes of its
    /// weights (codes, table and scales) and biases.
    public func storage(ofLayer layer: Int) -> (name: String, bytes: Int) {
        if let q = quantizedConvolutions[layer] {
            return ("\(q.weights.type) \(q.weights.granularity)", q.weights.storedByteCount + 4 * q.biases.count)
        }
        if let p = convolutions[layer] { return ("f32", 4 * (p.weights.count + p.biases.count)) }
        if let p = int8Convolutions[layer] { return ("int8 per-channel", p.weights.storedByteCount + 4 * p.biases.count) }
        return ("none", 0)
    }
}
