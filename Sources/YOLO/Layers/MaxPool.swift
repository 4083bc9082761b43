/// Darknet's max-pooling layer.
///
/// Darknet pads by `padding` cells in total (default `size − 1`) and places them so the window
/// starts at offset `−(padding / 2)`: for a 2×2 window all the padding lands on the right and
/// bottom, which is how the 2×2 stride-1 pool of yolov3-tiny keeps 13×13. Padded cells never win.
/// Output size per axis: `(in + padding − size) / stride + 1`.
@_spi(Engine) public struct MaxPool: Layer {
    public let inputs: [Int]
    public let inputShape: Shape
    public let outputShape: Shape
    public let size: Int
    public let stride: Int
    public let padding: Int
    /// True when the tensors are u8 codes (between int8 layers; the max of codes is the code of the max,
    /// quantization being monotonic), else float.
    public let bytes: Bool

    public init(input: Int, inputShape: Shape, size: Int, stride: Int, padding: Int, bytes: Bool = false) {
        precondition(size >= 1 && stride >= 1 && padding >= 0, "MaxPool: bad geometry")
        self.bytes = bytes
        self.inputs = [input]
        self.inputShape = inputShape
        self.size = size
        self.stride = stride
        self.padding = padding
        self.outputShape = MaxPool.outputShape(input: inputShape, size: size, stride: stride, padding: padding)
        precondition(outputShape.width > 0 && outputShape.height > 0, "MaxPool: empty output")
    }

    public static func outputShape(input: Shape, size: Int, stride: Int, padding: Int) -> Shape {
        Shape(channels: input.channels,
              height: (input.height + padding - size) / stride + 1,
              width: (input.width + padding - size) / stride + 1)
    }

    /// Where a window starts relative to `output · stride`.
    public var offset: Int { -(padding / 2) }

    public var algorithm: String { (isSeparable ? "separable" : "direct") + (bytes ? " (u8)" : "") }

