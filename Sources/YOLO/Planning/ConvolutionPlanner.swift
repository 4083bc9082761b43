import YOLOKernels

/// The one place that decides how each layer runs (ncnn's `create_pipeline`): a `ConvolutionPlan` per
/// convolution from its shape, the kernel family, the thread count and whether its weights stay as LUT codes;
/// and per network, which layers fuse and how many threads each layer is worth (`NetworkPlan`). Layers and
/// kernels execute plans; a new path (int8, another ISA, an ONNX operator) is a rule here plus a kernel.
///
/// Every rule below is a pure function of its arguments (the family is a parameter, not the CPU), so the
/// tests can assert the plans of the yolov3-tiny and yolov4-tiny tables for every family on any machine.
@_spi(Engine) public enum ConvolutionPlanner {
    /// The facts of one convolution a plan depends on.
    public struct Layer: Sendable, Equatable {
        public var input: Shape
        public var filters: Int
        public var size: Int
        public var stride: Int
        public var padding: Int
        /// Channel groups (`ConvolutionSpec.groups`); 1 for a plain convolution.
        public var groups: Int = 1
        /// The layer's activation (only the int8 rules read it).
        public var activation: Activation = .linear

        public init(input: Shape, filters: Int, size: Int, stride: Int, padding: Int, groups: Int = 1, activation: Activation = .linear) {
            (self.input, self.filters, self.size, self.stride, self.padding) = (input, filters, size, stride, padding)
            (self.groups, self.activation) = (groups, activation)
        }

        public var output: Shape {
            Convolution.outputShape(input: input, filters: filters, size: size, stride: stride, padding: padding)
        }
        /// The GEMM's K: `inChannels · size²`.
        public var patchLength: Int { input.channels * size * size }
        public var isPointwise: Bool { size == 1 && stride == 1 && padding == 0 }
        var isWinogradShape: Bool { size == 3 && stride == 1 && padding == 1 }
    }

    /// The plan of `layer` alone (no fusion): `algorithm` `.auto` lets the rules choose; a Winograd choice
    /// that does not apply to the shape falls back to im2col. `lutCodes`: the weights stay as LUT codes.
    /// `int8`: the weights are int8 and run on this int8 kernel (nil: in float; the caller passes the family's
    /// `int8Kernel` for a layer stored as int8).
    public static func plan(_ layer: Layer, algorithm: ConvolutionAlgorithm = .auto, lutCodes: Bool = false,
                            int8: Int8KernelFamily? = nil, threads: Int, family: KernelFamily = .active) -> ConvolutionPlan {
        let threads = max(1, threads)
        // A grouped (depthwise) layer is a few multiply-adds per output value with nothing to share between
        // filters: no GEMM, no Winograd; the model file keeps its weights float32, so it never has codes or int8.
        if layer.groups > 1 {
            return ConvolutionPlan(algorithm: .grouped, weights: .float, fusion: nil, maxThreads: threads)
        }
        if let int8 {
            let plain = algorithm == .im2col
            let algorithm: ConvolutionPlan.Algorithm = (plain ? nil : int8DirectSplit(layer, kernel: int8, threads: threads).map { .int8Direct(split: $0) })
                ?? (plain ? nil : int8WinogradTile(layer, algorithm: algorithm, kernel: int8).map { .int8Winograd(tile: $0) })
                ?? int8BandRows(layer, kernel: int8).map { .gemmBands(rows: $0) }
                ?? .gemm(split: gemmSplit(layer, threads: threads, family: family, int8: int8))
            return ConvolutionPlan(algorithm: algorithm, weights: .float, fusion: nil, maxThreads: threads, precision: .int8(int8.name))
        }
        if lutCodes {
            let rows = lutBlockRows(layer, family: family)
            return ConvolutionPlan(algorithm: .gemm(split: gemmSplit(layer, threads: threads, family: family, lutBlockRows: rows)),
                                   weights: .lutCodes(blockRows: rows), fusion: nil, maxThreads: threads)
        }
        if let m = winogradTile(layer, algorithm: algorithm, family: family) {
            var choice = winogradChoice(layer, m: m, threads: threads, family: family)
            // F(6×6) has only the row transforms; where they do not apply, F(4×4).
            if m == 6 && choice.variant != .rows { choice = winogradChoice(layer, m: 4, threads: threads, family: family) }
            return ConvolutionPlan(algorithm: .winograd(choice), weights: .float, fusion: nil, maxThreads: threads)
        }
        if let rows = gemmBandRows(layer) {
            return ConvolutionPlan(algorithm: .gemmBands(rows: rows), weights: .float, fusion: nil, maxThreads: threads)
        }
        return ConvolutionPlan(algorithm: .gemm(split: gemmSplit(layer, threads: threads, family: family)), weights: .float,
                               fusion: nil, maxThreads: threads)
    }

