/// How a model holds each convolution's parameters, for `yolo info` and the conversion tools.
@_spi(Engine) extension Model {
    /// The float parameters of convolution `layer` (codes expanded on the fly), or nil.
    public func parameters(ofLayer layer: Int) -> ConvolutionParameters? {
        convolutions[layer] ?? quantizedConvolutions[layer]?.expanded()
    }

    /// How convolution `layer` is held (`f32` or e.g. `lut8 per-channel`) and the bytes of its
    /// weights (codes, table and scales) and biases.
    public func storage(ofLayer layer: Int) -> (name: String, bytes: Int) {
        if let q = quantizedConvolutions[layer] {
            return ("\(q.weights.type) \(q.weights.granularity)", q.weights.storedByteCount + 4 * q.biases.count)
        }
        if let p = convolutions[layer] { return ("f32", 4 * (p.weights.count + p.biases.count)) }
        return ("none", 0)
    }
}
