#if YOLO_AVX512
/// The own GEMM micro-kernel and its driver, compiled only with `-D YOLO_AVX512` (the build must also
/// target a CPU with AVX-512, e.g. `-target-cpu znver4`: without it the 16-lane fused multiply-adds
/// would become library calls).
///
/// One kernel call computes a 6 × 64 tile of C in 24 registers of 16 floats: per step of the inner
/// dimension it loads 64 floats of one row of B, broadcasts the 6 values of one column of A's panel
/// and issues 24 fused multiply-adds. Nothing is accumulated into C: the tile is stored once, with
/// bias and activation applied in registers.

// MARK: - Driver

extension GEMM {
    typealias Vector = SIMD16<Float>

    /// One product's operands, shared by the loops over A's panels and B's column blocks.
    struct Operands {
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
        /// Floats from one 64-column block of B to the next when B is read in place: 64 for a
        /// row-major B, `k · 64` for B stored block by block.
        var blockStride = GEMM.panelColumns

        /// Runs the kernel over `panels` × all column blocks of C. `weightsOf(panel, ks)` gives that
        /// panel's A for the inner indices `ks` (`ks.count × 6` floats). Rows at or past `rowEnd` are not
        /// stored. B is copied block by block into contiguous, aligned `k × 64` runs unless the caller's
        /// B already is one (`padded` with 64-float-aligned rows). The inner dimension is cut into
        /// chunks when the B that one sweep reads would not stay in L2: each chunk then adds to C, and
        /// the last applies bias and activation.
        @inline(__always)
        func run(panels: Range<Int>, rowEnd: Int, panelsOuter wanted: Bool,
                 weightsOf: (_ panel: Int, _ ks: Range<Int>) -> UnsafePointer<Float>) {
            let blocks = (n + panelColumns - 1) / panelColumns
            let direct = padded && ldb % 16 == 0
            // Panels outermost needs a chunk of every block at once: only when that fits.
            let panelsOuter = wanted && (direct || 16 * blocks * panelColumns <= GEMM.l2Floats)
            let sweep = panelColumns * (panelsOuter ? blocks : 1)
            let chunk = k * sweep <= GEMM.l2Floats ? k : max(16, GEMM.l2Floats / 2 / sweep / 16 * 16)
            let tile = scratch
            let packedB = scratch.map { $0 + panelRows * panelColumns }
            let finalMode = GEMM.finishMode(hasBias: bias != nil, activation: activation)
            /// Copies block `block` of B's rows `ks` to `target` (`ks.count × 64`, zero-padded).
            func pack(_ block: Int, _ ks: Range<Int>, into target: UnsafeMutablePointer<Float>) {
                let column = block * panelColumns
                let width = min(panelColumns, n - column)
                var row = target
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
                let mode = last ? finalMode : 0
                let biases = bias.map { $0 + first }
                let column = block * panelColumns
                let a = weightsOf(panel, ks)
                let accumulate = ks.lowerBound > 0
                let width = min(panelColumns, n - column)
                if padded || width == panelColumns {
                    let target = c + first * ldc + column
                    GEMM.kernel6x64(ks.count, a, bBlock.0, bBlock.1, target, ldc, valid, accumulate, biases, mode)
                    if last && activation == .logistic {
                        for r in 0..<valid { Activation.logistic.applyBiased(target + r * ldc, count: width, bias: 0) }
                    }
                } else {
                    let tile = tile!
                    if accumulate {
                        for r in 0..<valid { (tile + r * panelColumns).update(from: c + (first + r) * ldc + column, count: width) }
                    }
                    GEMM.kernel6x64(ks.count, a, bBlock.0, bBlock.1, tile, panelColumns, valid, accumulate, biases, mode)
                    for r in 0..<valid {
                        let target = c + (first + r) * ldc + column
                        target.update(from: tile + r * panelColumns, count: width)
                        if last && activation == .logistic { Activation.logistic.applyBiased(target, count: width, bias: 0) }
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
                        for panel in panels { one(panel, block, ks, bBlock) }
                    }
                }
            }
        }
    }

