/// A 3×3 stride-1 padding-1 convolution computed directly from the input, a band of output rows at a
/// time, by the GEMM micro-kernel reading its taps in place (no im2col matrix, no Winograd transforms).
///
/// For a band of `r` output rows the worker copies input rows `y0 − 1 ..< y0 + r + 1` of every channel
/// into a zero-bordered buffer `P` whose rows are `paddedWidth = width + 2` floats apart (a few hundred
/// KB: it stays in L2). Output pixel `(row, x)` of the band then sits at flat index `p = row ·
/// paddedWidth + x`, and its tap `(c, ky, kx)` at `P[p + offsets[c·9 + ky·3 + kx]]`: 64 consecutive
/// output pixels read 64 consecutive floats per tap, which is one row of B for the kernel. The two
/// columns past each row's end (and the end of the last 64-run) are computed from border and stale
/// values and never read. The band's output `O` (`filters` planes of `outputStride` floats, same flat
/// layout) is consumed by the caller, e.g. pooled (`ConvolutionMaxPool`).
///
/// Sums run over `c, ky, kx` in the order of im2col's rows, so each output equals the im2col + GEMM
/// path's bit for bit (with bias and activation applied in registers the same way).
/// Only with a kernel family that has this fast path (`KernelFamily.FastPaths.directConvolutionMaxPool`).
struct DirectConvolution: Sendable {
    let inputShape: Shape
    let filters: Int
    let activation: Activation
    /// Output rows per band (even).
    let bandRows: Int
    /// Floats from one row of `P` or `O` to the next.
    let paddedWidth: Int
    /// Floats from one channel of `P` to the next (`(bandRows + 2) · paddedWidth`, rounded to 16).
    let channelStride: Int
    /// Floats from one filter's plane of `O` to the next (`bandRows · paddedWidth`, rounded to the tile's columns).
    let outputStride: Int
    let weights: PackedMatrix
    let biases: FloatBuffer
    /// `inChannels · 9` tap offsets into `P`.
    let offsets: SharedBuffer<Int>

    /// Bytes of the repacked filters and the tap table.
    var ownedBytes: Int { weights.byteCount + offsets.count * MemoryLayout<Int>.stride }

    /// Scratch bytes one worker's `P` and `O` may take together (most of a 1 MB L2).
    static let bandBytes = 512 * 1024

    /// - Parameter packed: `weights` already packed for `GEMM` (a `Convolution`'s im2col path holds
    ///   them), so they are not packed a second time; nil packs them here.
    /// - Precondition: `weights` is `filters × inChannels·9`, `biases` has `filters` floats, the
    ///   activation is piecewise linear (others are never fused: `ConvolutionMaxPool.qualifies`).
    /// - Parameter bandRows: output rows per band (even; `ConvolutionPlanner.directBandRows`).
    init(inputShape: Shape, filters: Int, activation: Activation, weights: FloatBuffer, biases: FloatBuffer,
         bandRows rows: Int, packed: PackedMatrix? = nil) {
        precondition(KernelFamily.active.has(.directConvolutionMaxPool),
                     "DirectConvolution: the \(KernelFamily.active.name) kernel family has no direct convolution")
        precondition(activation.isPiecewiseLinear, "DirectConvolution: only piecewise-linear activations are fused")
        precondition(weights.count == filters * inputShape.channels * 9 && biases.count == filters,
                     "DirectConvolution: weights or biases do not match \(filters) filters of \(inputShape)")
        self.inputShape = inputShape
        self.filters = filters
        self.activation = activation
        let paddedWidth = inputShape.width + 2
        self.paddedWidth = paddedWidth
        precondition(rows >= 2 && rows % 2 == 0, "DirectConvolution: bands of an even number of rows")
        bandRows = rows
        channelStride = ((rows + 2) * paddedWidth + 15) / 16 * 16
        outputStride = (rows * paddedWidth + GEMM.panelColumns - 1) / GEMM.panelColumns * GEMM.panelColumns
        precondition(packed.map { $0.rows == filters && $0.columns == inputShape.channels * 9 } ?? true,
                     "DirectConvolution: packed weights of another shape")
        self.weights = packed ?? PackedMatrix(rowMajor: weights, rows: filters, columns: inputShape.channels * 9)
        self.biases = biases
        let (stride, width) = (channelStride, paddedWidth)
        offsets = SharedBuffer(count: inputShape.channels * 9) { table in
            for c in 0..<inputShape.channels {
                for ky in 0..<3 {
                    for kx in 0..<3 { table[c * 9 + ky * 3 + kx] = c * stride + ky * width + kx }
                }
            }
        }
    }

    /// Floats of `P` (with room for the last 64-run's reads past the band).
    var paddedCount: Int { inputShape.channels * channelStride + 2 * GEMM.panelColumns }
    /// Floats of scratch one worker needs: `P`, then `O`.
    var scratchPerWorker: Int { paddedCount + filters * outputStride }

    /// Computes output rows `rows` (at most `bandRows`) of `input` (CHW) into `O`, which starts
    /// `paddedCount` floats into `scratch` (`scratchPerWorker` floats, 64-byte aligned); returns `O`.
    func band(_ rows: Range<Int>, input: UnsafePointer<Float>,
                     scratch: UnsafeMutablePointer<Float>) -> UnsafePointer<Float> {
        precondition(rows.count <= bandRows && rows.lowerBound >= 0 && rows.upperBound <= inputShape.height,
                     "DirectConvolution: band \(rows) of \(inputShape.height) rows, at most \(bandRows)")
        let padded = scratch
        let output = scratch + paddedCount
        fillPadded(rows, input: input, into: padded)
        let k = inputShape.channels * 9
        let columns = rows.count * paddedWidth
        let kernel = GEMM.tile!.offsets
        let (panelRows, panelColumns, code) = (GEMM.panelRows, GEMM.panelColumns, activation.code)
        let (a, table, bias) = (weights.pointer(), offsets.pointer, biases.pointer)
        for panel in 0 ..< (filters + panelRows - 1) / panelRows {
            let first = panel * panelRows
            let panelWeights = a + panel * k * panelRows
            for start in Swift.stride(from: 0, to: columns, by: panelColumns) {
                kernel(k, panelWeights, UnsafePointer(padded + start), table, output + first * outputStride + start,
                       outputStride, min(panelRows, filters - first), bias + first, code)
            }
        }
        return UnsafePointer(output)
    }

    /// Copies input rows `rows.lowerBound − 1 ..< rows.upperBound + 1` of every channel into `P`,
    /// with a zero column on each side and zero rows above and below the map.
    func fillPadded(_ rows: Range<Int>, input: UnsafePointer<Float>, into padded: UnsafeMutablePointer<Float>) {
        let (height, width) = (inputShape.height, inputShape.width)
        for c in 0..<inputShape.channels {
            let plane = input + c * height * width
            for j in 0 ..< rows.count + 2 {
                let target = padded + c * channelStride + j * paddedWidth
                let y = rows.lowerBound - 1 + j
                if y >= 0 && y < height {
                    target[0] = 0
                    (target + 1).update(from: plane + y * width, count: width)
                    target[width + 1] = 0
                } else {
                    target.update(repeating: 0, count: paddedWidth)
                }
            }
        }
    }
}
