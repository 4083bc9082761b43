import YOLOKernels

/// Exact integer Winograd F(2×2, 3×3) for `Int8Convolution` (`ConvolutionPlan.Algorithm.int8Winograd`).
///
/// With `Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]`, `G′ = 2G = [2 0 0; 1 1 1; 1 −1 1; 0 0 2]` and
/// `Aᵀ = [1 1 1 0; 0 1 −1 −1]`, each 2×2 output tile of a filter is `Aᵀ [Σ_c U_c ⊙ V_c] A = 4 ·` the direct
/// sums, where `U_c = G′ g_c G′ᵀ` (the filter's s8 3×3 weights on channel `c`, |U| ≤ 1,152) and `V_c = Bᵀ d_c B`
/// (the 4×4 u8 input codes under the tile, the padding at the input's zero point, |V| ≤ 1,020): integers, both
/// in s16, so each of the 16 products `M_ξ = U_ξ · V_ξ` (filters × channels times channels × tiles) runs on the
/// kernel's s16 pair sweep, stored as exact s32 sums (`Int8Epilogue.sums`). The sums may wrap in between; the
/// output transform's result, 4 × a sum below 2³¹ / 4 (`winogradMaximumChannels`), is exact, and `>> 2` gives
/// the same integer the direct product gives, so the epilogue, and every output bit, are the GEMM path's.
///
/// Scratch after the quantized input: the input's codes in padded planes (`paddedHeight × paddedWidth` bytes a
/// channel, the zero point around the map), then per worker one chunk's V in the kernel's packed-B layout (per ξ, per
/// block of 16 tiles, `[paddedK/2][16][2]` s16) and its M (per ξ, `filters × 16·blocks` s32, the chunk's blocks).
struct Int8WinogradGeometry {
    let tilesY: Int, tilesX: Int, blocks: Int
    let paddedHeight: Int, paddedWidth: Int
    let channels: Int, paddedK: Int, filters: Int
    /// `U_ξ` for ξ = 4i + j, packed as the kernel's A (s16).
    let weights: [Int8PackedMatrix]

    /// Blocks of 16 tiles transformed, multiplied and transformed back together (a chunk; the last may be
    /// smaller): all of them when the transformed weights are large (each chunk reads all 16 `U_ξ`), else as
    /// many as keep the chunk's V and M within `chunkBudget` (in a core's L2), at least one; with several chunks, their
    /// count a multiple of the threads and the blocks shared out evenly, since each worker runs whole chunks (7 blocks,
    /// at most 3 a chunk, at 2 threads: 4 chunks, of 2, 2, 2 and 1 blocks, so each worker runs two chunks).
    let chunkBlocks: Int
    /// Bytes of V and M one chunk may take when the weights are small, and how large "small" is.
    static let chunkBudget = 393_216
    static let smallWeights = 1_048_576

    var tiles: Int { tilesY * tilesX }
    var chunks: Int { (blocks + chunkBlocks - 1) / chunkBlocks }
    /// Whether each chunk is one worker's (else the workers share the one chunk's steps).
    var chunked: Bool { chunks > 1 }
    /// Bytes of one channel's padded plane, and of all of them (whole cache lines).
    var planeBytes: Int { paddedHeight * paddedWidth }
    var planesBytes: Int { (channels * planeBytes + 63) / 64 * 64 }
    /// Where the input transform finds the planes (`Int8Kernel.winogradInput`).
    var inputLayout: Int8WinogradInputLayout {
        Int8WinogradInputLayout(channels: channels, planeBytes: planeBytes, paddedWidth: paddedWidth, tilesX: tilesX, steps: paddedK / 2)
    }
    /// Bytes of one block of V (16 products' packed B blocks) and of M (16 products, every filter, 16 tiles).
    static func blockBytes(paddedK: Int, filters: Int) -> Int { 16 * paddedK * 16 * 2 + 16 * filters * 16 * 4 }
    /// Bytes of one chunk's V and M (and 8 sums past M: a row's last group of 8 tiles reads up to 7 more).
    var chunkBytes: Int { (Self.blockBytes(paddedK: paddedK, filters: filters) * chunkBlocks + 32 + 63) / 64 * 64 }
    /// Scratch after the quantized input, for `threads` workers.
    func scratchBytes(threads: Int) -> Int { planesBytes + chunkBytes * (chunked ? threads : 1) }

