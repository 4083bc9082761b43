/// The geometry of an im2col + GEMM convolution and its first step, shared by layers with other
/// weight storage (`LUTConvolution`) so they run the path `Convolution` runs: `columns` gives the
/// GEMM's right-hand matrix `[inC·size² × outH·outW]` (im2col into scratch, or the input itself for a
/// 1×1 stride-1 unpadded convolution); the product, bias and activation are one `GEMM.multiply`.
public struct ConvolutionSteps: Sendable {
    public let inputShape: Shape
    public let outputShape: Shape
    public let size: Int
    public let stride: Int
    public let padding: Int
    public let activation: Activation

    public init(inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int, activation: Activation) {
        precondition(size >= 1 && stride >= 1 && padding >= 0, "ConvolutionSteps: bad geometry")
        self.inputShape = inputShape
        self.outputShape = Convolution.outputShape(input: inputShape, filters: filters, size: size, stride: stride, padding: padding)
        precondition(outputShape.width > 0 && outputShape.height > 0, "ConvolutionSteps: empty output")
        self.size = size
        self.stride = stride
        self.padding = padding
        self.activation = activation
    }

    /// Length of one filter: `inChannels · size²` (the GEMM's K).
    public var patchLength: Int { inputShape.channels * size * size }
    /// True when the input can feed the GEMM directly, without im2col.
    public var isPointwise: Bool { size == 1 && stride == 1 && padding == 0 }
    /// Floats of scratch `columns` needs.
    public var columnsCount: Int { isPointwise ? 0 : patchLength * outputShape.planeCount }

    /// Step 1: the column matrix of `input`, written to `scratch` unless the input serves as is.
    public func columns(_ input: UnsafePointer<Float>, scratch: UnsafeMutablePointer<Float>) -> UnsafePointer<Float> {
        guard !isPointwise else { return input }
        Im2col.unfold(input, shape: inputShape, size: size, stride: stride, padding: padding,
                      outputHeight: outputShape.height, outputWidth: outputShape.width, into: scratch)
        return UnsafePointer(scratch)
    }
}
