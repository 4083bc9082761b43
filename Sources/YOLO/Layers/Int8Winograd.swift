import YOLOKernels

/// Exact integer Winograd F(m×m, 3×3), m = 2 or 4, for `Int8Convolution` (`ConvolutionPlan.Algorithm.int8Winograd`).
///
/// **F(2×2, 3×3).** With `Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]`, `G′ = 2G = [2 0 0; 1 1 1; 1 −1 1; 0 0 2]` and
/// `Aᵀ = [1 1 1 0; 0 1 −1 −1]`, each 2×2 output tile of a filter is `Aᵀ [Σ_c U_c ⊙ V_c] A = 4 ·` the direct
/// sums, where `U_c = G′ g_c G′ᵀ` (the filter's s8 3×3 weights on channel `c`, |U| ≤ 1,152) and `V_c = Bᵀ d_c B`
/// (the 4×4 u8 input codes under the tile, the padding at the input's zero point, |V| ≤ 1,020): integers, both
/// in s16, so each of the 16 products `M_ξ = U_ξ · V_ξ` (filters × channels times channels × tiles) runs on the
/// kernel's s16 pair sweep, stored as exact s32 sums (`Int8Epilogue.sums`). The sums may wrap in between; the
/// output transform's result, 4 × a sum below 2³¹ / 4 (`winogradMaximumChannels`), is exact, and `>> 2` gives
/// the same integer the direct product gives, so the epilogue, and every output bit, are the GEMM path's.
///
/// **F(4×4, 3×3)** (36 products per 4×4 outputs and channel instead of 64), on the points 0, ±1, ±2: `Bᵀ`'s rows
/// `(4 0 −5 0 1 0), (0 −4 −4 1 1 0), (0 4 −4 −1 1 0), (0 −2 −1 2 1 0), (0 2 −1 −2 1 0), (0 4 0 −5 0 1)` give
/// |V| ≤ 10 · 8 · 255 = 20,400 on u8 codes; `G`'s rows scaled to integers, `G′ = D G` with `D = diag(4, 6, 6, 24, 24,
/// 1)`, are `(1 0 0), (−1 −1 −1), (−1 1 −1), (1 2 4), (1 −2 4), (0 0 1)`, so |U| ≤ 7 · 7 · 127 = 6,223; and
/// `Â = 24 Aᵀ D⁻¹` is the integer matrix `(6 4 4 1 1 0), (0 4 −4 2 −2 0), (0 4 4 4 4 0), (0 4 −4 8 −8 24)`, with
/// `Â M Âᵀ = 576 ·` the direct sums. The output transform runs modulo 2³² like the sums, so it knows 576·y modulo
/// 2³²; times 9's inverse modulo 2³² that is 64·y, and `>> 6` gives y exactly when |y| < 2²⁵. That holds for
/// every input when 255 times each filter's sum of positive weights, and of negative ones, stays below 2²⁵
/// (`fitsTile4`); a layer whose weights do not runs F(2×2, 3×3).
///
/// Scratch after the quantized input: the input's codes in padded planes (`paddedHeight × paddedWidth` bytes a
/// channel, the zero point around the map), then per worker one chunk's V in the kernel's packed-B layout (per ξ, per
/// block of 16 tiles, `[paddedK/2][16][2]` s16) and its M (per filter, per ξ, `16·blocks` s32: each product's C rows
/// are `positions · 16·blocks` sums apart, so the output transform reads a filter's sums for every ξ from one stretch
/// of memory, not from `positions` planes far apart).
struct Int8WinogradGeometry {
    /// The output tile's edge m (2 or 4), and `positions` = (m + 2)², the products ξ.
    let tile: Int
    var positions: Int { (tile + 2) * (tile + 2) }
    let tilesY: Int, tilesX: Int, blocks: Int
    let paddedHeight: Int, paddedWidth: Int
    let channels: Int, paddedK: Int, filters: Int
    /// `U_ξ` for ξ = (m + 2)·i + j, packed as the kernel's A (s16).
    let weights: [Int8PackedMatrix]

    /// Blocks of 16 tiles transformed, multiplied and transformed back together (a chunk; the last may be
    /// smaller): all of them when the transformed weights are large (each chunk reads every `U_ξ`), else as
    /// many as keep the chunk's V and M within `chunkBudget`, at least one; with several chunks, their
    /// count a multiple of the threads and the blocks shared out evenly, since each worker runs whole chunks (7 blocks,
    /// at most 3 a chunk, at 2 threads: 4 chunks, of 2, 2, 2 and 1 blocks, so each worker runs two chunks).
    let chunkBlocks: Int
    /// Bytes of V and M one chunk may take when the weights are small (F(2×2): 384 KB; F(4×4), whose block of 16 tiles
    /// holds 36 products: 1 MB, which measured faster than 384 KB on Zen 3's 512 KB L2: longer runs of whole tile rows),
    /// and how large "small" is.
    static func chunkBudget(tile: Int) -> Int { tile == 2 ? 393_216 : 1_048_576 }
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
    /// Bytes of one block of V (the products' packed B blocks) and of M (every product, every filter, 16 tiles).
    static func blockBytes(positions: Int, paddedK: Int, filters: Int) -> Int { positions * (paddedK * 16 * 2 + filters * 16 * 4) }
    /// Bytes of one chunk's V and M (and 8 sums past M: a row's last group of 8 tiles reads up to 7 more).
    var chunkBytes: Int { (Self.blockBytes(positions: positions, paddedK: paddedK, filters: filters) * chunkBlocks + 32 + 63) / 64 * 64 }
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