    // MARK: - Splitting a whole-map product

    /// The grid of parts `threads` threads cut `layer`'s whole-map product into (`gemmGrid`), on the tiles of the
    /// kernel that runs it: the int8 kernel's, the family's own kernel's, or OpenBLAS's fixed blocks
    /// (`GEMM.blasRowBlock` × `GEMM.blasColumnBlock`, so that every value comes from the same `sgemm` call
    /// whatever the grid). A LUT layer deals blocks of `lutBlockRows` filters and never cuts the columns.
    static func gemmSplit(_ layer: Layer, threads: Int, family: KernelFamily, int8: Int8KernelFamily? = nil,
                          lutBlockRows: Int? = nil) -> ConvolutionPlan.Split {
        let (m, n) = (layer.filters, layer.output.planeCount)
        if let lutBlockRows {
            return gemmGrid(m: m, n: n, threads: threads, rowAlignment: lutBlockRows, columnAlignment: n)
        }
        if let int8 {
            return gemmGrid(m: m, n: n, threads: threads, rowAlignment: int8.kernel.tileRows,
                            columnAlignment: int8.kernel.tileColumns, packingCost: int8PackingCost)
        }
        return family.hasOwnKernel
            ? gemmGrid(m: m, n: n, threads: threads, rowAlignment: family.tileRows, columnAlignment: family.tileColumns)
            : gemmGrid(m: m, n: n, threads: threads, rowAlignment: GEMM.blasRowBlock, columnAlignment: GEMM.blasColumnBlock)
    }

    /// What copying one value of B into a part's packed blocks costs, in the kernel's multiply-adds: a float copy
    /// about two fp32 multiply-adds (16 floats copied in about the time of 32 FMA lanes); an int8 kernel's
    /// interleaving about eight of its u8 × s8 multiply-adds (four per 32-bit lane).
    static let floatPackingCost = 2
    static let int8PackingCost = 8

    /// The grid for an `m × n` product (`m` filters, `n` output pixels) on `threads` threads, each part one
    /// thread's: rows cut on multiples of `rowAlignment`, columns on multiples of `columnAlignment` (whole kernel
    /// tiles), so only C's last row and column of tiles are partial. Among the grids of `f × c ≤ threads` parts
    /// the one whose largest part costs least: its tiles counted whole (`rows × columns` multiply-adds per step
    /// of the inner dimension) plus its copy of B's columns (`packingCost` each: every filter part packs its
    /// columns again); then the fewer parts, then the fewer filter parts. Two threads on a large map split the
    /// columns, on a small map with many filters the filters; 16 threads take a grid such as 4 × 4.
    static func gemmGrid(m: Int, n: Int, threads: Int, rowAlignment: Int, columnAlignment: Int,
                                packingCost: Int = floatPackingCost) -> ConvolutionPlan.Split {
        let threads = max(1, threads), rowAlignment = max(1, rowAlignment), columnAlignment = max(1, columnAlignment)
        guard m > 0, n > 0, threads > 1 else { return .whole }
        let rowBlocks = (m + rowAlignment - 1) / rowAlignment, columnBlocks = (n + columnAlignment - 1) / columnAlignment
        var best: (cost: Int, parts: Int, filters: Int, columns: Int)?
        for filters in 1...min(threads, rowBlocks) {
            let columns = min(threads / filters, columnBlocks)
            let rows = (rowBlocks + filters - 1) / filters * rowAlignment
            let width = (columnBlocks + columns - 1) / columns * columnAlignment
            let candidate = (cost: width * (rows + packingCost), parts: filters * columns, filters: filters, columns: columns)
            if best.map({ (candidate.cost, candidate.parts, candidate.filters) < ($0.cost, $0.parts, $0.filters) }) ?? true {
                best = candidate
            }
        }
        let grid = best!
        // The largest part's tiles against an even share of the whole product's.
        let largest = (rowBlocks + grid.filters - 1) / grid.filters * ((columnBlocks + grid.columns - 1) / grid.columns)
        return ConvolutionPlan.Split(filters: grid.filters, columns: grid.columns,
                                     largestShare: Double(largest * threads) / Double(rowBlocks * columnBlocks))
    }

