/// The parameters of one convolution whose weights are LUT codes: the counterpart of
/// `ConvolutionParameters` for quantized layers. Biases stay float32.
@_spi(Engine) public struct QuantizedConvolution: Sendable {
    /// `[filters][inChannels·size²]` as codes.
    public var weights: LUTWeights
    /// `[filters]`.
    public var biases: FloatBuffer

    public init(weights: LUTWeights, biases: FloatBuffer) {
        precondition(biases.count == weights.rows, "QuantizedConvolution: \(biases.count) biases for \(weights.rows) filters")
        self.weights = weights
        self.biases = biases
    }

    /// The float parameters these codes stand for (weights expanded, biases shared).
    public func expanded() -> ConvolutionParameters {
        ConvolutionParameters(weights: weights.expanded(), biases: biases)
    }
}
