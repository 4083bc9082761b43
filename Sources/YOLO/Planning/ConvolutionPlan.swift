/// How one convolution layer runs: algorithm, blocking, weight storage, fusion and threads, made by
/// `ConvolutionPlanner` from the layer's shape, the kernel family, the thread count and the model's storage.
/// The layers execute their plan and choose nothing themselves; `yolo info --plan` prints the plans.
@_spi(Engine) public struct ConvolutionPlan: Sendable, Equatable, CustomStringConvertible {
    /// How the products are organised.
    public enum Algorithm: Sendable, Equatable {
        /// im2col (none for a 1×1 stride-1 unpadded layer) and one GEMM over the whole map; with several
        /// threads the product is cut into the parts of `split`.
        case gemm(split: Split)
        /// im2col and GEMM a band of `rows` output rows at a time (the band's columns stay in L2); the output
        /// rows are split over the threads, band by band.
        case gemmBands(rows: Int)
        /// Winograd F(m×m, 3×3).
        case winograd(WinogradChoice)
        /// Int8 only, a 3×3 padding-1 layer of stride 1 or 2: the product read in place from the input packed in
        /// planes of channel quads (no im2col, no packing of B; `Int8Convolution`), the threads splitting `split`.
        case int8Direct(split: DirectSplit)
        /// Int8 only, a 3×3 stride-1 padding-1 layer on a kernel that stores s32 sums (`Int8Kernel.storesSums`):
        /// exact integer Winograd F(tile×tile, 3×3): 16 products of s16 transforms per 2×2 outputs and channel
        /// instead of 36 (tile 2), or 36 per 4×4 outputs instead of 144 (tile 4, where the layer's weights keep it
        /// exact, else tile 2: `Int8WinogradGeometry.fitsTile4`); the threads split the transforms' tiles and the
        /// products' blocks (`Int8Convolution`).
        case int8Winograd(tile: Int)
        /// A convolution with channel groups (depthwise in YOLO11): each output channel summed directly from its
        /// group's input channels, vectorized along the output row (`GroupedConvolution`, one generic SIMD body for
        /// every kernel family); the threads split the output channels.
        case grouped
    }

    /// Which side of an int8 direct product the threads share (`Algorithm.int8Direct`).
    public enum DirectSplit: String, Sendable {
        /// The 64-column blocks of output positions.
        case columns
        /// Filters.
        case filters
    }

    /// How threads share a whole-map product C (filters × output pixels): a grid of `filters` × `columns` parts,
    /// each a block of C of whole kernel tiles (`ConvolutionPlanner.gemmSplit`). Every value of C is computed the
    /// same way in any part (the inner dimension is never cut), so the grid never changes a result.
    public struct Split: Sendable, Equatable, CustomStringConvertible {
        /// Parts along the filters (C's rows) and along the output pixels (C's columns).
        public var filters: Int
        public var columns: Int
        /// The multiply-adds the kernel runs for the largest part (its tiles counted whole) over an even share of
        /// the whole product's (all over the threads): 1 is a perfect balance.
        public var largestShare: Double

        public init(filters: Int, columns: Int, largestShare: Double = 1) {
            (self.filters, self.columns, self.largestShare) = (max(1, filters), max(1, columns), largestShare)
        }

        /// One part: the whole product.
        public static let whole = Split(filters: 1, columns: 1)

        public var parts: Int { filters * columns }

        /// The pieces threads claim (`Parallel.forClaimed`): every part cut into `Parallel.piecesPerThread` along
        /// its columns (each piece packs only its own columns of B), or along its filters when its columns are one
        /// aligned group; the whole product when the split is `whole`. Fixed by the plan, not by the threads a pass
        /// gets, so each piece is the same product whatever the thread count.
        public var pieces: Int { parts == 1 ? 1 : parts * Parallel.piecesPerThread }

        /// Piece `piece`'s filters (C's rows) and output pixels (C's columns) of a `rows` × `columns` product,
        /// boundaries on multiples of the alignments (the last excepted). Either may be empty.
        public func piece(_ piece: Int, rows: Int, columns count: Int, rowAlignment: Int, columnAlignment: Int)
            -> (rows: Range<Int>, columns: Range<Int>) {
            let cuts = pieces / parts
            let (part, cut) = piece.quotientAndRemainder(dividingBy: cuts)
            let r = Parallel.alignedPart(part / columns, of: filters, count: rows, alignment: rowAlignment)
            let c = Parallel.alignedPart(part % columns, of: columns, count: count, alignment: columnAlignment)
            if c.count > columnAlignment {
                let sub = Parallel.alignedPart(cut, of: cuts, count: c.count, alignment: columnAlignment)
                return (r, c.lowerBound + sub.lowerBound ..< c.lowerBound + sub.upperBound)
            }
            let sub = Parallel.alignedPart(cut, of: cuts, count: r.count, alignment: rowAlignment)
            return (r.lowerBound + sub.lowerBound ..< r.lowerBound + sub.upperBound, c)
        }