    // MARK: - Algorithm

    /// The Winograd tile for `layer`, nil for the GEMM path. `.auto`: for a 3×3 stride-1 padding-1 layer with
    /// at least 16 input channels, F(4×4) on maps larger than 16×16, and on smaller ones the family's choice
    /// (F(2×2) where its U, 2.25× smaller, matters more: OpenBLAS repacks U on every call); otherwise GEMM
    /// (with fewer channels the transforms cost about as much as the multiplications they save, or more).
    static func winogradTile(_ layer: Layer, algorithm: ConvolutionAlgorithm, family: KernelFamily) -> Int? {
        guard layer.isWinogradShape else { return nil }
        switch algorithm {
        case .im2col: return nil
        case .winograd2: return 2
        case .winograd4: return 4
        case .winograd6: return 6
        case .auto:
            guard layer.input.channels >= 16 else { return nil }
            return layer.input.width <= 16 && layer.input.height <= 16 ? family.smallMapWinogradTile : 4
        }
    }

    /// Output rows per band for the banded GEMM path, nil when the whole map is one product: bands of about
    /// 256 KB of unfolded columns (they stay in L2), only for maps tall enough for two bands or more, and
    /// only for small filters (the weights are read once per band): at most 256 KB of them; or, when the
    /// whole map's unfolded columns would take `wholeColumnsFloats` or more, as many as fit in L2 beside a
    /// band (`GEMM.l2Floats`). Such a map's columns, written out whole and read back, go through L3 and
    /// memory, which costs more than reading larger weights again from L2 for each band (fall v8s's layer 10);
    /// with fewer columns the whole map stays the faster, and weights beyond L2 are slower by bands.
    static func gemmBandRows(_ layer: Layer) -> Int? {
        let weights = layer.filters * layer.patchLength
        let wholeColumns = layer.patchLength * layer.output.planeCount
        guard !layer.isPointwise,
              weights <= bandFloats || (wholeColumns >= wholeColumnsFloats && weights <= GEMM.l2Floats - bandFloats)
        else { return nil }
        let rows = max(1, bandFloats / max(1, layer.patchLength * layer.output.width))
        return layer.output.height >= 2 * rows ? rows : nil
    }

    /// Floats of unfolded columns a band of the banded GEMM path may take (256 KB).
    static let bandFloats = 65_536
    /// Unfolded columns (floats) from which a whole-map product costs more than bands with larger weights (8 MB:
    /// a quarter of the 32 MB L3 the Zen 4 hosts share).
    static let wholeColumnsFloats = 2_097_152

    /// Bytes of unfolded u8 columns an int8 band may take (they stay in L2 while every filter multiplies them).
    static let int8BandBytes = 262_144

    /// Output rows per band of an int8 layer, nil for one product over the whole map: bands of at most
    /// `int8BandBytes` of unfolded columns, for layers that unfold (not 1×1 stride 1) on maps with two bands or
    /// more; among the heights from half that size up, the one whose band wastes least of the kernel's last
    /// column block.
    static func int8BandRows(_ layer: Layer, kernel: Int8KernelFamily) -> Int? {
        guard !layer.isPointwise else { return nil }
        let width = layer.output.width
        let most = max(1, int8BandBytes / max(1, layer.patchLength * width))
        guard layer.output.height >= 2 * most else { return nil }
        let columns = kernel.kernel.tileColumns
        func waste(_ rows: Int) -> Int { (columns - rows * width % columns) % columns }
        return (max(1, most / 2)...most).reversed().min { waste($0) < waste($1) }
    }