    /// `C[0..<m, 0..<n] = A · B` with A already in panels (`[panel][k][6]`, `⌈m/6⌉` panels; rows past
    /// `m` may hold anything) and B stored block by block (`[block][k][64]`, `⌈n/64⌉` blocks, columns
    /// past `n` zero or anything); C's rows are written up to `n` rounded up to 64 columns, rows past
    /// `m` are not written.
    static func multiplyPanels(_ a: UnsafePointer<Float>, m: Int, k: Int, blocks b: UnsafePointer<Float>, n: Int,
                               c: UnsafeMutablePointer<Float>, ldc: Int) {
        guard m > 0, n > 0 else { return }
        let operands = Operands(k: k, b: b, ldb: panelColumns, n: n, c: c, ldc: ldc, bias: nil, activation: .linear,
                                padded: true, scratch: nil, blockStride: k * panelColumns)
        let panels = 0 ..< (m + panelRows - 1) / panelRows
        operands.run(panels: panels, rowEnd: m, panelsOuter: m * k >= k * n) { panel, ks in
            a + panel * k * panelRows + ks.lowerBound * panelRows
        }
    }

    // MARK: - Kernel

    /// The kernel's `mode` for a product's last store (see `finish`): 0 without a bias; with one, 2 for
    /// leaky, 3 for relu, 1 otherwise (logistic is applied by the caller after the store).
    static func finishMode(hasBias: Bool, activation: Activation) -> Int {
        guard hasBias else { return 0 }
        switch activation {
        case .leaky: return 2
        case .relu: return 3
        case .linear, .logistic: return 1
        }
    }

    /// Bias and activation of one stored vector: mode 0 none, 1 bias, 2 bias + leaky, 3 bias + relu.
    @inline(__always)
    static func finish(_ v: Vector, _ bias: Float, _ mode: Int) -> Vector {
        if mode == 0 { return v }
        let x = v + Vector(repeating: bias)
        switch mode {
        case 2: return x.replacing(with: x * 0.1, where: .!(x .> 0))   // darknet: x > 0 ? x : 0.1·x
        case 3: return x.replacing(with: 0, where: .!(x .> 0))
        default: return x
        }
    }

    /// `C[0..<rows, 0..<64] = A · B (+ C when accumulating) (+ bias, activation per `mode`)`: A is one
    /// panel (`k × 6`, column-major), B `k × 64` with rows `ldb` floats apart, C rows `ldc` floats apart.
    @inline(never)
    static func kernel6x64(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                           _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                           _ bias: UnsafePointer<Float>?, _ mode: Int) {
        var rowsOfB = StridedRows(row: UnsafeRawPointer(b), step: ldb * MemoryLayout<Float>.stride)
        tile6x64(k, a, &rowsOfB, c, ldc, rows, accumulate, bias, mode)
    }

    /// `kernel6x64` whose B row `i` (64 floats, any alignment) starts at `b + offsets[i]`: a direct
    /// convolution reads its input taps in place this way (`DirectConvolution`), with no im2col copy.
    @inline(never)
    static func kernel6x64(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, offsets: UnsafePointer<Int>,
                           _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int,
                           _ bias: UnsafePointer<Float>?, _ mode: Int) {
        var rowsOfB = OffsetRows(base: b, offsets: offsets)
        tile6x64(k, a, &rowsOfB, c, ldc, rows, false, bias, mode)
    }

    /// Where the kernel finds B's successive rows.
    protocol RowsOfB {
        /// The next row's first float (64 are read).
        mutating func next() -> UnsafeRawPointer
    }

    /// Rows a fixed number of bytes apart.
    struct StridedRows: RowsOfB {
        var row: UnsafeRawPointer
        let step: Int
        @inline(__always) mutating func next() -> UnsafeRawPointer {
            defer { row += step }
            return row
        }
    }

    /// Rows at listed offsets (in floats) from one base.
    struct OffsetRows: RowsOfB {
        let base: UnsafePointer<Float>
        var offsets: UnsafePointer<Int>
        @inline(__always) mutating func next() -> UnsafeRawPointer {
            defer { offsets += 1 }
            return UnsafeRawPointer(base + offsets.pointee)
        }
    }

