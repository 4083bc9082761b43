import YOLOKernels

/// Winograd F(m×m, 3×3) for 3×3, stride-1, padding-1 convolutions.
///
/// The output is cut into m×m tiles (`tilesY × tilesX`, the last row/column may overhang). Per input
/// channel and group of 8 tiles (SIMD lanes), the α×α input tiles are transformed (`Bᵀ d B`) into
/// `V[ξ][c][tile]`; then for each of the α² positions ξ one GEMM `M[ξ] = U[ξ] · V[ξ]` (K×C by C×T)
/// sums over channels; last, `Aᵀ M A` gives each output tile, with bias and activation fused.
/// Rounding error relative to Σ|w·x| (tests' shape table): im2col 1.9e-7, F(2×2) 1.1e-7, F(4×4) 1.7e-6.
/// On yolov3-tiny's heads F(4×4) on every 3×3 layer stays within 1.9e-4 of OpenCV (the bar is 1e-3).

// MARK: - Forward

extension Convolution {
    typealias Lane = SIMD8<Float>

    /// The first step of the 8-lane Winograd path: copies the input into its zero-padded planes (split
    /// over the workers). Returns the padded input, the workers' transform buffers, and the scratch for V
    /// and M that follows them. (The row-vectorized and transposed paths pad each channel's rows into the
    /// worker's transform buffer just before they transform them.)
    func padInput(_ io: LayerIO, plan: WinogradPlan)
        -> (padded: UnsafePointer<Float>, buffers: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>) {
        let padded = io.scratch
        let input = io.input
        let planeCount = plan.paddedHeight * plan.paddedWidth
        Parallel.forRanges(plan.inChannels, threads: io.threads) { channels in
            (padded + channels.lowerBound * planeCount).update(repeating: 0, count: channels.count * planeCount)
            for c in channels { padValues(channel: c, input, plan: plan, into: padded + c * planeCount) }
        }
        let buffers = io.scratch + plan.paddedInputCount
        return (UnsafePointer(padded), buffers, buffers + plan.transformBufferCount * plan.maxWorkers)
    }

    func forwardWinograd(_ io: LayerIO, plan: WinogradPlan) {
        let (padded, buffers, scratch) = padInput(io, plan: plan)
        let blocks = plan.blocks
        if blocks == 1 {
            winogradBlock(0, io, plan: plan, padded: padded, buffers: buffers, scratch: scratch,
                          threads: min(io.threads, plan.maxWorkers))
            return
        }
        // Several blocks: each worker runs whole blocks (transform, products, inverse) in its own
        // scratch, so its data stays in its core's cache and workers never wait for each other.
        let workers = min(io.threads, plan.maxWorkers, blocks)
        Self.dealBlocks(blocks, full: plan.paddedTiles / plan.blockTiles, workers: workers) { block, worker, threads in
            winogradBlock(block, io, plan: plan, padded: padded, buffers: buffers + worker * plan.transformBufferCount,
                          scratch: scratch + worker * plan.blockScratch, threads: threads)
        }
    }

    /// Runs blocks `0 ..< blocks`, of which the first `full` are the full size, on `workers` workers:
    /// `run(block, worker, threads)` with `worker` the scratch slot to use. The workers claim full blocks whole
    /// (`threads` 1), as many as give every worker the same number; the rest then run one after another
    /// with each step split over all the workers (`worker` 0, `threads` = `workers`). Dealing all of them
    /// out would leave a worker idle for the odd one (9 blocks on two workers).
    static func dealBlocks(_ blocks: Int, full: Int, workers: Int,
                           _ run: (_ block: Int, _ worker: Int, _ threads: Int) -> Void) {
        let dealt = workers > 1 ? min(blocks, full) / workers * workers : blocks
        if dealt > 0 {
            Parallel.forClaimed(dealt, threads: workers) { worker, block in run(block, worker, 1) }
        }
        for block in dealt..<blocks { run(block, 0, workers) }
    }