    /// Whether an int8 layer takes the direct path (`ConvolutionPlan.Algorithm.int8Direct`), and how its threads
    /// share it; nil for im2col + GEMM. Direct: a 3×3 padding-1 layer of stride 1 or 2 whose input channels are a
    /// multiple of 4 (no zero lanes in the quads), or 3 at stride 2 (an RGB input layer: a quarter of the products
    /// are zeros, but im2col gathers a stride-2 map byte by byte; yolov4-tiny's layer 0 took 1.45 ms, direct 0.82,
    /// while at stride 1 im2col copies rows and yolov3-tiny's layer 0 took 2.4 ms, direct 2.6: single-thread
    /// minimums on a loaded Zen 4), on a kernel that has the path. It reads the input in place (once packed), where
    /// im2col writes and the GEMM packs 9 bytes per output position and channel, and its padded grid (the output's
    /// `width + 1` positions a row) needs as many 64-column blocks as im2col's map within 2 % on yolov4-tiny's and
    /// yolov3-tiny's maps (11 on 26×26, 3 on 13×13, 44 against 43 on 52×52, 171 against 169 on 104×104). Threads
    /// split whichever of the blocks and the filters' panels leaves the busiest worker the smaller excess over an
    /// even share, the blocks on a tie (each worker then reads only its part of the input): at 2 threads 26×26's
    /// 11 blocks give one worker 6 (9 % over 5.5), 256 filters' 43 panels 22 (2 %).
    static func int8DirectSplit(_ layer: Layer, kernel: Int8KernelFamily, threads: Int) -> ConvolutionPlan.DirectSplit? {
        let channels = layer.input.channels
        guard layer.size == 3, layer.padding == 1, layer.stride == 1 || layer.stride == 2,
              channels % 4 == 0 || channels == 3 && layer.stride == 2, kernel.kernel.directSweep != nil else { return nil }
        let columns = kernel.kernel.tileColumns
        let blocks = (layer.output.height * (layer.output.width + 1) + columns - 1) / columns
        let panels = (layer.filters + kernel.kernel.tileRows - 1) / kernel.kernel.tileRows
        // The busiest worker's parts over an even share (parts / threads), blocks against panels, cross-multiplied.
        func busiest(_ parts: Int) -> Int { (parts + threads - 1) / threads }
        return busiest(blocks) * panels <= busiest(panels) * blocks ? .columns : .filters
    }

    /// The tile of exact Winograd an int8 layer takes (`ConvolutionPlan.Algorithm.int8Winograd`), nil for none: a 3×3
    /// stride-1 padding-1 layer on a kernel without the direct path that stores s32 sums (AVX2's), whose sums fit:
    /// F(2×2, 3×3)'s transforms multiply each sum by 4, so `4 · 9 · 255 · 128 · channels` must stay below 2³¹ (up to
    /// 1,827 channels; the products in between may wrap, the output transform's result is exact). It does 16 products
    /// per 2×2 outputs and channel where im2col + GEMM does 36: on AVX2 the widened products run at the same rate either
    /// way, so the layer takes about half the time (docs/QUANTIZATION.md). F(4×4, 3×3) (kernels with its transforms)
    /// does 36 per 4×4 outputs: `.auto` takes it for layers whose tiles, in blocks of 16, need fewer products' columns
    /// than F(2×2)'s (36 per block against 16: from 13×13 maps on, not at 10×10), whatever their channels (measured
    /// faster from 16 channels on, 104×104 to 20×20), `winograd4` always, `winograd2` never;
    /// the layer runs F(2×2) anyway where its weights could overflow F(4×4)'s sums (`Int8WinogradGeometry.fitsTile4`).
    /// Any activation: the output transforms and their epilogue are the kernel's (`Int8Kernel.winogradOutput`).
    static func int8WinogradTile(_ layer: Layer, algorithm: ConvolutionAlgorithm = .auto, kernel: Int8KernelFamily) -> Int? {
        guard layer.size == 3 && layer.stride == 1 && layer.padding == 1 && kernel.kernel.storesSums && kernel.kernel.directSweep == nil
            && layer.input.channels <= Int8Convolution.winogradMaximumChannels else { return nil }
        guard kernel.kernel.winograd4Output != nil, algorithm != .winograd2 else { return 2 }
        if algorithm == .winograd4 { return 4 }
        func blocks(_ m: Int) -> Int {
            ((layer.output.height + m - 1) / m * ((layer.output.width + m - 1) / m) + 15) / 16
        }
        return blocks(4) * 36 < blocks(2) * 16 ? 4 : 2
    }