        /// E.g. `2 × 8 parts (filters × columns), largest 1.03× an even share`.
        public var description: String {
            let hundredths = Int((largestShare * 100).rounded())
            return parts == 1 ? "one part"
                : "\(filters) × \(columns) parts (filters × columns), largest \(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)× an even share"
        }
    }

    /// How the weights stay in memory during a pass.
    public enum Weights: Sendable, Equatable {
        /// Packed at build: float32 for the GEMM (or transformed for Winograd), or s8 for the int8 kernel when
        /// `precision` is int8.
        case float
        /// LUT codes, expanded `blockRows` filters at a time just before their product (`LUTConvolution`).
        case lutCodes(blockRows: Int)
    }

    /// A later layer that computes this convolution itself, when the workspace does not keep its output.
    public enum Fusion: Sendable, Equatable {
        /// The 2×2 max-pool right after it (`ConvolutionMaxPool`): direct 3×3 convolution, `bandRows` output
        /// rows a band, pooled as each band is made.
        case maxPool(bandRows: Int)
        /// The convolution right after it (`ConvolutionPair`), a few rows at a time in each worker's window.
        case nextConvolution
    }

    public var algorithm: Algorithm
    public var weights: Weights
    /// Set when the next layer computes this one (see `Fusion`).
    public var fusion: Fusion?
    /// The most threads a pass gives the layer: its scratch is made for that many workers.
    public var maxThreads: Int
    /// The arithmetic the layer runs in.
    public var precision: Precision = .fp32

    /// The arithmetic of a convolution: the model's storage and the family decide it (`ConvolutionPlanner`).
    public enum Precision: Sendable, Equatable {
        /// float32 products (float or LUT-expanded weights, or int8 weights expanded on a family without an
        /// int8 kernel).
        case fp32
        /// u8 activations × s8 weights, summed exactly in s32 by this int8 kernel (`Int8Convolution`).
        case int8(Int8KernelFamily.Name)
    }

    /// The Winograd choice, if any.
    public var winograd: WinogradChoice? {
        if case .winograd(let choice) = algorithm { return choice }
        return nil
    }

    /// One line: e.g. `winograd F(4,3) rows of tiles, 3-row blocks dealt out; float; 2 threads`.
    public var description: String {
        var parts: [String]
        switch algorithm {
        case .gemm(let split): parts = ["gemm in \(split)"]
        case .gemmBands(let rows): parts = ["gemm by bands of \(rows) output rows"]
        case .winograd(let w): parts = [w.description]
        case .int8Direct(let split): parts = ["direct on channel quads, threads split the \(split.rawValue)"]
        case .int8Winograd(let tile): parts = ["int8 winograd F(\(tile),3), threads split tiles and products"]
        case .grouped: parts = ["grouped direct, threads split the channels"]
        }
        switch (weights, precision) {
        case (_, .int8(let kernel)): parts.append("int8 (\(kernel.rawValue) kernel)")
        case (.float, _): parts.append("float")
        case (.lutCodes(let rows), _): parts.append("LUT codes expanded \(rows) filters at a time")
        }
        switch fusion {
        case .maxPool(let rows)?: parts.append("computed by the next max-pool (direct, \(rows)-row bands)")
        case .nextConvolution?: parts.append("computed by the next convolution, by bands")
        case nil: break
        }
        parts.append("\(maxThreads) thread\(maxThreads == 1 ? "" : "s")")
        return parts.joined(separator: "; ")
    }
}

/// The Winograd variant and blocking of one layer (`WinogradPlan` holds the geometry and transformed filters).
@_spi(Engine) public struct WinogradChoice: Sendable, Equatable, CustomStringConvertible {
    /// How the transforms and products are laid out.
    public enum Variant: String, Sendable {
        /// Transforms on groups of 8 tiles, products on tiles × filters (`Convolution+Winograd.swift`).
        case tiles8 = "8-lane tiles"
        /// Transforms on whole rows of tiles, 16 per vector (`Convolution+WinogradRows.swift`).
        case rows = "rows of tiles"
        /// Small maps: products compute Mᵀ = Vᵀ·Uᵀ, tiles on the kernel's 6-row side
        /// (`Convolution+WinogradTransposed.swift`).
        case transposed
    }

    /// The output tile edge: 2 (F(2×2)) or 4 (F(4×4)).
    public var m: Int
    public var variant: Variant
    /// Tile rows per block (`rows`; the map's tile rows otherwise).
    public var blockRows: Int
    /// Tiles per block (a multiple of the tile alignment; all tiles when `transposed`).
    public var blockTiles: Int
    /// Whether each worker runs whole blocks in its own scratch (else blocks run one after another with
    /// each step split over the workers).
    public var dealsBlocks: Bool

    public var description: String {
        let blocking = variant == .transposed ? "one block"
            : variant == .rows ? "\(blockRows)-row blocks" + (dealsBlocks ? " dealt out" : " in turn")
            : "\(blockTiles)-tile blocks dealt out"
        return "winograd F(\(m),3) \(variant.rawValue), \(blocking)"
    }
}
