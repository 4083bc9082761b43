/// Winograd on small maps with the products transposed (`WinogradPlan.transposed`): for each ξ,
/// `Mᵀ[tile][filter] = Vᵀ[tile][channel] · Uᵀ[channel][filter]`, with the tiles on the kernel's 6-row
/// side (49 tiles fill 9 panels, 91 %, where one 64-tile column block would be 77 % used) and the
/// filters on its 64-column side, read block by block from `uBlocks` as one stream. The input
/// transform scatters each tile's α² values into Vᵀ's panels (`[ξ][tile panel][channel][6]`); the
/// products store Mᵀ tile by tile (`[tile][ξ][filter]`), and the output transform works on 16 filters
/// of one tile at a time (its α² rows in one small region) and writes each value to its filter's plane. Same transforms as the 8-lane path, so the same rounding.

// MARK: - Forward

extension Convolution {
    func forwardWinogradTransposed(_ io: LayerIO, plan: WinogradPlan) {
        let (padded, buffers, v) = padInput(io, plan: plan)
        let threads = min(io.threads, plan.maxWorkers)
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let mm = v + alpha2 * plan.vPlaneStride
        let (channels, tiles) = (plan.inChannels, plan.tiles)
        let lanes = WinogradPlan.lanes
        let groups = (tiles + lanes - 1) / lanes
        let bufferCount = plan.transformBufferCount
        Parallel.forWorkers(channels * groups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Lane.self)
            for index in range {
                let (channel, group) = index.quotientAndRemainder(dividingBy: groups)
                inputTiles(padded, channel: channel, group: group, plan: plan, buffer: buffer)
                scatterTiles(buffer, channel: channel, group: group, plan: plan, into: v)
            }
        }
        let uBlocks = plan.uBlocks!.pointer
        let blockFloats = channels * plan.paddedFilters
        Parallel.forEach(alpha2, threads: threads) { xi in
            GEMM.multiplyPanels(v + xi * plan.vPlaneStride, m: tiles, k: channels, blocks: uBlocks + xi * blockFloats,
                                n: plan.paddedFilters, c: mm + xi * plan.mPlaneStride, ldc: plan.mTileStride)
        }
        let output = io.output
        let filterGroups = (filters + Wide.scalarCount - 1) / Wide.scalarCount
        Parallel.forWorkers(tiles * filterGroups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount).assumingMemoryBound(to: Wide.self)
            for index in range {
                let (tile, group) = index.quotientAndRemainder(dividingBy: filterGroups)
                transformOutputFilters(mm, tile: tile, filterGroup: group, plan: plan, into: output, buffer: buffer)
            }
        }
    }

    /// Writes the α² transformed values of the 8 tiles of `group` (lanes of `buffer[0 ..< α²]`) into
    /// Vᵀ's panels for `channel`: tile t of ξ at `ξ·vPlaneStride + (t/6)·C·6 + channel·6 + t%6`.
    @inline(__always)
    private func scatterTiles(_ buffer: UnsafeMutablePointer<Lane>, channel: Int, group: Int, plan: WinogradPlan,
                              into v: UnsafeMutablePointer<Float>) {
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let rows = GEMM.panelRows
        let panelFloats = plan.inChannels * rows
        let first = group * WinogradPlan.lanes
        let count = min(WinogradPlan.lanes, plan.tiles - first)
        var offsets = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &offsets) { raw in
            let offset = raw.baseAddress!.assumingMemoryBound(to: Int.self)
            for lane in 0..<count {
                let (panel, row) = (first + lane).quotientAndRemainder(dividingBy: rows)
                offset[lane] = panel * panelFloats + channel * rows + row
            }
            for xi in 0..<alpha2 {
                let target = v + xi * plan.vPlaneStride
                let values = buffer[xi]
                for lane in 0..<count { target[offset[lane]] = values[lane] }
            }
        }
    }

    /// `Aᵀ M A` plus bias and activation of one tile for the 16 filters of `filterGroup`, written to
    /// the output planes; Mᵀ is `[tile][ξ][filter]` (tiles `mTileStride` apart, ξ `mPlaneStride`).
    @inline(__always)
    private func transformOutputFilters(_ mm: UnsafePointer<Float>, tile: Int, filterGroup: Int, plan: WinogradPlan,
                                        into output: UnsafeMutablePointer<Float>, buffer: UnsafeMutablePointer<Wide>) {
        let m = plan.transform.m
        let (height, width) = (outputShape.height, outputShape.width)
        let first = filterGroup * Wide.scalarCount
        WinogradTransform.loadTile(m: m, mm + tile * plan.mTileStride + first, stride: plan.mPlaneStride, into: buffer)
        WinogradTransform.outputTile(m: m, buffer)
        let result = buffer
        let count = min(Wide.scalarCount, filters - first)
        var bias = Wide()
        for lane in 0..<count { bias[lane] = biases[first + lane] }
        for k in 0..<(m * m) { result[k] = activation(result[k] + bias) }
        let (ty, tx) = tile.quotientAndRemainder(dividingBy: plan.tilesX)
        let (y0, x0) = (ty * m, tx * m)
        let plane = height * width
        let origin = output + first * plane + y0 * width + x0
        for i in 0..<min(m, height - y0) {
            for j in 0..<min(m, width - x0) {
                let values = result[i * m + j]
                let target = origin + i * width + j
                for lane in 0..<count { target[lane * plane] = values[lane] }
            }
        }
    }
}