    /// Filters a LUT layer expands and multiplies together: whole GEMM panels, at most 1 MB of floats.
    static func lutBlockRows(_ layer: Layer, family: KernelFamily, blockFloats: Int = LUTConvolution.blockFloats) -> Int {
        let alignment = family.hasOwnKernel ? family.tileRows : 1
        return min(layer.filters, max(alignment, blockFloats / layer.patchLength / alignment * alignment))
    }

    // MARK: - Winograd variant and blocking

    /// Floats of V and M a block may hold to stay in a core's L2 (768 KB), and a large block (in L3, 3.25 MB).
    static let l2BlockFloats = 196_608
    static let l3BlockFloats = 851_968
    /// The least share of the GEMM's column blocks small (L2) blocks must fill to be chosen: one tile row of
    /// a 26- or 13-tile-wide map fills 81 % of its 16-column blocks, and the larger L3 blocks (several rows,
    /// ≥ 95 % filled) are the faster there.
    static let smallBlockUse = 0.9
    /// The narrowest map (in tiles) the row-vectorized transforms take: below, most lanes would idle.
    static let rowTilesMinimum = 12
    /// The most tiles a map may have for the transposed products.
    static let transposedTilesMaximum = 256

    /// Tiles the padded tile count and the blocks are multiples of: the GEMM's column block with the own
    /// kernel, a SIMD group of the transforms otherwise.
    static func tileAlignment(_ family: KernelFamily) -> Int {
        family.hasOwnKernel ? max(family.tileColumns, WinogradPlan.lanes) : WinogradPlan.lanes
    }

    /// The variant and blocking of F(m×m) for `layer`:
    /// - rows of tiles, with the family's row transforms, on maps at least `rowTilesMinimum`
    ///   tiles wide; blocks of whole tile rows: small ones (in L2) dealt out whole to the workers when they
    ///   fill the GEMM's columns well and are many, else large ones (in L3) one after another;
    /// - transposed products on small maps (at most `transposedTilesMaximum` tiles) with a 6-row kernel;
    /// - 8-lane tiles otherwise, blocks of about 768 KB of V and M (at least 64 tiles), dealt out.
    static func winogradChoice(_ layer: Layer, m: Int, threads: Int, family: KernelFamily) -> WinogradChoice {
        let (height, width) = (layer.input.height, layer.input.width)
        let tilesY = (height + m - 1) / m, tilesX = (width + m - 1) / m, tiles = tilesY * tilesX
        let alignment = tileAlignment(family)
        let paddedTiles = (tiles + alignment - 1) / alignment * alignment
        let alpha2 = (m + 2) * (m + 2)
        let perTile = alpha2 * (layer.input.channels + layer.filters)
        let hasTransforms = family.winograd != nil
        if family.has(.winogradRows) && hasTransforms && tilesX >= rowTilesMinimum {
            let used = { (rows: Int) -> Double in
                Double(rows * tilesX) / Double((rows * tilesX + alignment - 1) / alignment * alignment)
            }
            // As many rows as fit `floats` of V and M, then fewer if that wastes less of the last column block.
            let best = { (floats: Int) -> Int in
                let most = min(tilesY, max(1, floats / (perTile * tilesX)))
                return (1...most).reversed().max { used($0) < used($1) - 0.02 } ?? most
            }
            let small = best(l2BlockFloats)
            let smallBlocks = (tilesY + small - 1) / small
            let deals = used(small) >= smallBlockUse && small * perTile * tilesX <= l2BlockFloats
                && smallBlocks >= 4 * max(1, threads)
            let rows = deals ? small : best(l3BlockFloats)
            return WinogradChoice(m: m, variant: .rows, blockRows: rows,
                                  blockTiles: (rows * tilesX + alignment - 1) / alignment * alignment, dealsBlocks: deals)
        }
        if family.has(.winogradTransposed) && hasTransforms && family.tileRows == 6 && tiles <= transposedTilesMaximum {
            return WinogradChoice(m: m, variant: .transposed, blockRows: tilesY, blockTiles: tiles, dealsBlocks: false)
        }
        let block = max(64, (l2BlockFloats / perTile) / alignment * alignment)
        return WinogradChoice(m: m, variant: .tiles8, blockRows: tilesY, blockTiles: min(block, paddedTiles), dealsBlocks: true)
    }

