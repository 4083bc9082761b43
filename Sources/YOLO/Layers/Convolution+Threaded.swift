import Foundation

/// The im2col + GEMM path split over several workers, each with its own GEMM scratch.
extension Convolution {
    /// Output rows per band on the banded path (`ConvolutionPlan.Algorithm.gemmBands`), else nil.
    var bandRows: Int? {
        if case .gemmBands(let rows) = plan.algorithm { return rows }
        return nil
    }

    /// Scratch for the banded path: one band per worker (`maxThreads`).
    var bandScratch: Int {
        patchLength * (bandRows ?? 0) * outputShape.width * maxThreads
    }

    /// The output rows split into one contiguous, near-equal part per worker, each part into bands of
    /// `bandRows` rows, which the workers claim in order (`BandPieces`); each unfolds its band into its own
    /// part of the scratch, multiplies, and applies bias and activation. (Bands of the whole map would leave
    /// a worker idle for the odd one.)
    func forwardRowBlocked(_ io: LayerIO, bandRows band: Int) {
        let (outH, outW) = (outputShape.height, outputShape.width)
        let plane = outputShape.planeCount
        let workers = min(io.threads, maxThreads, (outH + band - 1) / band)
        let (input, output, scratch) = (io.input, io.output, io.scratch)
        // OpenBLAS's bits depend on the product's shape (`GEMM.multiplyWithBLAS`): there, parts of whole bands, so
        // that each band is the same product whatever the thread count.
        let wholeBands = !GEMM.usesOwnKernel
        let bands = BandPieces(count: outH, parts: workers, band: band, aligned: wholeBands)
        Parallel.forClaimed(bands.pieces, threads: workers) { worker, piece in
            let rows = bands.rows(piece)
            guard !rows.isEmpty else { return }
            multiplyBand(rows, input: input, columns: scratch + worker * patchLength * band * outW,
                         into: output + rows.lowerBound * outW, ldc: plane, gemmScratch: gemmScratch(scratch, worker: worker))
        }
    }

    /// Output rows `rows` of this layer, unfolded into `columns` (`patchLength × rows.count·width` floats) and
    /// multiplied, with bias and activation, into `output` (row `rows.lowerBound`'s first value; filters `ldc`
    /// floats apart). `input` is the whole input map, or only some of its rows: see `Im2col.unfold`'s
    /// `planeStride` and `rowOrigin` (`ConvolutionPair`'s window).
    func multiplyBand(_ rows: Range<Int>, input: UnsafePointer<Float>, planeStride: Int? = nil, rowOrigin: Int = 0,
                      columns: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, ldc: Int,
                      gemmScratch: UnsafeMutablePointer<Float>) {
        let outW = outputShape.width
        let n = rows.count * outW
        Im2col.unfold(input, shape: inputShape, size: size, stride: stride, padding: padding,
                      firstOutputRow: rows.lowerBound, outputRows: rows.count, outputWidth: outW, into: columns,
                      planeStride: planeStride, rowOrigin: rowOrigin)
        // A band's columns are in L2 and contiguous: the kernel reads them in place when its
        // blocks are whole (n a multiple of the block), instead of copying them block by block
        // (the 1x1 products, whose B rows are whole planes apart, are faster copied).
        GEMM.multiply(packed!, rows: 0..<filters, b: columns, ldb: n, n: n, c: output, ldc: ldc, bias: biases.pointer,
                      activation: activation, padded: n % GEMM.panelColumns == 0, scratch: gemmScratch)
    }

    /// Unfolds the column matrix in parallel (by rows), then cuts the product into the pieces of the plan's grid
    /// of filter × column parts (`ConvolutionPlanner.gemmGrid`, `ConvolutionPlan.Split.piece`), which the threads
    /// there are claim in order. Bias and activation run on each piece.
    func forwardThreaded(_ io: LayerIO, split: ConvolutionPlan.Split) {
        let plane = outputShape.planeCount
        let k = patchLength
        let columns: UnsafePointer<Float>
        if isPointwise {
            columns = io.input
        } else {
            let (input, scratch) = (io.input, io.scratch)
            Parallel.forRanges(k, threads: io.threads) { rows in
                Im2col.unfold(input, shape: inputShape, size: size, stride: stride, padding: padding,
                              outputHeight: outputShape.height, outputWidth: outputShape.width,
                              rows: rows, into: scratch)
            }
            columns = UnsafePointer(io.scratch)
        }
        let (output, scratch) = (io.output, io.scratch)
        let workers = min(io.threads, maxThreads)
        let grid = split
        Parallel.forClaimed(grid.pieces, threads: workers) { worker, piece in
            let (rows, span) = grid.piece(piece, rows: filters, columns: plane, rowAlignment: GEMM.rowAlignment,
                                          columnAlignment: GEMM.columnAlignment)
            guard !rows.isEmpty, !span.isEmpty else { return }
            GEMM.multiply(packed!, rows: rows, b: columns + span.lowerBound, ldb: plane, n: span.count,
                          c: output + span.lowerBound, ldc: plane, bias: biases.pointer,
                          activation: activation, scratch: gemmScratch(scratch, worker: worker))
        }
    }
}