    /// Whether F(4×4, 3×3) is exact for these weights (`filters` rows of `values`, `patchLength` each): for every
    /// filter, 255 · Σ w⁺ < 2²⁵ and 255 · Σ |w⁻| ≤ 2²⁵, so every sum y of u8 codes has |64·y| within s32.
    static func fitsTile4(_ values: UnsafeBufferPointer<Int8>, filters: Int, patchLength: Int) -> Bool {
        precondition(values.count >= filters * patchLength, "fitsTile4: \(values.count) weights for \(filters)x\(patchLength)")
        let base = values.baseAddress!
        return (0..<filters).allSatisfy { f in
            var (positive, negative) = (0, 0)
            let row = base + f * patchLength
            for k in 0..<patchLength {
                let w = Int(row[k])
                positive &+= max(w, 0)
                negative &-= min(w, 0)
            }
            return 255 * positive < 1 << 25 && 255 * negative <= 1 << 25
        }
    }

    /// - Precondition: the kernel stores s32 sums in 16-column tiles (and has the F(4×4) transforms for `tile` 4).
    init(steps: ConvolutionSteps, weights values: UnsafeBufferPointer<Int8>, tile: Int, kernel: Int8KernelFamily, threads: Int) {
        precondition(kernel.kernel.storesSums && kernel.kernel.tileColumns == 16 && kernel.kernel.group == 2,
                     "Int8WinogradGeometry: \(kernel.name) does not store s16-pair sums in 16-column tiles")
        precondition(tile == 2 || tile == 4 && kernel.kernel.winograd4Output != nil, "Int8WinogradGeometry: F(\(tile),3) on \(kernel.name)")
        let (input, output) = (steps.inputShape, steps.outputShape)
        precondition(steps.size == 3 && steps.stride == 1 && steps.padding == 1 && input.channels <= Int8Convolution.winogradMaximumChannels,
                     "Int8WinogradGeometry: not a 3x3/1 layer of at most \(Int8Convolution.winogradMaximumChannels) channels")
        self.tile = tile
        tilesY = (output.height + tile - 1) / tile
        tilesX = (output.width + tile - 1) / tile
        blocks = (tilesY * tilesX + 15) / 16
        paddedHeight = tile * tilesY + 2
        // A group of 16 tiles from any tile on reads 34 columns (F(2×2)), one of 8 tiles 36 (F(4×4)): the kernel's input transforms.
        paddedWidth = tile * tilesX + 32
        channels = input.channels
        paddedK = Int8Kernel.paddedK(input.channels)
        filters = output.channels
        let positions = (tile + 2) * (tile + 2)
        let perBlock = Self.blockBytes(positions: positions, paddedK: paddedK, filters: filters)
        chunkBlocks = positions * filters * paddedK * 2 <= Self.smallWeights
            ? Self.evenChunkBlocks(blocks: blocks, most: max(1, Self.chunkBudget(tile: tile) / perBlock), threads: threads) : blocks
        // U = G′ g G′ᵀ per filter and channel, as one matrix of filters × channels per ξ: G′ down each of g's 3
        // columns ((m + 2) × 3), then G′ along each of the m + 2 rows.
        // G′'s rows, as 3 coefficients each.
        let gRows: [Int] = tile == 2 ? [2, 0, 0, 1, 1, 1, 1, -1, 1, 0, 0, 2]
            : [1, 0, 0, -1, -1, -1, -1, 1, -1, 1, 2, 4, 1, -2, 4, 0, 0, 1]
        let n = tile + 2
        let (channels, filters) = (channels, filters)
        let count = filters * channels
        // A run of `run` filter-channel pairs at a time, each step a loop along the run (which vectorizes): the 9 weights
        // as 9 rows, then G′ down the columns (T = G′ g, (m + 2) × 3 rows), then along the rows (U = T G′ᵀ, ξ-major),
        // then each ξ's row copied out whole. (|T| ≤ 7 · 127 and |U| ≤ 6,223: s16 throughout.)
        let run = 256
        // Every value is written below (each run of each ξ), so the array starts uninitialized.
        let u = [Int16](unsafeUninitializedCapacity: positions * count) { u, initialized in
            gRows.withUnsafeBufferPointer { gp in
                withUnsafeTemporaryAllocation(of: Int16.self, capacity: (9 + 3 * n + positions) * run) { scratch in
                    let (u, gp, g9) = (u.baseAddress!, gp.baseAddress!, scratch.baseAddress!)
                    let (t, staged) = (g9 + 9 * run, g9 + (9 + 3 * n) * run)
                    for start in stride(from: 0, to: count, by: run) {
                        let length = min(run, count &- start)
                        let g = values.baseAddress! + 9 &* start
                        for k in 0..<length {
                            for ab in 0..<9 { g9[ab &* run &+ k] = Int16(g[9 &* k &+ ab]) }
                        }
                        for i in 0..<n {
                            let (c0, c1, c2) = (Int16(gp[3 * i]), Int16(gp[3 * i + 1]), Int16(gp[3 * i + 2]))
                            for b in 0..<3 {
                                let (x0, x1, x2, to) = (g9 + b &* run, g9 + (3 &+ b) &* run, g9 + (6 &+ b) &* run, t + (3 &* i &+ b) &* run)
                                for k in 0..<length { to[k] = c0 &* x0[k] &+ c1 &* x1[k] &+ c2 &* x2[k] }
                            }
                        }
                        for i in 0..<n {
                            let (x0, x1, x2) = (t + (3 &* i) &* run, t + (3 &* i &+ 1) &* run, t + (3 &* i &+ 2) &* run)
                            for j in 0..<n {
                                let (c0, c1, c2) = (Int16(gp[3 * j]), Int16(gp[3 * j + 1]), Int16(gp[3 * j + 2]))
                                let to = staged + (n &* i &+ j) &* run
                                for k in 0..<length { to[k] = c0 &* x0[k] &+ c1 &* x1[k] &+ c2 &* x2[k] }
                            }
                        }
                        for xi in 0..<positions { (u + (xi &* count &+ start)).initialize(from: staged + xi &* run, count: length) }
                    }
                }
            }
            initialized = positions * count
        }
        weights = (0..<positions).map { xi in
            u.withUnsafeBufferPointer { Int8PackedMatrix(UnsafeBufferPointer(rebasing: $0[xi * count ..< (xi + 1) * count]), rows: filters,
                                                         columns: channels, kernel: kernel) }
        }
    }
}