    // MARK: - Fusion

    /// Whether the max-pool after a convolution computes it (`ConvolutionMaxPool`): a 3×3 stride-1 padding-1
    /// convolution with a piecewise-linear activation and fewer than 32 input channels on an even-sized map,
    /// pooled 2×2 stride 2, with a family that has the direct path. (With 32 channels or more, Winograd and
    /// a separate max-pool are the faster.)
    static func fusesWithMaxPool(_ c: Layer, activation: Activation, pool: MaxPoolSpec, family: KernelFamily) -> Bool {
        family.has(.directConvolutionMaxPool) && pool.size == 2 && pool.stride == 2 && pool.padding / 2 == 0
            && c.isWinogradShape && activation.isPiecewiseLinear
            && c.output.height % 2 == 0 && c.output.width % 2 == 0 && c.input.channels < 32
    }

    /// Output rows per band of the direct convolution: the largest even count (at most the map's height) whose
    /// padded input rows and output rows fit `DirectConvolution.bandBytes`.
    static func directBandRows(_ c: Layer) -> Int {
        let paddedWidth = c.input.width + 2
        func bytes(_ rows: Int) -> Int {
            (c.input.channels * (rows + 2) * paddedWidth + c.filters * rows * paddedWidth) * MemoryLayout<Float>.stride
        }
        var rows = 2
        while rows + 2 <= c.input.height && bytes(rows + 2) <= DirectConvolution.bandBytes { rows += 2 }
        return rows
    }

    /// Whether the convolution after `first` computes it band by band (`ConvolutionPair`): both on the banded
    /// GEMM path in float32, and a band of the second reads at most a quarter of the first's output rows; never on
    /// OpenBLAS (the first's rows would be computed in products whose shapes depend on the split, and OpenBLAS's bits
    /// depend on the shape: `GEMM.multiplyWithBLAS`).
    static func fusesIntoNext(_ first: ConvolutionPlan, _ second: ConvolutionPlan, secondLayer: Layer, firstOutputHeight: Int,
                              family: KernelFamily = .active) -> Bool {
        guard family.hasOwnKernel, case .gemmBands = first.algorithm, case .gemmBands(let rows) = second.algorithm,
              first.weights == .float, second.weights == .float, first.precision == .fp32, second.precision == .fp32
        else { return false }
        return 4 * ((rows - 1) * secondLayer.stride + secondLayer.size) <= firstOutputHeight
    }

    // MARK: - Threads per layer

    /// Parts each of a Winograd layer's `products` matrix products (one per ξ) is cut into along the filters,
    /// so that `threads` threads get even shares: none while there are four products or more per thread (one
    /// more or less is then at most a quarter of a share), else as many as bring the units to four per thread,
    /// each at least `alignment` filters (a GEMM panel). F(4×4)'s 36 products on 16 threads: 2 parts, 72 units,
    /// at most 5 per thread where whole products gave 3 against 2.25 on average.
    public static func productParts(products: Int, filters: Int, alignment: Int, threads: Int) -> Int {
        guard threads > 1, products < 4 * threads else { return 1 }
        let wanted = (4 * threads + products - 1) / products
        return max(1, min(wanted, filters / max(1, alignment)))
    }

    /// Floating-point operations a layer must have per thread it is given (2 M: about 20–40 µs of one core's
    /// work, where a parallel region costs a few microseconds), unless it writes `outputsPerThread` values per
    /// thread (128 KB: max-pools, upsamples and routes move memory rather than compute).
    public static let flopsPerThread = 2e6
    public static let outputsPerThread = 32_768

    /// The most threads worth giving a layer of `flops` operations writing `outputs` values.
    static func threadCap(flops: Double, outputs: Int, threads: Int) -> Int {
        min(threads, max(1, Int(flops / flopsPerThread), outputs / outputsPerThread))
    }
}
