import YOLOKernels
import YOLOPrefetch

/// The driver of the active kernel family's GEMM micro-kernel (`KernelFamily.tile`, one
/// `tileRows × tileColumns` tile of C per call): blocks B so a sweep stays in L2, packs B's column
/// blocks when they are not already contiguous, and hands each tile its panel of A. Nothing is
/// accumulated into C between calls except when the inner dimension is cut into chunks: the tile is
/// stored once, with bias and activation applied in registers.

// MARK: - Driver

extension GEMM {
    /// One product's operands, shared by the loops over A's panels and B's column blocks.
    struct Operands {
        let tile: TileKernel
        let k: Int
        let b: UnsafePointer<Float>
        let ldb: Int
        let n: Int
        let c: UnsafeMutablePointer<Float>
        let ldc: Int
        let bias: UnsafePointer<Float>?
        let activation: Activation
        let padded: Bool
        let scratch: UnsafeMutablePointer<Float>?
        /// The tile's rows and columns (`GEMM.panelRows`, `GEMM.panelColumns`), read once.
        let panelRows = GEMM.panelRows
        let panelColumns = GEMM.panelColumns
        /// Floats from one column block of B to the next when B is read in place: `panelColumns` for
        /// a row-major B, `k · panelColumns` for B stored block by block.
        var blockStride = GEMM.panelColumns
        /// When set, B is a stream read once (`TileKernel.Streamed`): the kernel prefetches this many
        /// bytes ahead of the row it reads.
        var prefetchDistance: Int? = nil

        /// Runs the kernel over `panels` × all column blocks of C. `a` holds A in panels
        /// (`[panel][k][panelRows]`), so a panel's A for the inner indices `ks` is `ks.count × panelRows`
        /// contiguous floats. Rows at or past `rowEnd` are not stored. B is copied block by block into contiguous, aligned `k × panelColumns` runs unless the
        /// caller's B already is one (`padded`, rows a multiple of 16 floats apart). The inner dimension is cut into
        /// chunks when the B that one sweep reads would not stay in L2: each chunk then adds to C, and
        /// the last applies bias and activation.
        @inline(__always)
        func run(_ a: UnsafePointer<Float>, panels: Range<Int>, rowEnd: Int, panelsOuter wanted: Bool) {
            let blocks = (n + panelColumns - 1) / panelColumns
            let (panelRows, panelColumns) = (self.panelRows, self.panelColumns)
            let panelStride = k * panelRows
            func weightsOf(_ panel: Int, _ ks: Range<Int>) -> UnsafePointer<Float> {
                a + panel * panelStride + ks.lowerBound * panelRows
            }
            let direct = padded && ldb % 16 == 0
            // Panels outermost needs a chunk of every block at once: only when that fits.
            let panelsOuter = wanted && (direct || 16 * blocks * panelColumns <= GEMM.l2Floats)
            let sweep = panelColumns * (panelsOuter ? blocks : 1)
            let chunk = k * sweep <= GEMM.l2Floats ? k : max(16, GEMM.l2Floats / 2 / sweep / 16 * 16)
            let edgeTile = scratch
            let packedB = scratch.map { $0 + panelRows * panelColumns }
            let (kernel, code) = (tile.strided, activation.code)
            /// Copies block `block` of B's rows `ks` to `target` (`ks.count × panelColumns`, zero-padded).
            func pack(_ block: Int, _ ks: Range<Int>, into target: UnsafeMutablePointer<Float>) {
                let column = block * panelColumns
                let width = min(panelColumns, n - column)
                var row = target
                if width == panelColumns && panelColumns % 16 == 0 {
                    // Whole rows of 16-float runs: copied inline (a memmove call per 64-byte row costs more
                    // than the copy).
                    for kk in ks {
                        let source = UnsafeRawPointer(b + kk * ldb + column)
                        // The same row 8 blocks on: B's rows are whole planes apart (1×1 products), too many
                        // streams for the hardware prefetcher.
                        prefetch(source + 512)
                        for offset in Swift.stride(from: 0, to: panelColumns * 4, by: 64) {
                            UnsafeMutableRawPointer(row).storeBytes(
                                of: source.loadUnaligned(fromByteOffset: offset, as: SIMD16<Float>.self),
                                toByteOffset: offset, as: SIMD16<Float>.self)
                        }
                        row += panelColumns
                    }
                    return
                }
                for kk in ks {
                    row.update(from: b + kk * ldb + column, count: width)
                    if width < panelColumns { (row + width).update(repeating: 0, count: panelColumns - width) }
                    row += panelColumns
                }
            }
            /// Block `block` of B for `ks`: in place, or its packed copy (`slot` of the packed area).
            func source(_ block: Int, _ ks: Range<Int>, slot: Int) -> (UnsafePointer<Float>, Int) {
                direct ? (b + ks.lowerBound * ldb + block * blockStride, ldb)
                       : (UnsafePointer(packedB! + slot * ks.count * panelColumns), panelColumns)
            }
            func one(_ panel: Int, _ block: Int, _ ks: Range<Int>, _ bBlock: (UnsafePointer<Float>, Int)) {
                let first = panel * panelRows
                let valid = min(panelRows, rowEnd - first)
                let last = ks.upperBound == k
                let biases = last ? bias.map { $0 + first } : nil
                let column = block * panelColumns
                let a = weightsOf(panel, ks)
                let accumulate = ks.lowerBound > 0
                let width = min(panelColumns, n - column)
                if padded || width == panelColumns {
                    let target = c + first * ldc + column
                    if let prefetchDistance {
                        tile.streamed(ks.count, a, bBlock.0, bBlock.1, target, ldc, valid, accumulate, biases, code,
                                      prefetchDistance)
                    } else {
                        kernel(ks.count, a, bBlock.0, bBlock.1, target, ldc, valid, accumulate, biases, code)
                    }
                } else {
                    let tile = edgeTile!
                    if accumulate {
                        for r in 0..<valid { (tile + r * panelColumns).update(from: c + (first + r) * ldc + column, count: width) }
                    }
                    kernel(ks.count, a, bBlock.0, bBlock.1, tile, panelColumns, valid, accumulate, biases, code)
                    for r in 0..<valid {
                        (c + (first + r) * ldc + column).update(from: tile + r * panelColumns, count: width)
                    }
                }
            }
            for start in Swift.stride(from: 0, to: k, by: chunk) {
                let ks = start ..< min(start + chunk, k)
                if panelsOuter {
                    if !direct { for block in 0..<blocks { pack(block, ks, into: packedB! + block * ks.count * panelColumns) } }
                    for panel in panels {
                        for block in 0..<blocks { one(panel, block, ks, source(block, ks, slot: block)) }
                    }
                } else {
                    for block in 0..<blocks {
                        if !direct { pack(block, ks, into: packedB!) }
                        let bBlock = source(block, ks, slot: 0)
                        let column = block * panelColumns
                        if padded || n - column >= panelColumns, let first = panels.first {
                            // The block's whole column of tiles in one call.
                            let row = first * panelRows
                            let rows = min(rowEnd, panels.upperBound * panelRows) - row
                            tile.sweep(ks.count, weightsOf(first, ks), panelStride, bBlock.0, bBlock.1,
                                       c + row * ldc + column, ldc, rows, ks.lowerBound > 0,
                                       ks.upperBound == k ? bias.map { $0 + row } : nil, code, prefetchDistance ?? 0)
                        } else {
                            for panel in panels { one(panel, block, ks, bBlock) }
                        }
                    }
                }
            }
        }
    }

