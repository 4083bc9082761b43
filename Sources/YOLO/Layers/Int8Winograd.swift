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
    /// at most 3 a chunk, at 2 threads: 4 chunks of 2, so 4 and 3 blocks, where chunks of 3, 3 and 1 would give 4 and 3
    /// only when the worker with the 1 is not the last to finish).
    let chunkBlocks: Int
    /// Bytes of V and M one chunk may take when the weights are small, and how large "small" is.
    static let chunkBudget = 393_216
    static let smallWeights = 1_048_576

    var tiles: Int { tilesY * tilesX }
    var chunks: Int { (blocks + chunkBlocks - 1) / chunkBlocks }
    /// Whether each chunk is one worker's (else the workers share the one chunk's steps).
    var chunked: Bool { chunks > 1 }
    var planesBytes: Int { (channels * paddedHeight * paddedWidth + 63) / 64 * 64 }
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
        paddedWidth = 2 * tilesX + 16  // a group of 8 tiles from any tile on reads 18 columns
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
        let planeBytes = w.paddedHeight * w.paddedWidth
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
        Parallel.forRanges((w.channels + 1) / 2, threads: threads) { pairs in
            for pair in pairs { Self.transformInput(planes, w, pair: pair, tiles: tiles, blocks: blocks, into: transformed) }
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

    /// V of `tiles` (the chunk's, from a block's first tile on) for channels `2·pair` and `2·pair + 1` (0 past the
    /// last channel), 8 tiles of a row at a time, into the chunk's `blocks` packed blocks per ξ.
    static func transformInput(_ planes: UnsafePointer<UInt8>, _ w: Int8WinogradGeometry, pair: Int, tiles: Range<Int>, blocks: Int,
                               into target: UnsafeMutableRawPointer) {
        typealias Row = SIMD8<Int16>
        let planeBytes = w.paddedHeight * w.paddedWidth
        let lanes = target.assumingMemoryBound(to: UInt32.self)
        let steps = w.paddedK / 2
        guard !tiles.isEmpty else { return }
        let chunkTiles = 16 * blocks
        // Each ξ's pairs (the two channels' s16 in one u32, as the packed block holds them) for the chunk's tiles
        // in `staged` (ξ-major, 8 spare a ξ), written 8 tiles at a time, then copied out a block's 16 lanes (64 bytes) at a time.
        withUnsafeTemporaryAllocation(of: Row.self, capacity: 32) { v in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16 * (chunkTiles + 8)) { staged in
            let staged = staged.baseAddress!
            // The 16 values of V (ξ = 4i + j) for 8 tiles of channel `c`, whose top-left padded pixels are (2ty, 2tx0 + 2k),
            // at `v + base`: first each row's column transform, then the row transform.
            func transform(_ c: Int, _ ty: Int, _ tx0: Int, _ base: Int) {
                guard c < w.channels else {
                    for xi in 0..<16 { v[base + xi] = Row() }
                    return
                }
                for i in 0..<4 {
                    let y: Int = 2 &* ty &+ i
                    let offset: Int = c &* planeBytes &+ y &* w.paddedWidth &+ 2 &* tx0
                    // 16 bytes as 8 little-endian u16: the even columns' bytes are the low bytes, the odd ones' the high
                    // (a bit cast and two operations; widening the 16 bytes would be a generic conversion, lane by lane).
                    let p = UnsafeRawPointer(planes + offset), low = SIMD8<UInt16>(repeating: 255)
                    let p0 = p.loadUnaligned(as: SIMD8<UInt16>.self), p2 = p.loadUnaligned(fromByteOffset: 2, as: SIMD8<UInt16>.self)
                    let (a, b) = (unsafeBitCast(p0 & low, to: Row.self), unsafeBitCast(p0 &>> 8, to: Row.self))
                    let (cc, d) = (unsafeBitCast(p2 & low, to: Row.self), unsafeBitCast(p2 &>> 8, to: Row.self))
                    v[base + 4 * i] = a &- cc
                    v[base + 4 * i + 1] = b &+ cc
                    v[base + 4 * i + 2] = cc &- b
                    v[base + 4 * i + 3] = b &- d
                }
                for j in 0..<4 {
                    let (r0, r1, r2, r3) = (v[base + j], v[base + 4 + j], v[base + 8 + j], v[base + 12 + j])
                    v[base + j] = r0 &- r2
                    v[base + 4 + j] = r1 &+ r2
                    v[base + 8 + j] = r2 &- r1
                    v[base + 12 + j] = r1 &- r3
                }
            }
            for ty in tiles.lowerBound / w.tilesX ... (tiles.upperBound - 1) / w.tilesX {
                let row = ty * w.tilesX
                let columns = max(0, tiles.lowerBound - row) ..< min(w.tilesX, tiles.upperBound - row)
                for tx0 in Swift.stride(from: columns.lowerBound, to: columns.upperBound, by: 8) {
                    transform(2 * pair, ty, tx0, 0)
                    transform(2 * pair + 1, ty, tx0, 16)
                    // 8 tiles' pairs of every ξ; lanes past the row's last tile land on the next tiles' places, which
                    // the next group overwrites, or past the chunk's tiles (into the ξ's 8 spare).
                    let t = row + tx0 - tiles.lowerBound
                    for xi in 0..<16 {
                        let low = SIMD8<UInt32>(truncatingIfNeeded: SIMD8<UInt16>(truncatingIfNeeded: v[xi]))
                        let high = SIMD8<UInt32>(truncatingIfNeeded: SIMD8<UInt16>(truncatingIfNeeded: v[16 + xi]))
                        let pairs: SIMD8<UInt32> = low | (high &<< 16)
                        let at: Int = xi &* (chunkTiles + 8) &+ t
                        UnsafeMutableRawPointer(staged + at).storeBytes(of: pairs, as: SIMD8<UInt32>.self)
                    }
                }
            }
            for xi in 0..<16 {
                for block in 0..<blocks {
                    let to: Int = ((xi &* blocks &+ block) &* steps &+ pair) &* 16
                    let from: Int = xi &* (chunkTiles + 8) &+ block &* 16
                    (lanes + to).update(from: staged + from, count: 16)
                }
            }
            }
        }
    }
}
