import Foundation

/// A 2-D convolution with bias and activation; batch norm is already folded into weights and biases.
///
/// Weights are `[filters][inChannels][size][size]`, row-major. The product is one `sgemm`:
/// `output[filters × outH·outW] = weights[filters × inC·size²] · columns[inC·size² × outH·outW]`,
/// where `columns` is the im2col unfolding of the input (a 1×1 stride-1 unpadded convolution uses
/// the input itself). Bias and activation then run in a single pass over the output.
///
/// 3×3 stride-1 convolutions can instead use Winograd (see `Convolution+Winograd.swift`). How the layer
/// runs is its `plan` (`ConvolutionPlanner`), fixed at init with the transformed filters. Products run
/// through `GEMM` on weights packed at init (`packed`), with bias and activation fused into the
/// product's store. Work is split over `LayerIO.threads` workers.
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
    /// How this layer runs (`ConvolutionPlanner`).
    public let plan: ConvolutionPlan
    /// The Winograd geometry and transformed filters, when the plan is a Winograd one.
    let winograd: WinogradPlan?
    /// `weights` packed for `GEMM` (the GEMM path; nil with Winograd).
    public let packed: PackedMatrix?

    /// The algorithm this layer runs (never `.auto`).
    public var method: ConvolutionAlgorithm {
        guard let choice = plan.winograd else { return .im2col }
        return choice.m == 2 ? .winograd2 : choice.m == 4 ? .winograd4 : .winograd6
    }
    /// The most threads a pass gives this layer: its scratch holds that many workers' parts.
    public var maxThreads: Int { plan.maxThreads }

    /// A layer planned on its own (`ConvolutionPlanner.plan`, no fusion).
    /// - Parameter algorithm: how to compute; `.auto` lets the planner choose, a Winograd choice that does not
    ///   apply falls back to `.im2col`.
    /// - Parameter threads: the most threads a pass will give the layer (`maxThreads`).
    public init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int,
                activation: Activation, weights: FloatBuffer, biases: FloatBuffer,
                algorithm: ConvolutionAlgorithm = .auto, threads: Int = Threading.defaultThreadCount) {
        let layer = ConvolutionPlanner.Layer(input: inputShape, filters: filters, size: size, stride: stride, padding: padding)
        self.init(input: input, inputShape: inputShape, filters: filters, size: size, stride: stride, padding: padding,
                  activation: activation, weights: weights, biases: biases,
                  plan: ConvolutionPlanner.plan(layer, algorithm: algorithm, threads: threads))
    }

    /// A layer that runs `plan`.
    /// - Precondition: weight and bias counts match the shapes (the loaders check this for user files); the
    ///   plan is for float weights and its Winograd choice, if any, for a 3×3 stride-1 padding-1 layer.
    public init(input: Int, inputShape: Shape, filters: Int, size: Int, stride: Int, padding: Int,
                activation: Activation, weights: FloatBuffer, biases: FloatBuffer, plan: ConvolutionPlan) {
        precondition(size >= 1 && stride >= 1 && padding >= 0, "Convolution: bad geometry")
        precondition(plan.weights == .float, "Convolution: a plan for LUT codes (LUTConvolution runs those)")
        precondition(plan.winograd == nil || (size == 3 && stride == 1 && padding == 1), "Convolution: Winograd needs 3x3/1 pad 1")
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
        self.plan = plan
        self.winograd = plan.winograd.map {
            WinogradPlan(choice: $0, inChannels: inputShape.channels, filters: filters,
                         height: inputShape.height, width: inputShape.width, weights: weights,
                         maxWorkers: plan.maxThreads)
        }
        self.packed = plan.winograd == nil
            ? PackedMatrix(rowMajor: weights, rows: filters, columns: inputShape.channels * size * size) : nil
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

    /// Scratch floats for the unfolded input (whole, or one band per worker on the banded path),
    /// rounded up so the GEMM scratch after it stays 64-byte aligned.
    var columnsScratch: Int {
        let count = isPointwise ? 0 : max(patchLength * outputShape.planeCount, bandScratch)
        return lineRounded(count)
    }

    /// One worker's GEMM scratch (after `columnsScratch`).
    var gemmScratch: Int { GEMM.scratchCount }

    /// Worker `worker`'s GEMM scratch within `scratch`.
    func gemmScratch(_ scratch: UnsafeMutablePointer<Float>, worker: Int) -> UnsafeMutablePointer<Float> {
        scratch + columnsScratch + worker * gemmScratch
    }

    public var ownedBytes: Int { (packed?.byteCount ?? 0) + (winograd?.ownedBytes ?? 0) }

    public var algorithm: String {
        if let winograd { return "winograd F(\(winograd.transform.m),3)" }
        return isPointwise ? "1x1 gemm" : "im2col+gemm"
    }

    /// Runs the plan's path.
    public func forward(_ io: LayerIO) {
        switch plan.algorithm {
        case .winograd(let choice):
            switch choice.variant {
            case .transposed: forwardWinogradTransposed(io, plan: winograd!)
            case .rows: forwardWinogradRows(io, plan: winograd!)
            case .tiles8: forwardWinograd(io, plan: winograd!)
            }
        case .gemmBands(let rows):
            forwardRowBlocked(io, bandRows: rows)
        case .gemm(let split):
            if io.threads > 1 { forwardThreaded(io, split: split) } else { forwardGEMM(io) }
        case .int8Direct, .int8Winograd, .grouped:  // int8 and grouped plans are run by their own layers; here the plain product
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
