import Foundation
import YOLOKernels

/// A Winograd convolution's geometry and transformed filters, built once at network build.
struct WinogradPlan: Sendable {
    let transform: WinogradTransform
    let tilesY: Int
    let tilesX: Int
    /// Tiles in one map: `tilesY · tilesX` (the GEMMs' N).
    let tiles: Int
    /// `tiles` rounded up to `tileAlignment`: the GEMMs then never need edge copies.
    let paddedTiles: Int
    let inChannels: Int
    let filters: Int
    /// α² matrices of `filters × inChannels`, `U[ξ][filter][channel]`, packed for `GEMM` (nil when
    /// `transposed`).
    let u: PackedMatrix?
    /// True on small maps with the own kernel (`Convolution+WinogradTransposed.swift`): the products
    /// compute Mᵀ = Vᵀ·Uᵀ, tiles on the kernel's 6-row side and filters on its 64-column side, so few
    /// tiles (49 on yolov3-tiny's 13×13 and 26×26 layers) waste less than one 64-tile block would.
    let transposed: Bool
    /// With `transposed`, Uᵀ for each ξ stored block by block for the kernel's 64-column side:
    /// `[ξ][filter block][channel][64]` (`paddedFilters` filters, the extra ones zero).
    let uBlocks: FloatBuffer?
    /// `filters` rounded up to 64.
    let paddedFilters: Int
    /// Tiles per cache block (a multiple of `lanes`): V and M of one block stay in the core's L2.
    /// Equals `paddedTiles` (one block) when the filters are large, so U is packed once per layer.
    let blockTiles: Int
    /// Workers the scratch memory has room for when there are several blocks.
    let maxWorkers: Int
    /// True when the transforms run on whole rows of tiles, 16 tiles (one tile row's run) per vector
    /// (`Convolution+WinogradRows.swift`): only with the own GEMM kernel and maps at least
    /// `rowTilesMinimum` tiles wide. Blocks are then whole tile rows: `blockRows` of them.
    let rowVectorized: Bool
    /// Tile rows per block when `rowVectorized`.
    let blockRows: Int
    /// True when each worker runs whole blocks in its own scratch (many blocks that fit in L2);
    /// false when blocks run one after another with each step split over the workers. The 8-lane
    /// path always deals several blocks out.
    let dealsBlocks: Bool
    /// The zero-padded copy of the input the tiles are read from: one cell of padding on the top
    /// and left, and enough on the bottom and right for the last tiles (`tiles · m + 2` per axis;
    /// wider when `rowVectorized`, whose loads cover whole groups of 16 tiles).
    let paddedHeight: Int
    let paddedWidth: Int
    /// With `rowVectorized`, a padded row is stored by phase: cell x at `(x mod m)·phaseLength + x / m`.
    var phaseLength: Int { paddedWidth / transform.m }
    /// The active family's Winograd transforms (compiled for its ISA), which the `rowVectorized` and
    /// `transposed` paths run; read once here, not per tile.
    let kernels: WinogradKernels?
    /// With `transposed`, `lanes` entries per panel of `panelRows` (6) tiles: where each of the panel's
    /// tiles starts in a padded plane (`ty·m·paddedWidth + tx·m`); lanes past the panel or the last
    /// tile read tile 0. The input transform then stores each ξ of a panel's tiles as one run of 6
    /// floats in Vᵀ (`[ξ][tile panel][channel][6]`).
    let tileOffsets: SharedBuffer<Int>?

    /// Tiles per SIMD group of the transforms.
    static let lanes = 8
    /// Tiles per vector of the row-vectorized transforms.
    static let rowLanes = 16
    /// Tiles the padded count and the blocks are multiples of (`ConvolutionPlanner.tileAlignment`).
    static var tileAlignment: Int { ConvolutionPlanner.tileAlignment(KernelFamily.active) }

