/// The geometry of an im2col + GEMM convolution and its first step, shared by layers with other
/// weight storage (`LUTConvolution`) so they run the path `Convolution` runs: `columns` gives the
/// GEMM's right-hand matrix `[inC·size² × outH·outW]` (im2col into scratch, or the input itself for a
/// 1×1 stride-1 unpadded convolution); the product, bias and activation are one `GEMM.multiply`.
struct ConvolutionSteps: Sendable {
    let inputShape: Shape
    let outputShape: Shape
    let size: Int
    let stride: Int
    let padding: Int
    let activation: Activation

    init(inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int, activation: Activation) {
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
    var patchLength: Int { inputShape.channels * size * size }
    /// True when the input can feed the GEMM directly, without im2col.
    var isPointwise: Bool { size == 1 && stride == 1 && padding == 0 }
    /// Floats of scratch `columns` needs.
    var columnsCount: Int { isPointwise ? 0 : patchLength * outputShape.planeCount }

    /// Step 1: the column matrix of `input`, written to `scratch` unless the input serves as is.
    func columns(_ input: UnsafePointer<Float>, scratch: UnsafeMutablePointer<Float>) -> UnsafePointer<Float> {
        guard !isPointwise else { return input }
        Im2col.unfold(input, shape: inputShape, size: size, stride: stride, padding: padding,
                      outputHeight: outputShape.height, outputWidth: outputShape.width, into: scratch)
        return UnsafePointer(scratch)
    }
}