    /// `C[0..<m, 0..<n] = A · B` with A already in panels (`[panel][k][panelRows]`; rows past `m` may
    /// hold anything) and B stored block by block (`[block][k][panelColumns]`, columns past `n` zero or
    /// anything); C's rows are written up to `n` rounded up to `panelColumns`, rows past `m` are not
    /// written. Only for a family with its own kernel. B is read as a stream, once, with prefetching
    /// (`streamPrefetchBytes`): its callers (the transposed Winograd path) use it for weights too large
    /// to stay in cache from one pass to the next.
    /// How far ahead of the row it reads the kernel prefetches a streamed B (`multiplyPanels`): 32 KB,
    /// one block of 512 rows with the AVX2 tile, so the next block is on its way while the panels of A
    /// multiply this one. Without it the 13×13 Winograd layers spend much of their time waiting on
    /// memory; a few KB ahead is too short to help.
    static let streamPrefetchBytes = 32_768

    static func multiplyPanels(_ a: UnsafePointer<Float>, m: Int, k: Int, blocks b: UnsafePointer<Float>, n: Int,
                               c: UnsafeMutablePointer<Float>, ldc: Int) {
        guard m > 0, n > 0 else { return }
        guard let tile else { preconditionFailure("GEMM.multiplyPanels needs a family with its own kernel") }
        let operands = Operands(tile: tile, k: k, b: b, ldb: panelColumns, n: n, c: c, ldc: ldc, bias: nil,
                                activation: .linear, padded: true, scratch: nil, blockStride: k * panelColumns,
                                prefetchDistance: streamPrefetchBytes)
        let panelRows = operands.panelRows
        operands.run(a, panels: 0 ..< (m + panelRows - 1) / panelRows, rowEnd: m, panelsOuter: m * k >= k * n)
    }
}