    /// Transforms `weights` (`[filters][inChannels][3][3]`) for a `height × width` map, laid out as `choice`
    /// (`ConvolutionPlanner.winogradChoice`) says, with scratch for `maxWorkers` workers.
    init(choice: WinogradChoice, inChannels: Int, filters: Int, height: Int, width: Int, weights: FloatBuffer, maxWorkers: Int) {
        precondition(weights.count == filters * inChannels * 9, "WinogradPlan: weights are not 3x3")
        let m = choice.m
        let transform = WinogradTransform(m: m)
        self.transform = transform
        self.tilesY = (height + m - 1) / m
        self.tilesX = (width + m - 1) / m
        self.tiles = tilesY * tilesX
        let alignment = Self.tileAlignment
        self.paddedTiles = (tiles + alignment - 1) / alignment * alignment
        self.inChannels = inChannels
        self.filters = filters
        let alpha2 = transform.alpha * transform.alpha
        self.maxWorkers = max(1, maxWorkers)
        self.kernels = KernelFamily.active.winograd
        let rowVectorized = choice.variant == .rows
        let transposed = choice.variant == .transposed
        precondition(!(rowVectorized || transposed) || kernels != nil, "WinogradPlan: the active kernel family has no row transforms")
        precondition(m != 6 || rowVectorized, "WinogradPlan: F(6x6, 3x3) runs on rows of tiles only")
        self.rowVectorized = rowVectorized
        self.transposed = transposed
        self.paddedFilters = (filters + GEMM.panelColumns - 1) / GEMM.panelColumns * GEMM.panelColumns
        self.blockRows = choice.blockRows
        self.blockTiles = choice.blockTiles
        self.dealsBlocks = choice.dealsBlocks
        let panelRows = GEMM.panelRows
        self.vPlaneStride = transposed ? (tiles + panelRows - 1) / panelRows * panelRows * inChannels + 16
            : inChannels * blockTiles + 16
        self.paddedHeight = tilesY * m + 2
        let groups = (tilesX + Self.rowLanes - 1) / Self.rowLanes
        // Row-vectorized plans keep each padded row split by phase (`phaseLength` floats per x mod m) so
        // that one column of 16 adjacent tiles is one contiguous load; m phases of 16·groups + 2 cells.
        self.paddedWidth = rowVectorized ? m * (groups * Self.rowLanes + 2) : tilesX * m + 2
        if transposed {
            let panels = (tiles + panelRows - 1) / panelRows
            let (tiles, tilesX, paddedWidth) = (self.tiles, self.tilesX, self.paddedWidth)
            self.tileOffsets = SharedBuffer<Int>(count: panels * Self.lanes) { offsets in
                for panel in 0..<panels {
                    for lane in 0..<panelRows {
                        let t = panel * panelRows + lane
                        if t < tiles { offsets[panel * Self.lanes + lane] = (t / tilesX) * m * paddedWidth + (t % tilesX) * m }
                    }
                }
            }
        } else {
            self.tileOffsets = nil
        }
        let workers = self.maxWorkers
        let transform1 = transform
        if transposed {
            let padded = paddedFilters
            self.u = nil
            let columns = GEMM.panelColumns
            self.uBlocks = FloatBuffer(count: alpha2 * inChannels * padded) { u in
                let u = u.baseAddress!
                Self.transformFilters(weights, transform: transform1, inChannels: inChannels, filters: filters,
                                      workers: workers) { k, c, xi, value in
                    let block = k / columns
                    u[(xi * inChannels * padded) + (block * inChannels + c) * columns + k % columns] = value
                }
            }
        } else {
            self.uBlocks = nil
            self.u = PackedMatrix(count: alpha2, rows: filters, columns: inChannels) { u, layout in
                Self.transformFilters(weights, transform: transform1, inChannels: inChannels, filters: filters,
                                      workers: workers) { k, c, xi, value in
                    u[layout.index(matrix: xi, row: k, column: c)] = value
                }
            }
        }
    }

