/// A max-pool layer (2×2, stride 2) that can also compute the 3×3 convolution before it, so the
/// convolution's full-size output never goes to memory.
///
/// `Network` puts this layer in place of such a max-pool when the convolution's output has no other
/// reader. Fusion is the workspace's choice: when it does not keep the convolution's output
/// (`Workspace(for:keeping:)` with a set that leaves it out, as `Detector` and `yolo bench` do), it
/// skips the convolution layer and sets `LayerIO.fused`; this layer then runs the convolution band by
/// band (`DirectConvolution`, a few hundred KB per band, in L2) and pools each band as it is made.
/// Otherwise the convolution runs as its own layer and this one is a plain `MaxPool`.
///
/// The fused result equals convolution + max-pool computed separately with the im2col + GEMM path,
/// bit for bit (same sums in the same order, same comparisons).
@_spi(Engine) public struct ConvolutionMaxPool: FusingLayer {
    /// The max-pool this layer stands for.
    public let pool: MaxPool
    /// The index of the convolution layer it can compute, and that layer.
    public let convolutionIndex: Int
    public let convolution: Convolution
    public var fusedIndex: Int { convolutionIndex }
    let direct: DirectConvolution

    /// Inputs: the convolution's output (read when not fused), then the convolution's input.
    public var inputs: [Int] { pool.inputs + convolution.inputs }
    public var outputShape: Shape { pool.outputShape }
    public var scratchCount: Int { direct.scratchPerWorker * convolution.maxThreads }
    public var algorithm: String { "direct 3x3 conv + max, fused" }
    public var ownedBytes: Int { convolution.ownedBytes + direct.ownedBytes }

    /// A fused layer for `pool` reading `convolution` (layer `convolutionIndex`), or nil when the pair
    /// does not qualify: see `qualifies`.
    public init?(pool: MaxPool, convolution: Convolution, convolutionIndex: Int) {
        guard ConvolutionMaxPool.qualifies(pool: pool, convolution: convolution, convolutionIndex: convolutionIndex) else {
            return nil
        }
        let layer = ConvolutionPlanner.Layer(input: convolution.inputShape, filters: convolution.filters, size: 3, stride: 1,
                                             padding: 1)
        self.init(unchecked: pool, convolution: convolution, convolutionIndex: convolutionIndex,
                  bandRows: ConvolutionPlanner.directBandRows(layer))
    }

    /// The fused layer the network plan asked for (`ConvolutionPlan.Fusion.maxPool`), `bandRows` output rows per band.
    init(unchecked pool: MaxPool, convolution: Convolution, convolutionIndex: Int, bandRows: Int) {
        self.pool = pool
        self.convolution = convolution
        self.convolutionIndex = convolutionIndex
        direct = DirectConvolution(inputShape: convolution.inputShape, filters: convolution.filters,
                                   activation: convolution.activation, weights: convolution.weights,
                                   biases: convolution.biases, bandRows: bandRows, packed: convolution.packed)
    }

    /// True when `pool` reads only `convolution` (layer `convolutionIndex`) and the planner's rule lets it
    /// compute it (`ConvolutionPlanner.fusesWithMaxPool`).
    public static func qualifies(pool: MaxPool, convolution c: Convolution, convolutionIndex: Int) -> Bool {
        pool.inputs == [convolutionIndex] && ConvolutionPlanner.fusesWithMaxPool(
            ConvolutionPlanner.Layer(input: c.inputShape, filters: c.filters, size: c.size, stride: c.stride, padding: c.padding),
            activation: c.activation, pool: MaxPoolSpec(size: pool.size, stride: pool.stride, padding: pool.padding, line: 0),
            family: .active)
    }

    public func forward(_ io: LayerIO) {
        guard io.fused else {
            pool.forward(io)
            return
        }
        let input = io.inputs[1]
        let output = io.output
        let (direct, pooled) = (self.direct, pool.outputShape)
        let bandPoolRows = direct.bandRows / 2
        Parallel.forClaimedRanges(pooled.height, threads: min(io.threads, convolution.maxThreads)) { worker, rows in
            let scratch = io.scratch + worker * direct.scratchPerWorker
            for start in Swift.stride(from: rows.lowerBound, to: rows.upperBound, by: bandPoolRows) {
                let end = min(start + bandPoolRows, rows.upperBound)
                let band = direct.band(2 * start ..< 2 * end, input: input, scratch: scratch)
                for f in 0..<direct.filters {
                    for row in start..<end {
                        let top = band + f * direct.outputStride + 2 * (row - start) * direct.paddedWidth
                        MaxPool.poolPairs(top, top + direct.paddedWidth,
                                          into: output + (f * pooled.height + row) * pooled.width, count: pooled.width)
                    }
                }
            }
        }
    }
}