    /// The three steps for the tiles of one block, each split over `threads` workers.
    /// `buffers` holds one transform buffer per worker (`threads` of them).
    private func winogradBlock(_ block: Int, _ io: LayerIO, plan: WinogradPlan, padded: UnsafePointer<Float>,
                               buffers: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
                               threads: Int) {
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let (channels, filters, blockTiles) = (plan.inChannels, plan.filters, plan.blockTiles)
        let lanes = WinogradPlan.lanes
        let firstGroup = block * blockTiles / lanes
        let groups = min(blockTiles, plan.paddedTiles - block * blockTiles) / lanes
        let tiles = min(blockTiles, plan.tiles - block * blockTiles)
        let v = scratch
        let mm = scratch + alpha2 * plan.vPlaneStride
        let bufferCount = plan.transformBufferCount
        Parallel.forClaimedRanges(channels * groups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Lane.self)
            for index in range {
                let (channel, group) = index.quotientAndRemainder(dividingBy: groups)
                transformInput(padded, channel: channel, group: firstGroup + group, plan: plan,
                               into: v + channel * blockTiles + group * lanes, buffer: buffer)
            }
        }
        // Whole column blocks: V's and M's rows hold `blockTiles` (a multiple of the GEMM's block).
        let parts = ConvolutionPlanner.productParts(products: alpha2, filters: filters, alignment: GEMM.rowAlignment,
                                                    threads: threads)
        Parallel.forEach(alpha2 * parts, threads: threads) { unit in
            let (xi, part) = unit.quotientAndRemainder(dividingBy: parts)
            let rows = Parallel.alignedPart(part, of: parts, count: filters, alignment: GEMM.rowAlignment)
            GEMM.multiply(plan.u!, matrix: xi, rows: rows, b: v + xi * plan.vPlaneStride, ldb: blockTiles,
                          n: tiles, c: mm + xi * plan.mPlaneStride, ldc: blockTiles, padded: true, scratch: nil)
        }
        let output = io.output
        let outputGroups = (tiles + lanes - 1) / lanes   // groups holding real tiles
        Parallel.forClaimedRanges(filters * outputGroups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Lane.self)
            for index in range {
                let (filter, group) = index.quotientAndRemainder(dividingBy: outputGroups)
                transformOutput(mm + filter * blockTiles + group * lanes, filter: filter, group: firstGroup + group,
                                plan: plan, into: output, buffer: buffer)
            }
        }
    }

    /// Copies one channel into its zero-padded plane at `plane` (`paddedHeight × paddedWidth`, the map at
    /// (1, 1)) whose padding cells are zero already: the callers clear the planes once (the transposed path
    /// its one plane per layer and worker, the 8-lane path each worker's channels), the padding being the same
    /// for every channel. Only the rows of values are copied, inline, 4 floats at a time with an overlapping
    /// last piece (a `memmove` and a `memset` call per row cost more than the copy on the short rows of
    /// small maps).
    func padValues(channel c: Int, _ input: UnsafePointer<Float>, plan: WinogradPlan,
                   into plane: UnsafeMutablePointer<Float>) {
        let (height, width) = (inputShape.height, inputShape.width)
        let pw = plan.paddedWidth
        let source = input + c * height * width
        guard width >= 4 else {
            for y in 0..<height { (plane + (y + 1) * pw + 1).update(from: source + y * width, count: width) }
            return
        }
        for y in 0..<height {
            let (from, to) = (UnsafeRawPointer(source + y * width), UnsafeMutableRawPointer(plane + (y + 1) * pw + 1))
            var offset = 0
            while offset + 16 < width * 4 {
                to.storeBytes(of: from.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self), toByteOffset: offset,
                              as: SIMD4<Float>.self)
                offset += 16
            }
            let last = width * 4 - 16
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: last, as: SIMD4<Float>.self), toByteOffset: last,
                          as: SIMD4<Float>.self)
        }
    }

    /// `padValues(channel:)` for row-vectorized plans, padded rows `rows` only (row `rows.lowerBound` at `target`,
    /// the next `paddedWidth` floats on): the same zero-padded rows, each stored by phase (cell x of a
    /// padded row at `(x mod m)·phaseLength + x / m`, `WinogradPlan.phaseLength`), so the transforms read one
    /// column of 16 adjacent tiles with one contiguous load. Runs in the kernel family's ISA, beside the
    /// transforms (`WinogradTiles.padByPhase`). Writes only the input values: the caller clears the rows
    /// first, once for all the channels it pads there.
    func padByPhase(rows: Range<Int>, channel c: Int, _ input: UnsafePointer<Float>, plan: WinogradPlan,
                    into target: UnsafeMutablePointer<Float>) {
        let (height, width) = (inputShape.height, inputShape.width)
        plan.kernels!.padByPhase(plan.transform.m, input + c * height * width, height, width, rows.lowerBound, rows.count,
                                 plan.paddedWidth, plan.phaseLength, target)
    }

    /// `Bᵀ d B` for the 8 tiles of `group` in one channel, stored to `v[ξ · vPlaneStride]`
    /// (`v` points at this channel's and group's place in V). Reads the zero-padded input, so every
    /// tile lies inside it; lanes past the last tile read tile 0 and are never used.
    @inline(__always)
    private func transformInput(_ padded: UnsafePointer<Float>, channel: Int, group: Int, plan: WinogradPlan,
                                into v: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Lane>) {
        inputTiles(padded, channel: channel, group: group, plan: plan, buffer: buffer)
        let planeStride = plan.vPlaneStride
        for xi in 0..<(plan.transform.alpha * plan.transform.alpha) {
            UnsafeMutableRawPointer(v + xi * planeStride).storeBytes(of: buffer[xi], as: Lane.self)
        }
    }

    /// `Bᵀ d B` for the 8 tiles of `group` in one channel, left in `buffer[0 ..< α²]` (lanes = tiles).
    @inline(__always)
    func inputTiles(_ padded: UnsafePointer<Float>, channel: Int, group: Int, plan: WinogradPlan,
                    buffer: UnsafeMutablePointer<Lane>) {
        let m = plan.transform.m
        let alpha2 = (m + 2) * (m + 2)
        let lanes = WinogradPlan.lanes
        let pw = plan.paddedWidth
        let plane = padded + channel * plan.paddedHeight * pw
        // Offsets live in plain scalar memory: written lane by lane into a SIMD8<Int> they would be
        // reloaded as a vector, which stalls on store forwarding.
        let offsets = UnsafeMutableRawPointer(buffer + 2 * alpha2).assumingMemoryBound(to: Int.self)
        offsets.update(repeating: 0, count: lanes)
        let first = group * lanes
        var ty = first / plan.tilesX
        var tx = first - ty * plan.tilesX
        for lane in 0..<max(0, min(lanes, plan.tiles - first)) {   // lanes past the last tile read tile 0
            offsets[lane] = ty * m * pw + tx * m
            tx += 1
            if tx == plan.tilesX { tx = 0; ty += 1 }
        }
        WinogradTiles.inputTiles8(m: m, plane: plane, pw: pw, offsets: offsets, buffer: buffer)
    }

    /// `Aᵀ M A` plus bias and activation for the 8 tiles of `group` of one filter, written to the
    /// output; `mm` points at this filter's and group's place in M (planes `mPlaneStride` apart).
    @inline(__always)
    private func transformOutput(_ mm: UnsafePointer<Float>, filter: Int, group: Int, plan: WinogradPlan,
                                 into output: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Lane>) {
        let m = plan.transform.m
        let lanes = WinogradPlan.lanes
        let (height, width) = (outputShape.height, outputShape.width)
        WinogradTiles.loadTile(m: m, mm, stride: plan.mPlaneStride, into: buffer)
        WinogradTiles.outputTile(m: m, buffer)
        let result = buffer               // m×m
        let bias = Lane(repeating: biases[filter])
        for k in 0..<(m * m) { result[k] = activation(result[k] + bias) }
        let scalars = UnsafeRawPointer(result).assumingMemoryBound(to: Float.self)
        let plane = output + filter * height * width
        // Walk the group's tiles in row-major order without dividing per lane.
        let first = group * lanes
        var ty = first / plan.tilesX
        var tx = first - ty * plan.tilesX
        for lane in 0..<min(lanes, plan.tiles - first) {
            let y0 = ty * m, x0 = tx * m
            let origin = plane + y0 * width + x0
            if y0 + m <= height && x0 + m <= width {
                if m == 4 {
                    for i in 0..<4 {
                        let row = origin + i * width
                        for j in 0..<4 { row[j] = scalars[(i * 4 + j) * lanes + lane] }
                    }
                } else {
                    for i in 0..<2 {
                        let row = origin + i * width
                        for j in 0..<2 { row[j] = scalars[(i * 2 + j) * lanes + lane] }
                    }
                }
            } else {
                for i in 0..<min(m, height - y0) {
                    let row = origin + i * width
                    for j in 0..<min(m, width - x0) { row[j] = scalars[(i * m + j) * lanes + lane] }
                }
            }
            tx += 1
            if tx == plan.tilesX { tx = 0; ty += 1 }
        }
    }
}