    /// Blocks a chunk takes for `blocks` blocks in chunks of at most `most`: one chunk if they fit, else the fewest
    /// chunks that fit and are a multiple of `threads`, the blocks shared out evenly.
    static func evenChunkBlocks(blocks: Int, most: Int, threads: Int) -> Int {
        guard blocks > most else { return blocks }
        let threads = max(1, threads)
        let chunks = ((blocks + most - 1) / most + threads - 1) / threads * threads
        return (blocks + chunks - 1) / chunks
    }

    /// - Precondition: the kernel stores s32 sums in 16-column tiles.
    init(steps: ConvolutionSteps, weights values: UnsafeBufferPointer<Int8>, kernel: Int8KernelFamily, threads: Int) {
        precondition(kernel.kernel.storesSums && kernel.kernel.tileColumns == 16 && kernel.kernel.group == 2,
                     "Int8WinogradGeometry: \(kernel.name) does not store s16-pair sums in 16-column tiles")
        let (input, output) = (steps.inputShape, steps.outputShape)
        precondition(steps.size == 3 && steps.stride == 1 && steps.padding == 1 && input.channels <= Int8Convolution.winogradMaximumChannels,
                     "Int8WinogradGeometry: not a 3x3/1 layer of at most \(Int8Convolution.winogradMaximumChannels) channels")
        tilesY = (output.height + 1) / 2
        tilesX = (output.width + 1) / 2
        blocks = (tilesY * tilesX + 15) / 16
        paddedHeight = 2 * tilesY + 2
        paddedWidth = 2 * tilesX + 32  // a group of 16 tiles from any tile on reads 34 columns (`Int8Kernel.WinogradInput`)
        channels = input.channels
        paddedK = Int8Kernel.paddedK(input.channels)
        filters = output.channels
        let perBlock = Self.blockBytes(paddedK: paddedK, filters: filters)
        chunkBlocks = 16 * filters * paddedK * 2 <= Self.smallWeights
            ? Self.evenChunkBlocks(blocks: blocks, most: max(1, Self.chunkBudget / perBlock), threads: threads) : blocks
        // U = G′ g G′ᵀ per filter and channel, as 16 matrices of filters × channels.
        let (channels, filters) = (channels, filters)
        var u = [Int16](repeating: 0, count: 16 * filters * channels)
        // G′ g G′ᵀ: G′ down each of g's 3 columns (4×3), then G′ along each of the 4 rows;
        // G′'s rows are (2, 0, 0), (1, 1, 1), (1, −1, 1), (0, 0, 2).
        let count = filters * channels
        u.withUnsafeMutableBufferPointer { u in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 12) { t in
                for fc in 0..<count {
                    let g = values.baseAddress! + 9 * fc
                    for b in 0..<3 {
                        let (x0, x1, x2) = (Int(g[b]), Int(g[3 + b]), Int(g[6 + b]))
                        (t[b], t[3 + b], t[6 + b], t[9 + b]) = (2 * x0, x0 + x1 + x2, x0 - x1 + x2, 2 * x2)
                    }
                    for i in 0..<4 {
                        let (x0, x1, x2) = (t[3 * i], t[3 * i + 1], t[3 * i + 2])
                        u[(4 * i) * count + fc] = Int16(2 * x0)
                        u[(4 * i + 1) * count + fc] = Int16(x0 + x1 + x2)
                        u[(4 * i + 2) * count + fc] = Int16(x0 - x1 + x2)
                        u[(4 * i + 3) * count + fc] = Int16(2 * x2)
                    }
                }
            }
        }
        weights = (0..<16).map { xi in
            u.withUnsafeBufferPointer { Int8PackedMatrix(UnsafeBufferPointer(rebasing: $0[xi * count ..< (xi + 1) * count]), rows: filters,
                                                         columns: channels, kernel: kernel) }
        }
    }
}

extension Int8Convolution {
    /// The most input channels int8 Winograd takes: 4 · 9 · 255 · 128 · channels < 2³¹.
    static let winogradMaximumChannels = 1_827

