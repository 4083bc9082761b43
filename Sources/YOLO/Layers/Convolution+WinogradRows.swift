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
        let (padded, buffers, scratch) = padInput(io, plan: plan)
        let workers = min(io.threads, plan.maxWorkers, plan.blocks)
        guard plan.dealsBlocks && workers > 1 else {
            // Few large blocks (in L3): one after another, each step split over the workers (dealing
            // a handful of uneven blocks out whole would leave a worker idle).
            for block in 0..<plan.blocks {
                rowsBlock(block, io, plan: plan, padded: padded, buffers: buffers, scratch: scratch,
                          threads: min(io.threads, plan.maxWorkers))
            }
            return
        }
        // Many blocks that fit in L2: each worker runs whole blocks in its own scratch.
        Parallel.forRanges(workers, threads: workers) { parts in
            for worker in parts {
                for block in Swift.stride(from: worker, to: plan.blocks, by: workers) {
                    rowsBlock(block, io, plan: plan, padded: padded,
                              buffers: buffers + worker * plan.transformBufferCount,
                              scratch: scratch + worker * plan.blockScratch, threads: 1)
                }
            }
        }
    }

    /// Transforms, products and inverse transforms for the tile rows of one block.
    private func rowsBlock(_ block: Int, _ io: LayerIO, plan: WinogradPlan, padded: UnsafePointer<Float>,
                           buffers: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>, threads: Int) {
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let (channels, filters, blockTiles) = (plan.inChannels, plan.filters, plan.blockTiles)
        let firstRow = block * plan.blockRows
        let rows = min(plan.blockRows, plan.tilesY - firstRow)
        let groups = (plan.tilesX + WinogradPlan.rowLanes - 1) / WinogradPlan.rowLanes
        let v = scratch
        let mm = scratch + alpha2 * plan.vPlaneStride
        let bufferCount = plan.transformBufferCount
        Parallel.forWorkers(channels * rows * groups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Wide.self)
            for index in range {
                let (channelRow, group) = index.quotientAndRemainder(dividingBy: groups)
                let (channel, row) = channelRow.quotientAndRemainder(dividingBy: rows)
                transformInputRow(padded, channel: channel, tileRow: firstRow + row, group: group, plan: plan,
                                  into: v + channel * blockTiles + row * plan.tilesX, buffer: buffer)
            }
        }
        let tiles = rows * plan.tilesX
        Parallel.forEach(alpha2, threads: threads) { xi in
            GEMM.multiply(plan.u!, matrix: xi, rows: 0..<filters, b: v + xi * plan.vPlaneStride, ldb: blockTiles,
                          n: tiles, c: mm + xi * plan.mPlaneStride, ldc: blockTiles, padded: true, scratch: nil)
        }
        let output = io.output
        Parallel.forWorkers(filters * rows * groups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Wide.self)
            for index in range {
                let (filterRow, group) = index.quotientAndRemainder(dividingBy: groups)
                let (filter, row) = filterRow.quotientAndRemainder(dividingBy: rows)
                transformOutputRow(mm + filter * blockTiles + row * plan.tilesX, filter: filter, tileRow: firstRow + row,
                                   group: group, plan: plan, into: output, buffer: buffer)
            }
        }
    }

    // MARK: - Input

    /// `Bᵀ d B` for the 16 tiles of `group` in tile row `tileRow` of one channel, stored to
    /// `v[ξ · vPlaneStride + group · 16 + lane]` (`v` points at this channel's and row's first tile).
    @inline(__always)
    private func transformInputRow(_ padded: UnsafePointer<Float>, channel: Int, tileRow: Int, group: Int,
                                   plan: WinogradPlan, into v: UnsafeMutablePointer<Float>,
                                   buffer: UnsafeMutablePointer<Wide>) {
        let m = plan.transform.m
        let alpha = m + 2
        let alpha2 = alpha * alpha
        let pw = plan.paddedWidth
        let first = plan.paddedHeight * pw * channel + tileRow * m * pw + group * WinogradPlan.rowLanes * m
        let rowsOut = buffer + alpha2      // one row's 1-D transform, then V's values
        for i in 0..<alpha {
            // d[i][j] for j < α, lanes = tiles; then the 1-D transform along the row.
            let row = UnsafeRawPointer(padded + first + i * pw)
            let d = buffer + i * alpha
            if m == 4 {
                Self.split4(row, into: d)
                Self.split4(row + 4 * MemoryLayout<Float>.stride, into: d + 4, count: 2)
            } else {
                Self.split2(row, into: d)
                Self.split2(row + 2 * MemoryLayout<Float>.stride, into: d + 2)
            }
            WinogradTransform.inputColumn(m: m, d, 1, rowsOut + i * alpha, 1)
        }
        for j in 0..<alpha {
            WinogradTransform.inputColumn(m: m, rowsOut + j, alpha, buffer + j, alpha)
        }
        let valid = min(WinogradPlan.rowLanes, plan.tilesX - group * WinogradPlan.rowLanes)
        let planeStride = plan.vPlaneStride
        let target = v + group * WinogradPlan.rowLanes
        for xi in 0..<alpha2 {
            Self.store(buffer[xi], to: target + xi * planeStride, count: valid)
        }
    }

    /// The four columns (`x ≡ 0, 1, 2, 3 mod 4`) of 64 floats at `p`: 16 tiles' first four values;
    /// only the first `count` are written.
    @inline(__always)
    static func split4(_ p: UnsafeRawPointer, into d: UnsafeMutablePointer<Wide>, count: Int = 4) {
        let a = SIMD32(lowHalf: p.loadUnaligned(as: Wide.self), highHalf: p.loadUnaligned(fromByteOffset: 64, as: Wide.self))
        let b = SIMD32(lowHalf: p.loadUnaligned(fromByteOffset: 128, as: Wide.self),
                       highHalf: p.loadUnaligned(fromByteOffset: 192, as: Wide.self))
        let even = SIMD32(lowHalf: a.evenHalf, highHalf: b.evenHalf)
        let odd = SIMD32(lowHalf: a.oddHalf, highHalf: b.oddHalf)
        d[0] = even.evenHalf
        d[1] = odd.evenHalf
        if count > 2 {
            d[2] = even.oddHalf
            d[3] = odd.oddHalf
        }
    }

    /// The two columns (`x ≡ 0, 1 mod 2`) of 32 floats at `p`.
    @inline(__always)
    static func split2(_ p: UnsafeRawPointer, into d: UnsafeMutablePointer<Wide>) {
        let a = SIMD32(lowHalf: p.loadUnaligned(as: Wide.self), highHalf: p.loadUnaligned(fromByteOffset: 64, as: Wide.self))
        d[0] = a.evenHalf
        d[1] = a.oddHalf
    }

    /// Stores the first `count` lanes of `x` at `p` (all 16 with one vector store).
    @inline(__always)
    static func store(_ x: Wide, to p: UnsafeMutablePointer<Float>, count: Int) {
        if count == WinogradPlan.rowLanes {
            UnsafeMutableRawPointer(p).storeBytes(of: x, as: Wide.self)
        } else {
            for lane in 0..<count { p[lane] = x[lane] }
        }
    }

    // MARK: - Output

    /// `Aᵀ M A` plus bias and activation for the 16 tiles of `group` in tile row `tileRow` of one
    /// filter, written to the output as `m` runs of up to 16·m floats; `mm` points at this filter's and
    /// row's first tile in M (planes `mPlaneStride` apart).
    @inline(__always)
    private func transformOutputRow(_ mm: UnsafePointer<Float>, filter: Int, tileRow: Int, group: Int, plan: WinogradPlan,
                                    into output: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Wide>) {
        let m = plan.transform.m
        let alpha = m + 2
        let alpha2 = alpha * alpha
        let (height, width) = (outputShape.height, outputShape.width)
        let tile0 = group * WinogradPlan.rowLanes
        WinogradTransform.loadTile(m: m, mm + tile0, stride: plan.mPlaneStride, into: buffer)
        WinogradTransform.outputTile(m: m, buffer)
        let result = buffer
        let bias = Wide(repeating: biases[filter])
        for k in 0..<(m * m) { result[k] = activation(result[k] + bias) }
        let x0 = tile0 * m
        let count = min(WinogradPlan.rowLanes * m, width - x0)
        let plane = output + filter * height * width + x0
        let run = UnsafeMutableRawPointer(buffer + 2 * alpha2).assumingMemoryBound(to: Float.self)
        for i in 0..<min(m, height - tileRow * m) {
            let target = plane + (tileRow * m + i) * width
            let full = count == WinogradPlan.rowLanes * m
            let destination = full ? target : run
            let raw = UnsafeMutableRawPointer(destination)
            if m == 4 {
                let even = Self.zip(result[i * 4], result[i * 4 + 2]), odd = Self.zip(result[i * 4 + 1], result[i * 4 + 3])
                raw.storeBytes(of: Self.zip(even.lowHalf, odd.lowHalf), as: SIMD32<Float>.self)
                raw.storeBytes(of: Self.zip(even.highHalf, odd.highHalf), toByteOffset: 128, as: SIMD32<Float>.self)
            } else {
                raw.storeBytes(of: Self.zip(result[i * 2], result[i * 2 + 1]), as: SIMD32<Float>.self)
            }
            if !full { target.update(from: run, count: count) }
        }
    }

    /// `[a0, b0, a1, b1, …, a15, b15]` (lane permutations, written out so they compile to shuffles).
    @inline(__always)
    static func zip(_ a: Wide, _ b: Wide) -> SIMD32<Float> {
        SIMD32<Float>(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3], a[4], b[4], a[5], b[5], a[6], b[6], a[7], b[7], a[8], b[8], a[9], b[9], a[10], b[10], a[11], b[11], a[12], b[12], a[13], b[13], a[14], b[14], a[15], b[15])
    }
}