    /// The micro-kernel's body, specialized for each way of finding B's rows.
    @inline(__always)
    static func tile6x64<Rows: RowsOfB>(_ k: Int, _ a: UnsafePointer<Float>, _ rowsOfB: inout Rows,
                                       _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                                       _ bias: UnsafePointer<Float>?, _ mode: Int) {
        @inline(__always)
        func initial(_ r: Int, _ j: Int) -> Vector {
            guard accumulate && r < rows else { return Vector() }
            return UnsafeRawPointer(c + r * ldc + j * 16).loadUnaligned(as: Vector.self)
        }
        var c00 = initial(0, 0), c01 = initial(0, 1), c02 = initial(0, 2), c03 = initial(0, 3)
        var c10 = initial(1, 0), c11 = initial(1, 1), c12 = initial(1, 2), c13 = initial(1, 3)
        var c20 = initial(2, 0), c21 = initial(2, 1), c22 = initial(2, 2), c23 = initial(2, 3)
        var c30 = initial(3, 0), c31 = initial(3, 1), c32 = initial(3, 2), c33 = initial(3, 3)
        var c40 = initial(4, 0), c41 = initial(4, 1), c42 = initial(4, 2), c43 = initial(4, 3)
        var c50 = initial(5, 0), c51 = initial(5, 1), c52 = initial(5, 2), c53 = initial(5, 3)
        var ap = a
        for _ in 0..<k {
            let bp = rowsOfB.next()
            let b0 = bp.loadUnaligned(as: Vector.self)
            let b1 = bp.loadUnaligned(fromByteOffset: 64, as: Vector.self)
            let b2 = bp.loadUnaligned(fromByteOffset: 128, as: Vector.self)
            let b3 = bp.loadUnaligned(fromByteOffset: 192, as: Vector.self)
            var s = Vector(repeating: ap[0])
            c00.addProduct(s, b0); c01.addProduct(s, b1); c02.addProduct(s, b2); c03.addProduct(s, b3)
            s = Vector(repeating: ap[1])
            c10.addProduct(s, b0); c11.addProduct(s, b1); c12.addProduct(s, b2); c13.addProduct(s, b3)
            s = Vector(repeating: ap[2])
            c20.addProduct(s, b0); c21.addProduct(s, b1); c22.addProduct(s, b2); c23.addProduct(s, b3)
            s = Vector(repeating: ap[3])
            c30.addProduct(s, b0); c31.addProduct(s, b1); c32.addProduct(s, b2); c33.addProduct(s, b3)
            s = Vector(repeating: ap[4])
            c40.addProduct(s, b0); c41.addProduct(s, b1); c42.addProduct(s, b2); c43.addProduct(s, b3)
            s = Vector(repeating: ap[5])
            c50.addProduct(s, b0); c51.addProduct(s, b1); c52.addProduct(s, b2); c53.addProduct(s, b3)
            ap += panelRows
        }
        @inline(__always)
        func store(_ r: Int, _ v0: Vector, _ v1: Vector, _ v2: Vector, _ v3: Vector) {
            let beta = bias.map { $0[r] } ?? 0
            let p = UnsafeMutableRawPointer(c + r * ldc)
            p.storeBytes(of: finish(v0, beta, mode), as: Vector.self)
            p.storeBytes(of: finish(v1, beta, mode), toByteOffset: 64, as: Vector.self)
            p.storeBytes(of: finish(v2, beta, mode), toByteOffset: 128, as: Vector.self)
            p.storeBytes(of: finish(v3, beta, mode), toByteOffset: 192, as: Vector.self)
        }
        store(0, c00, c01, c02, c03)
        if rows > 1 { store(1, c10, c11, c12, c13) }
        if rows > 2 { store(2, c20, c21, c22, c23) }
        if rows > 3 { store(3, c30, c31, c32, c33) }
        if rows > 4 { store(4, c40, c41, c42, c43) }
        if rows > 5 { store(5, c50, c51, c52, c53) }
    }
}
#endif
