/// The im2col + GEMM path split over several workers, each calling BLAS single-threaded.
extension Convolution {
    /// Unfolds the column matrix in parallel (by rows), then splits the product along its longer
    /// side: output columns (pixels) for large maps, filters for small ones. Bias and activation run
    /// on each worker's own part.
    func forwardThreaded(_ io: LayerIO) {
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
        let output = io.output
        let workers = io.threads
        if plane >= filters {
            Parallel.forRanges(workers, threads: workers) { parts in
                for worker in parts {
                    let span = Parallel.alignedPart(worker, of: workers, count: plane, alignment: 16)
                    guard !span.isEmpty else { continue }
                    BLAS.sgemm(m: filters, n: span.count, k: k, a: weights.pointer, lda: k,
                               b: columns + span.lowerBound, ldb: plane,
                               c: output + span.lowerBound, ldc: plane)
                    for f in 0..<filters {
                        activation.applyBiased(output + f * plane + span.lowerBound, count: span.count, bias: biases[f])
                    }
                }
            }
        } else {
            Parallel.forRanges(filters, threads: workers) { span in
                BLAS.sgemm(m: span.count, n: plane, k: k, a: weights.pointer + span.lowerBound * k, lda: k,
                           b: columns, ldb: plane, c: output + span.lowerBound * plane, ldc: plane)
                for f in span {
                    activation.applyBiased(output + f * plane, count: plane, bias: biases[f])
                }
            }
        }
    }
}
