import Foundation

/// A 2-D convolution with bias and activation; batch norm is already folded into weights and biases.
///
/// Weights are `[filters][inChannels][size][size]`, row-major. The product is one `sgemm`:
/// `output[filters × outH·outW] = weights[filters × inC·size²] · columns[inC·size² × outH·outW]`,
/// where `columns` is the im2col unfolding of the input (a 1×1 stride-1 unpadded convolution uses
/// the input itself). Bias and activation then run in a single pass over the output.
///
/// 3×3 stride-1 convolutions can instead use Winograd (`ConvolutionAlgorithm`, see
/// `Convolution+Winograd.swift`); the choice and the transformed filters are fixed at init.
/// Products run through `GEMM` on weights packed at init (`packed`), with bias and activation fused
/// into the product's store. Work is split over `LayerIO.threads` workers.
@_spi(Engine) public struct Convolution: Layer {
    public let inputs: [Int]
    public let inputShape: Shape
    public let outputShape: Shape
    public let size: Int
    public let stride: Int
    public let padding: Int
    public let activation: Activation
    /// `filters × inChannels·size²` floats.
    public let weights: FloatBuffer
    /// `filters` floats.
    public let biases: FloatBuffer
    /// The algorithm this layer runs (never `.auto`).
    public let method: ConvolutionAlgorithm
    /// The Winograd geometry and transformed filters, when `method` is a Winograd one.
    let winograd: WinogradPlan?
    /// `weights` packed for `GEMM` (the GEMM path; nil with Winograd).
    public let packed: PackedMatrix?
    /// The most threads a pass gives this layer: its scratch holds that many workers' parts.
    public let maxThreads: Int