    /// Computes U = G w Gᵀ in Double for every (filter k, channel c) and hands each of its α² values
    /// to `store(k, c, ξ, value)`. Work is split over the filters across the machine's cores (a
    /// one-time cost at build); `store` must write only that (k, c, ξ)'s place.
    private static func transformFilters(_ weights: FloatBuffer, transform: WinogradTransform, inChannels: Int,
                                         filters: Int, workers: Int,
                                         store: (_ k: Int, _ c: Int, _ xi: Int, _ value: Float) -> Void) {
        let alpha = transform.alpha
        let gMatrix = transform.filterMatrix.flatMap { $0 }   // α×3, row-major
        Parallel.forRanges(filters, threads: workers) { range in
            // Local copy of G (α×3): no array bounds checks or reference counting in the loop.
            withUnsafeTemporaryAllocation(of: Double.self, capacity: alpha * 6) { scratch in
                let temp = scratch.baseAddress!
                let g = scratch.baseAddress! + alpha * 3
                for i in 0..<(alpha * 3) { g[i] = gMatrix[i] }
                for k in range {
                    for c in 0..<inChannels {
                        let w = weights.pointer + (k * inChannels + c) * 9
                        for i in 0..<alpha {
                            for j in 0..<3 {
                                temp[i * 3 + j] = g[i * 3] * Double(w[j]) + g[i * 3 + 1] * Double(w[3 + j])
                                    + g[i * 3 + 2] * Double(w[6 + j])
                            }
                        }
                        for i in 0..<alpha {
                            for j in 0..<alpha {
                                let value = temp[i * 3] * g[j * 3] + temp[i * 3 + 1] * g[j * 3 + 1]
                                    + temp[i * 3 + 2] * g[j * 3 + 2]
                                store(k, c, i * alpha + j, Float(value))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Number of tile blocks.
    var blocks: Int {
        if transposed { return 1 }
        return rowVectorized ? (tilesY + blockRows - 1) / blockRows : (paddedTiles + blockTiles - 1) / blockTiles
    }

    /// Floats from one of V's α² planes (`C × blockTiles`) to the next: 16 more than the plane, so
    /// the α² values of one tile, read or written together by a transform, do not all fall in the
    /// same L1 cache set (plane sizes are often multiples of 4 KB).
    /// Stored: the transforms read it once per ξ of every tile group, and the kernel family behind
    /// `GEMM.panelRows` is not free to ask for.
    let vPlaneStride: Int
    /// The same for M's planes (`K × blockTiles`, or `tiles × paddedFilters` when `transposed`).
    /// With `transposed`, Mᵀ is stored tile by tile instead (`[tile][ξ][filter]`, so the output
    /// transform reads one tile's α² rows from one small region): this is then the distance from
    /// one ξ to the next within a tile, `paddedFilters` + 16.
    var mPlaneStride: Int { transposed ? paddedFilters + 16 : filters * blockTiles + 16 }
    /// With `transposed`, the distance from one tile's rows of Mᵀ to the next: α² · `mPlaneStride`.
    var mTileStride: Int { transform.alpha * transform.alpha * mPlaneStride }

    /// Scratch floats of one block: V (`α²` planes) then M (`α²` planes).
    var blockScratch: Int {
        transform.alpha * transform.alpha * vPlaneStride + (transposed ? tiles * mTileStride : transform.alpha * transform.alpha * mPlaneStride)
    }

    /// Floats of the padded input copy, rounded up to keep what follows 64-byte aligned; none with
    /// `rowVectorized` or `transposed`, which pad a channel's rows into `bandCount` floats of each
    /// transform buffer just before transforming them.
    var paddedInputCount: Int {
        rowVectorized || transposed ? 0 : (inChannels * paddedHeight * paddedWidth + 15) / 16 * 16
    }
    /// The floats of one channel's padded rows: for a block (`blockRows · m + 2` rows) with `rowVectorized`,
    /// the whole plane with `transposed`.
    var bandCount: Int {
        let rows = rowVectorized ? blockRows * transform.m + 2 : transposed ? paddedHeight : 0
        // With `transposed`, 8 floats more: the input transform reads each tile row as 8 floats, up to 6
        // past the last row's end (`WinogradTiles.inputTiles6`).
        return (rows * paddedWidth + (transposed ? 8 : 0) + 15) / 16 * 16
    }

    /// Floats of one worker's transform buffer: two α² blocks of 8-lane vectors, then 8 tile
    /// offsets (two vectors' worth of bytes). Kept in the workspace: a stack buffer this large
    /// (2.4 KB) is heap-allocated by `withUnsafeTemporaryAllocation`.
    /// With `rowVectorized` or `transposed`, two α² blocks of 16-lane vectors and one output row's run of 16·m
    /// floats (at least 64).
    /// With `rowVectorized` or `transposed`, one channel's padded rows follow (`bandCount`).
    var transformBufferCount: Int { vectorBufferCount + bandCount }
    /// The vectors at the start of a transform buffer.
    var vectorBufferCount: Int {
        rowVectorized || transposed ? (2 * transform.alpha * transform.alpha + max(4, transform.m)) * Self.rowLanes
            : (2 * transform.alpha * transform.alpha + 2) * Self.lanes
    }

    /// Scratch floats: the padded input, one transform buffer per worker, then one block's worth of
    /// V and M per worker (one block in all when there is only one, or when blocks run one after
    /// another: `rowVectorized`).
    /// Bytes of the transformed filters and the tile table, made for this layer at this size.
    var ownedBytes: Int {
        (u?.byteCount ?? 0) + (uBlocks.map { $0.count * MemoryLayout<Float>.stride } ?? 0)
            + (tileOffsets.map { $0.count * MemoryLayout<Int>.stride } ?? 0)
    }

    var scratchCount: Int {
        paddedInputCount + transformBufferCount * maxWorkers
            + blockScratch * (blocks == 1 || (rowVectorized && !dealsBlocks) || transposed ? 1 : maxWorkers)
    }
}
