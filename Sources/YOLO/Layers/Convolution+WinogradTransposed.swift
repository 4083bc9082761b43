/// Winograd on small maps with the products transposed (`WinogradPlan.transposed`): for each ξ,
/// `Mᵀ[tile][filter] = Vᵀ[tile][channel] · Uᵀ[channel][filter]`, with the tiles on the kernel's 6-row
/// side (49 tiles fill 9 panels, 91 %, where one 64-tile column block would be 77 % used) and the
/// filters on its 64-column side, read block by block from `uBlocks` as one stream. The input
/// transform works on the 6 tiles of one panel and stores each of their α² values as a run of 6 floats in
/// Vᵀ's panels (`[ξ][tile panel][channel][6]`); the
/// products store Mᵀ tile by tile (`[tile][ξ][filter]`), and the output transform works on 16 filters
/// of one tile at a time (its α² rows in one small region) and writes each value to its filter's plane. Same transforms as the 8-lane path, so the same rounding.

// MARK: - Forward

extension Convolution {
    func forwardWinogradTransposed(_ io: LayerIO, plan: WinogradPlan) {
        let buffers = io.scratch
        let v = buffers + plan.transformBufferCount * plan.maxWorkers
        let input = io.input
        let threads = min(io.threads, plan.maxWorkers)
        let alpha2 = plan.transform.alpha * plan.transform.alpha
        let mm = v + alpha2 * plan.vPlaneStride
        let (channels, tiles) = (plan.inChannels, plan.tiles)
        let lanes = WinogradPlan.lanes
        let m = plan.transform.m
        let (pw, rows) = (plan.paddedWidth, GEMM.panelRows)
        let panels = (tiles + rows - 1) / rows
        let bufferCount = plan.transformBufferCount
        let kernels = plan.kernels!
        let offsets = plan.tileOffsets!.pointer
        Parallel.forClaimedRanges(channels * panels, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount)
            // Each channel is padded into the worker's buffer (in L1) just before its panels are transformed;
            // a padded copy of the whole input made first would be read back from L3.
            let plane = buffers + worker * bufferCount + plan.vectorBufferCount
            plane.update(repeating: 0, count: plan.bandCount)
            var paddedChannel = -1
            for index in range {
                // The 6 tiles of one panel of one channel: their values for ξ go to one run of 6 floats.
                let (channel, panel) = index.quotientAndRemainder(dividingBy: panels)
                if channel != paddedChannel {
                    padValues(channel: channel, input, plan: plan, into: plane)
                    paddedChannel = channel
                }
                kernels.tilesInput(m, plane, pw, offsets + panel * lanes,
                                   min(rows, tiles - panel * rows), v + (panel * channels + channel) * rows,
                                   plan.vPlaneStride, buffer)
            }
        }
        let uBlocks = plan.uBlocks!.pointer
        let blockFloats = channels * plan.paddedFilters
        // Parts of a product are runs of whole 64-filter blocks of Uᵀ (each block streamed once).
        let columns = GEMM.panelColumns, filterBlocks = plan.paddedFilters / columns
        let parts = ConvolutionPlanner.productParts(products: alpha2, filters: filterBlocks, alignment: 1, threads: threads)
        Parallel.forEach(alpha2 * parts, threads: threads) { unit in
            let (xi, part) = unit.quotientAndRemainder(dividingBy: parts)
            let blocks = Parallel.part(part, of: parts, count: filterBlocks)
            GEMM.multiplyPanels(v + xi * plan.vPlaneStride, m: tiles, k: channels,
                                blocks: uBlocks + xi * blockFloats + blocks.lowerBound * channels * columns,
                                n: blocks.count * columns, c: mm + xi * plan.mPlaneStride + blocks.lowerBound * columns,
                                ldc: plan.mTileStride)
        }
        let output = io.output
        let filterGroups = (filters + Wide.scalarCount - 1) / Wide.scalarCount
        let (height, width) = (outputShape.height, outputShape.width)
        let (code, biases) = (activation.code, biases.pointer)
        Parallel.forClaimedRanges(tiles * filterGroups, threads: threads) { worker, range in
            let buffer = UnsafeMutableRawPointer(buffers + worker * bufferCount)
            for index in range {
                // `Aᵀ M A` plus bias and activation of one tile for the 16 filters of `group`, written
                // to the output planes; Mᵀ is `[tile][ξ][filter]`.
                let (tile, group) = index.quotientAndRemainder(dividingBy: filterGroups)
                let first: Int = group * Wide.scalarCount
                let (ty, tx) = tile.quotientAndRemainder(dividingBy: plan.tilesX)
                let (y0, x0): (Int, Int) = (ty * m, tx * m)
                let source = UnsafePointer(mm + tile * plan.mTileStride + first)
                let origin: UnsafeMutablePointer<Float> = output + first * height * width + y0 * width + x0
                let count: Int = min(Wide.scalarCount, filters - first)
                let (rows, columns): (Int, Int) = (min(m, height - y0), min(m, width - x0))
                kernels.filtersOutput(m, source, plan.mPlaneStride, biases + first, count, code, origin, height * width,
                                      width, rows, columns, buffer)
            }
        }
    }
}
