/// Winograd transforms on whole rows of tiles (`WinogradPlan.rowVectorized`): each vector holds 16
/// horizontally adjacent tiles, so the input tiles are read with contiguous loads split into their
/// columns by lane permutations (`evenHalf`/`oddHalf`), and the output tiles are written back as
/// contiguous runs of an output row (the inverse interleave), instead of one scalar per tile and
/// value as the 8-lane path does. V and M keep the GEMM's layout (`[ξ][channel][tile]`), tiles
/// numbered row by row within a block of whole tile rows. Results equal the 8-lane path's up to
/// float rounding (the same 1-D transforms, the two passes over a tile taken in the other order).

// MARK: - Forward

extension Convolution {
    typealias Wide = SIMD16<Float>

    func forwardWinogradRows(_ io: LayerIO, plan: WinogradPlan) {
        // No padded copy of the whole input: each block pads the rows it reads, channel by channel, just
        // before transforming them, into a band in the worker's transform buffer (in L1). A padded copy made
        // first would be back in L3 by the time the blocks read it.
        let buffers = io.scratch
        let scratch = buffers + plan.transformBufferCount * plan.maxWorkers
        let workers = min(io.threads, plan.maxWorkers, plan.blocks)
        guard plan.dealsBlocks && workers > 1 else {
            // Few large blocks (in L3): one after another, each step split over the workers (dealing
            // a handful of uneven blocks out whole would leave a worker idle).
            for block in 0..<plan.blocks {
                rowsBlock(block, io, plan: plan, buffers: buffers, scratch: scratch,
                          threads: min(io.threads, plan.maxWorkers))
            }
            return
        }
        // Many blocks that fit in L2: each worker runs whole blocks in its own scratch.
        Self.dealBlocks(plan.blocks, full: plan.tilesY / plan.blockRows, workers: workers) { block, worker, threads in
            rowsBlock(block, io, plan: plan, buffers: buffers + worker * plan.transformBufferCount,
                      scratch: scratch + worker * plan.blockScratch, threads: threads)
        }
    }

