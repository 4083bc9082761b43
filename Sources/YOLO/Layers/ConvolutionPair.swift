/// A convolution that can also compute the convolution before it, band by band, so that the first one's
/// output never goes to memory whole (yolov4-tiny's layers 0 and 1: a 5.5 MB map, written to lines a pass
/// of streamed weights has pushed out of every cache, and read back by the next layer).
///
/// `Network` puts this layer in place of the second convolution when both take the im2col + GEMM path
/// and the first one's output has no other reader and is not a head. As with `ConvolutionMaxPool`, fusion
/// is the workspace's choice: when it does not keep the first convolution's output, it skips that layer
/// and sets `LayerIO.fused`; this layer then makes the first convolution's output a few rows at a time,
/// just before the second one unfolds them, in a window of rows per worker (in L2), keeping the rows two
/// bands share. Otherwise it is the second convolution alone.
///
/// The result equals the two layers run one after the other, bit for bit: each output of a product is
/// the same sum in the same order whatever the band, and the unfolding reads the same values.
@_spi(Engine) public struct ConvolutionPair: FusingLayer {
    /// The first convolution (layer `firstIndex`) and the second, which reads only the first's output.
    public let first: Convolution
    public let firstIndex: Int
    public let second: Convolution
    public var fusedIndex: Int { firstIndex }

    /// Inputs: the first convolution's output (read when not fused), then the first convolution's input.
    public var inputs: [Int] { second.inputs + first.inputs }
    public var outputShape: Shape { second.outputShape }
    public var scratchCount: Int { max(second.scratchCount, perWorker * second.maxThreads) }
    public var algorithm: String { "im2col+gemm, layer \(firstIndex) made by bands" }
    public var ownedBytes: Int { first.ownedBytes + second.ownedBytes }

    /// Output rows of the second convolution per band: its own band height on the banded path.
    /// (yolov4-tiny's layer 1: 2 rows; larger bands are slower there.)
    var bandRows: Int { second.bandRows! }
    /// Rows of the first convolution's output one band of the second reads.
    var windowRows: Int { min(first.outputShape.height, (bandRows - 1) * second.stride + second.size) }
    /// Floats of one channel's rows in the window.
    var windowPlane: Int { windowRows * first.outputShape.width }

    /// One worker's scratch: the window, the first convolution's unfolded rows, the second's, and GEMM scratch,
    /// each a multiple of 16 floats (64-byte aligned).
    var windowCount: Int { lineRounded(first.filters * windowPlane) }
    var firstColumnsCount: Int { lineRounded(first.patchLength * windowPlane) }
    var secondColumnsCount: Int { lineRounded(second.patchLength * bandRows * second.outputShape.width) }
    var perWorker: Int { windowCount + firstColumnsCount + secondColumnsCount + GEMM.scratchCount }

    /// A fused layer for `second` reading `first` (layer `firstIndex`), or nil when the pair does not
    /// qualify: see `qualifies`.
    public init?(first: Convolution, firstIndex: Int, second: Convolution) {
        guard Self.qualifies(first: first, firstIndex: firstIndex, second: second) else { return nil }
        self.init(unchecked: first, firstIndex: firstIndex, second: second)
    }

    /// The fused layer the network plan asked for (`ConvolutionPlan.Fusion.nextConvolution`).
    init(unchecked first: Convolution, firstIndex: Int, second: Convolution) {
        precondition(second.bandRows != nil, "ConvolutionPair: the second convolution is not on the banded path")
        self.first = first
        self.firstIndex = firstIndex
        self.second = second
    }

    /// True when `second` reads only `first` (layer `firstIndex`) and the planner's rule lets it compute `first`
    /// (`ConvolutionPlanner.fusesIntoNext`: both banded, a band reading a small window of rows).
    public static func qualifies(first: Convolution, firstIndex: Int, second: Convolution) -> Bool {
        second.inputs == [firstIndex] && ConvolutionPlanner.fusesIntoNext(
            first.plan, second.plan,
            secondLayer: ConvolutionPlanner.Layer(input: second.inputShape, filters: second.filters, size: second.size,
                                                  stride: second.stride, padding: second.padding),
            firstOutputHeight: first.outputShape.height)
    }

    public func forward(_ io: LayerIO) {
        guard io.fused else {
            second.forward(io)
            return
        }
        let (input, output, scratch) = (io.inputs[1], io.output, io.scratch)
        let height = second.outputShape.height
        let workers = min(io.threads, second.maxThreads, (height + bandRows - 1) / bandRows)
        Parallel.forWorkers(height, threads: workers) { worker, part in
            var window = Window(lower: 0, upper: 0)
            let base = scratch + worker * perWorker
            for y0 in Swift.stride(from: part.lowerBound, to: part.upperBound, by: bandRows) {
                band(y0 ..< min(y0 + bandRows, part.upperBound), input: input, output: output, window: &window,
                     scratch: base)
            }
        }
    }

    /// The rows `lower ..< upper` of the first convolution's output that a worker's window holds (row
    /// `lower` first in each channel).
    struct Window {
        var lower: Int
        var upper: Int
    }

    /// Makes the first convolution's rows that `rows` of the second read (keeping those already in the
    /// window), unfolds them and multiplies: the second's output rows `rows`.
    private func band(_ rows: Range<Int>, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
                      window: inout Window, scratch: UnsafeMutablePointer<Float>) {
        let (s, k, p) = (second.stride, second.size, second.padding)
        let (height, width) = (first.outputShape.height, first.outputShape.width)
        let needed = max(0, rows.lowerBound * s - p) ..< min(height, (rows.upperBound - 1) * s - p + k)
        let plane = windowPlane
        let rowsOf = scratch
        let firstColumns = scratch + windowCount
        let secondColumns = firstColumns + firstColumnsCount
        let gemmScratch = secondColumns + secondColumnsCount
        // Keep the rows this band shares with the last one, moved to the window's top.
        if needed.lowerBound >= window.upper || needed.lowerBound < window.lower {
            window = Window(lower: needed.lowerBound, upper: needed.lowerBound)
        } else if needed.lowerBound > window.lower {
            let kept = window.upper - needed.lowerBound
            let shift = needed.lowerBound - window.lower
            for c in 0..<first.filters {
                let channel = UnsafeMutableRawPointer(rowsOf + c * plane)
                channel.copyMemory(from: channel + shift * width * 4, byteCount: kept * width * 4)   // may overlap
            }
            window.lower = needed.lowerBound
        }
        precondition(needed.upperBound - window.lower <= windowRows, "ConvolutionPair: window too small")
        // The first convolution's new rows, straight into the window (channels `plane` apart).
        if needed.upperBound > window.upper {
            first.multiplyBand(window.upper ..< needed.upperBound, input: input, columns: firstColumns,
                               into: rowsOf + (window.upper - window.lower) * width, ldc: plane, gemmScratch: gemmScratch)
            window.upper = needed.upperBound
        }
        // The second convolution, unfolding from the window as the row-blocked path does from a whole map.
        second.multiplyBand(rows, input: rowsOf, planeStride: plane, rowOrigin: window.lower, columns: secondColumns,
                            into: output + rows.lowerBound * second.outputShape.width,
                            ldc: second.outputShape.planeCount, gemmScratch: gemmScratch)
    }
}