    public func forward(_ io: LayerIO) {
        let (input, output) = (io.input, io.output)
        // Small maps get one thread from the planner (`ConvolutionPlanner.threadCap`).
        Parallel.forRanges(inputShape.channels, threads: io.threads) { channels in
            if bytes {
                let (source, target) = (UnsafeRawPointer(input).assumingMemoryBound(to: UInt8.self),
                                        UnsafeMutableRawPointer(output).assumingMemoryBound(to: UInt8.self))
                if halvesEvenMap {
                    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: inputShape.height / 2 * inputShape.width) { rows in
                        for c in channels { poolHalving(channel: c, input: source, output: target, rows: rows.baseAddress!) }
                    }
                } else if isSeparable {
                    poolSeparably(channels: channels, input: source, output: target, lowest: 0)
                } else {
                    for c in channels { pool(channel: c, input: source, output: target, lowest: 0) }
                }
            } else if isSeparable {
                poolSeparably(channels: channels, input: input, output: output, lowest: -Float.greatestFiniteMagnitude)
            } else {
                for c in channels { pool(channel: c, input: input, output: output, lowest: -Float.greatestFiniteMagnitude) }
            }
        }
    }

    /// A stride-1 window of 3 or more (the 5×5 pools of YOLOv8's SPPF block): pooled in two passes, rows then
    /// columns (`poolSeparably`).
    var isSeparable: Bool { stride == 1 && size >= 3 }

    /// A stride-1 pool of `channels` as two one-dimensional ones, exact as max is: each input row's maxima over the
    /// window's columns into a scratch plane (`height × outW`), then each output row the maximum of the window's rows
    /// there (one loop over the plane per window row). Every loop runs at unit stride over a whole row or plane, which
    /// LLVM vectorizes, where the general path takes `size²` scalar steps per output. Windows are clipped to the map
    /// as in `pool`, so padded cells never win.
    func poolSeparably<Element: Comparable>(channels: Range<Int>, input: UnsafePointer<Element>, output: UnsafeMutablePointer<Element>,
                                            lowest: Element) {
        let (height, width) = (inputShape.height, inputShape.width)
        let (outH, outW) = (outputShape.height, outputShape.width)
        withUnsafeTemporaryAllocation(of: Element.self, capacity: height * outW) { scratch in
            let rows = scratch.baseAddress!
            for c in channels {
                let source = input + c * height * width
                let destination = output + c * outH * outW
                if outW == width {
                    poolRowsOfPlane(source, into: rows, lowest: lowest)
                } else {
                    for y in 0..<height {
                        let (row, line) = (source + y * width, rows + y * outW)
                        line.initialize(repeating: lowest, count: outW)
                        for dx in 0..<size {
                            // Output column x reads input column x + offset + dx where that lies in the row.
                            let shift = offset + dx
                            let first = max(0, -shift), end = min(outW, width - shift)
                            guard first < end else { continue }
                            let shifted = row + shift
                            for x in first..<end { line[x] = shifted[x] > line[x] ? shifted[x] : line[x] }
                        }
                    }
                }
                // Output row oy reads scratch row oy + offset + dy: rows are contiguous, so one loop per dy over
                // every output row whose read lies in the map.
                destination.initialize(repeating: lowest, count: outH * outW)
                for dy in 0..<size {
                    let shift = offset + dy
                    let first = max(0, -shift), end = min(outH, height - shift)
                    guard first < end else { continue }
                    let shifted = rows + shift * outW
                    for i in first * outW..<end * outW { destination[i] = shifted[i] > destination[i] ? shifted[i] : destination[i] }
                }
            }
        }
    }

    /// The row pass of `poolSeparably` when the output is as wide as the input (darknet's default padding; SPPF's
    /// 5×5 pools): each shift of the window is one loop over the whole plane, as if its rows were one, where a loop
    /// per row is mostly overhead on short rows (SPPF pools 20×20 maps). A shift that reaches past a row's end reads
    /// the next or the previous row there, so the first `−offset` and the last `size − 1 + offset` columns are then
    /// recomputed, column by column, from their windows clipped to the row.
    func poolRowsOfPlane<Element: Comparable>(_ source: UnsafePointer<Element>, into rows: UnsafeMutablePointer<Element>,
                                              lowest: Element) {
        let (height, width) = (inputShape.height, inputShape.width)
        let count = height * width
        rows.initialize(repeating: lowest, count: count)
        for dx in 0..<size {
            let shift = offset + dx
            let first = max(0, -shift), end = count - max(0, shift)
            guard first < end else { continue }
            let shifted = source + shift
            for i in first..<end { rows[i] = shifted[i] > rows[i] ? shifted[i] : rows[i] }
        }
        let left = min(width, -offset), right = max(left, width - (size - 1 + offset))
        func clipped(_ x: Int) {
            let (first, end) = (max(0, x + offset), min(width, x + offset + size))
            for y in 0..<height {
                let row = source + y * width
                var best = lowest
                for u in first..<end where row[u] > best { best = row[u] }
                rows[y * width + x] = best
            }
        }
        for x in 0..<left { clipped(x) }
        for x in right..<width { clipped(x) }
    }

    /// A 2×2 stride-2 pool with no offset over a map of even height and width: every window lies inside.
    var halvesEvenMap: Bool {
        size == 2 && stride == 2 && offset == 0 && inputShape.height % 2 == 0 && inputShape.width % 2 == 0
    }

    /// `pool` for codes when `halvesEvenMap`, in unit-stride loops LLVM vectorizes rather than one short loop per
    /// output row (13 outputs on yolov4-tiny's last pool): the larger of each pair of rows into `rows` (`height / 2`
    /// rows of `width`), then the larger of each pair of neighbours there, over the whole plane in one loop (pairs
    /// never straddle two rows, the width being even).
    func poolHalving(channel c: Int, input: UnsafePointer<UInt8>, output: UnsafeMutablePointer<UInt8>,
                     rows: UnsafeMutablePointer<UInt8>) {
        let (height, width) = (inputShape.height, inputShape.width)
        let source = input + c * height * width
        let destination = output + c * outputShape.planeCount
        for y in 0..<height / 2 {
            let (top, bottom, row) = (source + 2 * y * width, source + (2 * y + 1) * width, rows + y * width)
            for x in 0..<width { row[x] = top[x] > bottom[x] ? top[x] : bottom[x] }
        }
        let raw = UnsafeRawPointer(rows)
        for i in 0..<outputShape.planeCount {
            let pair = raw.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)
            destination[i] = UInt8(truncatingIfNeeded: max(pair & 0xFF, pair &>> 8))
        }
    }

    /// Pools one channel plane of floats or codes; `lowest` is below every value (padded cells never win).
    func pool<Element: Comparable>(channel c: Int, input: UnsafePointer<Element>, output: UnsafeMutablePointer<Element>,
                                   lowest: Element) {
        let (height, width) = (inputShape.height, inputShape.width)
        let (outH, outW) = (outputShape.height, outputShape.width)
        let source = input + c * height * width
        let destination = output + c * outH * outW
        // 2×2 windows with no left/top offset (stride 2, or yolov3-tiny's stride 1): rows and
        // columns whose window lies fully inside take a branch-free path; the rest (bottom/right
        // edge) take the general one below.
        let fast = size == 2 && offset == 0 && height >= 2 && width >= 2
        let fullRows = fast ? min(outH, (height - 2) / stride + 1) : 0
        let fullColumns = fast ? min(outW, (width - 2) / stride + 1) : 0
        for oy in 0..<outH {
            let y0 = max(oy * stride + offset, 0)
            let y1 = min(oy * stride + offset + size, height)
            var startX = 0
            if oy < fullRows {
                let top = source + oy * stride * width
                let bottom = top + width
                let row = destination + oy * outW
                if stride == 2 {
                    MaxPool.poolPairs(top, bottom, into: row, count: fullColumns)
                } else {
                    for ox in 0..<fullColumns {
                        let x = ox * stride
                        let a = top[x] > top[x + 1] ? top[x] : top[x + 1]
                        let b = bottom[x] > bottom[x + 1] ? bottom[x] : bottom[x + 1]
                        row[ox] = a > b ? a : b
                    }
                }
                startX = fullColumns
            }
            for ox in startX..<outW {
                let x0 = max(ox * stride + offset, 0)
                let x1 = min(ox * stride + offset + size, width)
                var best = lowest
                for y in y0..<y1 {
                    let row = source + y * width
                    for x in x0..<x1 where row[x] > best { best = row[x] }
                }
                destination[oy * outW + ox] = best
            }
        }
    }

    /// `row[i] = max(top[2i], top[2i+1], bottom[2i], bottom[2i+1])` for `i < count`: one output row
    /// of a 2×2 stride-2 window.
    @inline(__always)
    static func poolPairs<Element: Comparable>(_ top: UnsafePointer<Element>, _ bottom: UnsafePointer<Element>,
                                               into row: UnsafeMutablePointer<Element>, count: Int) {
        // Codes: each row read as 16-bit pairs (unit stride), which LLVM vectorizes; stride-2 byte reads it leaves scalar.
        // Rows under 16 outputs stay on the plain loop (13 outputs measured slower vectorized: 0.115 against 0.089 ms
        // for yolov4-tiny's layer 25).
        if Element.self == UInt8.self && count >= 16 {
            return poolPairsOfBytes(UnsafeRawPointer(top), UnsafeRawPointer(bottom), into: UnsafeMutableRawPointer(row), count: count)
        }
        // Unit-stride output with stride-2 reads and plain selects: LLVM vectorizes this.
        for ox in 0..<count {
            let a = top[2 * ox] > top[2 * ox + 1] ? top[2 * ox] : top[2 * ox + 1]
            let b = bottom[2 * ox] > bottom[2 * ox + 1] ? bottom[2 * ox] : bottom[2 * ox + 1]
            row[ox] = a > b ? a : b
        }
    }

    /// `poolPairs` on codes: column pair `ox` of each row is one little-endian 16-bit load (even column in the low
    /// byte), so the loop has unit-stride loads only.
    @inline(__always)
    static func poolPairsOfBytes(_ top: UnsafeRawPointer, _ bottom: UnsafeRawPointer, into row: UnsafeMutableRawPointer,
                                 count: Int) {
        let out = row.assumingMemoryBound(to: UInt8.self)
        for ox in 0..<count {
            let t = top.loadUnaligned(fromByteOffset: 2 * ox, as: UInt16.self)
            let b = bottom.loadUnaligned(fromByteOffset: 2 * ox, as: UInt16.self)
            let a = max(t & 0xFF, t &>> 8), c = max(b & 0xFF, b &>> 8)
            out[ox] = UInt8(truncatingIfNeeded: max(a, c))
        }
    }
}