    /// The Winograd path: the input's padded planes, then chunk by chunk V, the 16 products and the output transform
    /// with the epilogue. The workers claim chunks in order, or, with one chunk, share each step.
    func forwardWinograd(_ source: UnsafePointer<UInt8>, _ w: Int8WinogradGeometry, into output: UnsafeMutableRawPointer,
                         scratch: UnsafeMutableRawPointer, threads: Int) {
        let planes = scratch.assumingMemoryBound(to: UInt8.self)
        let (shape, pad) = (steps.inputShape, input.zeroPoint)
        let planeBytes = w.planeBytes
        Parallel.forRanges(w.channels, threads: threads) { range in
            for c in range {
                let plane = planes + c * planeBytes
                plane.update(repeating: pad, count: planeBytes)
                for y in 0..<shape.height {
                    (plane + (y + 1) * w.paddedWidth + 1).update(from: source + (c * shape.height + y) * shape.width, count: shape.width)
                }
            }
        }
        let chunkScratch = scratch + w.planesBytes
        if w.chunked {
            Parallel.forClaimed(w.chunks, threads: threads) { worker, chunk in
                winogradChunk(planes, w, chunk: chunk, into: output, scratch: chunkScratch + worker * w.chunkBytes, threads: 1)
            }
        } else {
            winogradChunk(planes, w, chunk: 0, into: output, scratch: chunkScratch, threads: threads)
        }
    }

    /// One chunk: V of its tiles, `M_ξ = U_ξ · V_ξ`, then the outputs.
    func winogradChunk(_ planes: UnsafePointer<UInt8>, _ w: Int8WinogradGeometry, chunk: Int, into output: UnsafeMutableRawPointer,
                       scratch: UnsafeMutableRawPointer, threads: Int) {
        let firstBlock = chunk * w.chunkBlocks
        let blocks = min(w.chunkBlocks, w.blocks - firstBlock)
        let tiles = 16 * firstBlock ..< min(w.tiles, 16 * (firstBlock + blocks))
        let kernel = self.kernel.kernel
        let blockBytes = kernel.blockBytes(w.channels)
        let transformed = scratch, products = scratch + 16 * blocks * blockBytes
        let columns = 16 * blocks
        // V, pair of channels by pair: the kernel's (`Int8Kernel.winogradInput`).
        let (transformInput, inputLayout) = (kernel.winogradInput!, w.inputLayout)
        Parallel.forRanges((w.channels + 1) / 2, threads: threads) { pairs in
            withUnsafePointer(to: inputLayout) { layout in
                for pair in pairs { transformInput(planes, layout, pair, tiles.lowerBound, tiles.upperBound, blocks, transformed) }
            }
        }
        var sums = epilogue
        sums.sums = true
        let steps = w.paddedK / 2
        Parallel.forRanges(16 * blocks, threads: threads) { parts in
            var e = sums
            withUnsafePointer(to: &e) { e in
                for part in parts {
                    let (xi, block) = part.quotientAndRemainder(dividingBy: blocks)
                    let u = w.weights[xi]
                    kernel.sweep(steps, u.panel(0), u.panelBytes, transformed + (xi * blocks + block) * blockBytes,
                                 products + (xi * w.filters * columns + block * 16) * 4, columns, w.filters, UnsafeRawPointer(e))
                }
            }
        }
        let (epilogue, out) = (self.epilogue, outputShape)
        let m = UnsafeRawPointer(products).assumingMemoryBound(to: Int32.self)
        // The output transform and the epilogue, filter by filter: the kernel's (`Int8Kernel.winogradOutput`).
        let transform = kernel.winogradOutput!
        let layout = Int8WinogradLayout(plane: w.filters * columns, columns: columns, tilesX: w.tilesX, height: out.height, width: out.width)
        Parallel.forRanges(w.filters, threads: threads) { filters in
            withUnsafePointer(to: layout) { layout in
                withUnsafePointer(to: epilogue) { e in
                    for f in filters { transform(m, layout, tiles.lowerBound, tiles.upperBound, f, e, output) }
                }
            }
        }
    }
}