    /// - Parameter algorithm: how to compute; `.auto` chooses Winograd where it is faster and exact
    ///   enough (`preferredAlgorithm`), a Winograd choice that does not apply falls back to `.im2col`.
    /// - Parameter threads: the most threads a pass will give the layer (`maxThreads`).
    /// - Precondition: weight and bias counts match the shapes (the loaders check this for user files).
    public init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int,
                activation: Activation, weights: FloatBuffer, biases: FloatBuffer,
                algorithm: ConvolutionAlgorithm = .auto, threads: Int = Threading.defaultThreadCount) {
        precondition(size >= 1 && stride >= 1 && padding >= 0, "Convolution: bad geometry")
        precondition(weights.count == filters * inputShape.channels * size * size,
                     "Convolution: \(weights.count) weights for \(filters)x\(inputShape.channels)x\(size)x\(size)")
        precondition(biases.count == filters, "Convolution: \(biases.count) biases for \(filters) filters")
        self.inputs = [input]
        self.inputShape = inputShape
        self.outputShape = Convolution.outputShape(input: inputShape, filters: filters, size: size,
                                                   stride: stride, padding: padding)
        precondition(outputShape.width > 0 && outputShape.height > 0, "Convolution: empty output")
        self.size = size
        self.stride = stride
        self.padding = padding
        self.activation = activation
        self.weights = weights
        self.biases = biases
        let maxThreads = max(1, threads)
        self.maxThreads = maxThreads
        let applies = size == 3 && stride == 1 && padding == 1
        var method = algorithm == .auto ? Convolution.preferredAlgorithm(input: inputShape, filters: filters, size: size,
                                                                          stride: stride, padding: padding) : algorithm
        if method.winogradTile != nil && !applies { method = .im2col }
        self.method = method
        self.winograd = method.winogradTile.map {
            WinogradPlan(m: $0, inChannels: inputShape.channels, filters: filters,
                         height: inputShape.height, width: inputShape.width, weights: weights,
                         maxWorkers: maxThreads)
        }
        self.packed = method.winogradTile == nil
            ? PackedMatrix(rowMajor: weights, rows: filters, columns: inputShape.channels * size * size) : nil
    }

    /// What `.auto` picks for a 3×3 stride-1 padding-1 layer with at least 16 input channels:
    /// Winograd F(2×2) on maps up to 16×16 (its U is 2.25× smaller than F(4×4)'s, and OpenBLAS
    /// repacks U on every call, which dominates on small maps), F(4×4) on larger maps. Otherwise
    /// the GEMM path: with fewer channels the tile transforms cost more than the multiplications
    /// they save (yolov3-tiny at one thread: layer 2, 16 channels, 5.0 ms F(4×4) vs 5.4 ms im2col;
    /// layer 0, 3 channels, 7.3 ms vs 3.2 ms).
    public static func preferredAlgorithm(input: Shape, filters: Int, size: Int, stride: Int, padding: Int)
        -> ConvolutionAlgorithm {
        guard size == 3, stride == 1, padding == 1, input.channels >= 16 else { return .im2col }
        guard input.width <= 16 && input.height <= 16 else { return .winograd4 }
        return KernelFamily.active.smallMapWinogradTile == 4 ? .winograd4 : .winograd2
    }

    /// Darknet's output size: `(in + 2·padding − size) / stride + 1` on each axis.
    public static func outputShape(input: Shape, filters: Int, size: Int, stride: Int, padding: Int) -> Shape {
        Shape(channels: filters,
              height: (input.height + 2 * padding - size) / stride + 1,
              width: (input.width + 2 * padding - size) / stride + 1)
    }

    public var filters: Int { outputShape.channels }
    /// Length of one filter: `inChannels · size²` (the GEMM's K).
    public var patchLength: Int { inputShape.channels * size * size }
    /// True when the input can feed the GEMM directly, without im2col.
    public var isPointwise: Bool { size == 1 && stride == 1 && padding == 0 }

    public var scratchCount: Int {
        if let winograd { return winograd.scratchCount }
        return columnsScratch + gemmScratch * maxThreads
    }

    /// Scratch floats for the unfolded input (whole, or one band per worker when `rowBlocked`),
    /// rounded up so the GEMM scratch after it stays 64-byte aligned.
    var columnsScratch: Int {
        let count = isPointwise ? 0 : max(patchLength * outputShape.planeCount, rowBlocked ? rowBlockedScratch : 0)
        return lineRounded(count)
    }

    /// One worker's GEMM scratch (after `columnsScratch`).
    var gemmScratch: Int { GEMM.scratchCount }

    /// Worker `worker`'s GEMM scratch within `scratch`.
    func gemmScratch(_ scratch: UnsafeMutablePointer<Float>, worker: Int) -> UnsafeMutablePointer<Float> {
        scratch + columnsScratch + worker * gemmScratch
    }

    public var algorithm: String {
        if let winograd { return "winograd F(\(winograd.transform.m),3)" }
        return isPointwise ? "1x1 gemm" : "im2col+gemm"
    }

    public func forward(_ io: LayerIO) {
        if let winograd {
            if winograd.transposed {
                forwardWinogradTransposed(io, plan: winograd)
            } else if winograd.rowVectorized {
                forwardWinogradRows(io, plan: winograd)
            } else {
                forwardWinograd(io, plan: winograd)
            }
        } else if rowBlocked {
            forwardRowBlocked(io)
        } else if io.threads > 1 {
            forwardThreaded(io)
        } else {
            forwardGEMM(io)
        }
    }

    /// The plain single-threaded path: im2col (unless pointwise), one GEMM with bias and activation.
    func forwardGEMM(_ io: LayerIO) {
        let steps = ConvolutionSteps(inputShape: inputShape, filters: filters, size: size, stride: stride,
                                     padding: padding, activation: activation)
        let columns = steps.columns(io.input, scratch: io.scratch)
        let plane = outputShape.planeCount
        GEMM.multiply(packed!, rows: 0..<filters, b: columns, ldb: plane, n: plane, c: io.output, ldc: plane,
                      bias: biases.pointer, activation: activation, scratch: gemmScratch(io.scratch, worker: 0))
    }
}