    /// Transforms, products and inverse transforms for the tile rows of one block.
    private func rowsBlock(_ block: Int, _ io: LayerIO, plan: WinogradPlan, buffers: UnsafeMutablePointer<Float>,
                           scratch: UnsafeMutablePointer<Float>, threads: Int) {
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let (channels, filters, blockTiles) = (plan.inChannels, plan.filters, plan.blockTiles)
        let firstRow = block * plan.blockRows
        let rows = min(plan.blockRows, plan.tilesY - firstRow)
        let groups = (plan.tilesX + WinogradPlan.rowLanes - 1) / WinogradPlan.rowLanes
        let v = scratch
        let mm = scratch + alpha2 * plan.vPlaneStride
        let bufferCount = plan.transformBufferCount
        // Runs of whole channels per piece, rows and groups in order: a partial last group of a row then stores
        // all 16 lanes (one vector store), the extra ones landing on the next row's first tiles (or, after
        // the channel's last row, on the block's padding columns and the next channel's first tiles), which
        // the same piece writes right after; only the last group of the piece's last channel stores just its
        // valid lanes (one lane at a time).
        let lastValid = plan.tilesX - (groups - 1) * WinogradPlan.rowLanes
        let (input, m) = (io.input, plan.transform.m)
        let paddedRows = firstRow * m ..< (firstRow + rows) * m + 2   // the rows the block's tiles read
        Parallel.forClaimedRanges(channels, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Wide.self)
            let band = buffers + worker * bufferCount + plan.vectorBufferCount
            // The padding cells are the same for every channel of the block: cleared once here, then each
            // channel writes only its values over the last one's.
            band.update(repeating: 0, count: paddedRows.count * plan.paddedWidth)
            for channel in range {
                padByPhase(rows: paddedRows, channel: channel, input, plan: plan, into: band)
                for row in 0..<rows {
                    for group in 0..<groups {
                        let valid = channel == range.upperBound - 1 && row == rows - 1 && group == groups - 1
                            ? lastValid : WinogradPlan.rowLanes
                        transformInputRow(band, row: row, group: group, valid: valid, plan: plan,
                                          into: v + channel * blockTiles + row * plan.tilesX, buffer: buffer)
                    }
                }
            }
        }
        let tiles = rows * plan.tilesX
        let parts = ConvolutionPlanner.productParts(products: alpha2, filters: filters, alignment: GEMM.rowAlignment,
                                                    threads: threads)
        Parallel.forEach(alpha2 * parts, threads: threads) { unit in
            let (xi, part) = unit.quotientAndRemainder(dividingBy: parts)
            let rows = Parallel.alignedPart(part, of: parts, count: filters, alignment: GEMM.rowAlignment)
            GEMM.multiply(plan.u!, matrix: xi, rows: rows, b: v + xi * plan.vPlaneStride, ldb: blockTiles,
                          n: tiles, c: mm + xi * plan.mPlaneStride, ldc: blockTiles, padded: true, scratch: nil)
        }
        let output = io.output
        // Whole tile rows of a filter per piece, the partial last group first: its output rows but the
        // last are stored whole, the extra floats landing at the start of the next output row, which the
        // groups after it (or its own next row) write, instead of going through a copy (`rowsOutput`).
        Parallel.forClaimedRanges(filters * rows, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Wide.self)
            for index in range {
                let (filter, row) = index.quotientAndRemainder(dividingBy: rows)
                for group in (0..<groups).reversed() {
                    transformOutputRow(mm + filter * blockTiles + row * plan.tilesX, filter: filter, tileRow: firstRow + row,
                                       group: group, plan: plan, into: output, buffer: buffer)
                }
            }
        }
    }

    // MARK: - Input

    /// `Bᵀ d B` for the 16 tiles of `group` in tile row `row` of a block of one channel, stored to
    /// `v[ξ · vPlaneStride + group · 16 + lane]` (`v` points at this channel's and row's first tile),
    /// by the kernel family's `WinogradTiles.rowsInput`, from the block's padded rows at `band`
    /// (`padByPhase(rows:)`); only `valid` lanes are stored (16 may be given for a partial group when
    /// the extra lanes land on tiles written after it).
    @inline(__always)
    private func transformInputRow(_ band: UnsafeMutablePointer<Float>, row: Int, group: Int, valid: Int,
                                   plan: WinogradPlan, into v: UnsafeMutablePointer<Float>,
                                   buffer: UnsafeMutablePointer<Wide>) {
        let pw = plan.paddedWidth
        let first = row * plan.transform.m * pw + group * WinogradPlan.rowLanes
        plan.kernels!.rowsInput(plan.transform.m, band + first, pw, plan.phaseLength, v + group * WinogradPlan.rowLanes,
                                plan.vPlaneStride, valid, UnsafeMutableRawPointer(buffer))
    }

    // MARK: - Output

    /// `Aᵀ M A` plus bias and activation for the 16 tiles of `group` in tile row `tileRow` of one
    /// filter, written to the output as `m` runs of up to 16·m floats; `mm` points at this filter's and
    /// row's first tile in M (planes `mPlaneStride` apart). By the family's `WinogradTiles.rowsOutput`: a
    /// partial group's runs but the last overwrite the start of the next output row (`rowsBlock` writes
    /// that afterwards).
    @inline(__always)
    private func transformOutputRow(_ mm: UnsafePointer<Float>, filter: Int, tileRow: Int, group: Int, plan: WinogradPlan,
                                    into output: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Wide>) {
        let m = plan.transform.m
        let (height, width) = (outputShape.height, outputShape.width)
        let tile0 = group * WinogradPlan.rowLanes
        let x0 = tile0 * m
        let count = min(WinogradPlan.rowLanes * m, width - x0)
        let target = output + filter * height * width + tileRow * m * width + x0
        plan.kernels!.rowsOutput(m, mm + tile0, plan.mPlaneStride, biases[filter], activation.code, target, width,
                                 min(m, height - tileRow * m), count, UnsafeMutableRawPointer(buffer))
    }
}