extension Int8Convolution {
    /// The most input channels int8 Winograd takes: 4 · 9 · 255 · 128 · channels < 2³¹.
    static let winogradMaximumChannels = 1_827

    /// The Winograd path: the input's padded planes, then chunk by chunk V, the products and the output transform
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
        let positions = w.positions
        let transformed = scratch, products = scratch + positions * blocks * blockBytes
        let columns = 16 * blocks
        // V, pair of channels by pair: the kernel's (`Int8Kernel.winogradInput`).
        let (transformInput, inputLayout) = (w.tile == 2 ? kernel.winogradInput! : kernel.winograd4Input!, w.inputLayout)
        Parallel.forRanges((w.channels + 1) / 2, threads: threads) { pairs in
            withUnsafePointer(to: inputLayout) { layout in
                for pair in pairs { transformInput(planes, layout, pair, tiles.lowerBound, tiles.upperBound, blocks, transformed) }
            }
        }
        var sums = epilogue
        sums.sums = true
        let steps = w.paddedK / 2
        Parallel.forRanges(positions * blocks, threads: threads) { parts in
            var e = sums
            withUnsafePointer(to: &e) { e in
                for part in parts {
                    let (xi, block) = part.quotientAndRemainder(dividingBy: blocks)
                    let u = w.weights[xi]
                    kernel.sweep(steps, u.panel(0), u.panelBytes, transformed + (xi * blocks + block) * blockBytes,
                                 products + (xi * columns + block * 16) * 4, positions * columns, w.filters, UnsafeRawPointer(e))
                }
            }
        }
        let (epilogue, out) = (self.epilogue, outputShape)
        let m = UnsafeRawPointer(products).assumingMemoryBound(to: Int32.self)
        // The output transform and the epilogue, filter by filter: the kernel's (`Int8Kernel.winogradOutput`).
        let transform = w.tile == 2 ? kernel.winogradOutput! : kernel.winograd4Output!
        let layout = Int8WinogradLayout(productStride: columns, filterStride: positions * columns, tilesX: w.tilesX, height: out.height, width: out.width)
        Parallel.forRanges(w.filters, threads: threads) { filters in
            withUnsafePointer(to: layout) { layout in
                withUnsafePointer(to: epilogue) { e in
                    for f in filters { transform(m, layout, tiles.lowerBound, tiles.upperBound, f, e, output) }
                }
            }
        }
    }
}
