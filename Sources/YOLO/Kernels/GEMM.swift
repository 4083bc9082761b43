import YOLOKernels

/// The engine's matrix product for convolutions: `C = A · B`, then each row's bias and activation.
///
/// `A` (weights, `PackedMatrix`) is packed once at network build; `B` (input columns, Winograd
/// tiles) and `C` (output) are row-major with any row stride. With a kernel family that has its own
/// micro-kernel (`KernelFamily.active`, e.g. AVX2's 6 × 16 or AVX-512's 6 × 64 tiles) the product runs
/// it (`GEMM+Kernel.swift`, bias and activation applied in registers); the portable family calls
/// OpenBLAS's `sgemm` on the same row-major data.
@_spi(Engine) public enum GEMM {
    /// The active family's micro-kernel, nil when products go to OpenBLAS.
    static var tile: TileKernel? { KernelFamily.active.tile }

    /// True when the active family multiplies with its own micro-kernel (weights packed in panels).
    public static var usesOwnKernel: Bool { KernelFamily.active.hasOwnKernel }

    /// What runs the products, for benchmark headers.
    public static var kernelDescription: String { KernelFamily.active.description }

    /// Rows of `C` one kernel call computes; row ranges given to `multiply` start on a multiple.
    public static var panelRows: Int { KernelFamily.active.tileRows }
    /// Columns of `C` one kernel call computes.
    public static var panelColumns: Int { KernelFamily.active.tileColumns }

    /// Floats of B a sweep of the kernel may read and still find in the core's L2 on the next
    /// sweep (768 KB: most of a 1 MB L2, the rest for A's and C's lines).
    static let l2Floats = 196_608

    /// Row alignment work splits must keep: `panelRows` with the own kernel, else OpenBLAS's fixed row
    /// block (`multiplyWithBLAS`: the same bits however the rows are split).
    public static var rowAlignment: Int { usesOwnKernel ? panelRows : blasRowBlock }
    /// Column alignment splits of C's columns keep: `panelColumns` with the own kernel, else OpenBLAS's fixed
    /// column block (`multiplyWithBLAS`).
    public static var columnAlignment: Int { usesOwnKernel ? panelColumns : blasColumnBlock }

    /// Floats of scratch one `multiply` call needs (per worker), whatever the product's shape: an edge
    /// tile of C, then B's packed blocks (at most `l2Floats`); none for BLAS.
    public static var scratchCount: Int { usesOwnKernel ? panelRows * panelColumns + l2Floats : 0 }

    /// `C[rows, 0..<n] = A[rows] · B`, then `activation(C[r, j] + bias[r])` when `bias` is given.
    ///
    /// - Parameters:
    ///   - a: the packed weights; `matrix` picks one of a batch.
    ///   - rows: rows of A and C to compute; starts on a multiple of `rowAlignment`.
    ///   - b: `a.columns × n`, row-major, rows `ldb` floats apart.
    ///   - c: row 0 of C (row `r` at `c + r·ldc`).
    ///   - padded: the caller guarantees B's and C's rows can be read and written up to `n` rounded up
    ///     to `panelColumns` (the extra columns of C get garbage); saves copying edge blocks.
    ///   - scratch: `scratchCount` floats of this worker's own.
    public static func multiply(_ a: PackedMatrix, matrix: Int = 0, rows: Range<Int>, b: UnsafePointer<Float>, ldb: Int,
                                n: Int, c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>? = nil,
                                activation: Activation = .linear, padded: Bool = false,
                                scratch: UnsafeMutablePointer<Float>?) {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= a.rows, "GEMM: rows \(rows) of \(a.rows)")
        guard !rows.isEmpty, n > 0 else { return }
        let k = a.columns
        if usesOwnKernel { precondition(rows.lowerBound % panelRows == 0, "GEMM: rows must start on a panel") }
        // Rows start on a panel, so both layouts put row `r`'s panel (or row) at `r · k`.
        multiply(packed: a.pointer(matrix: matrix) + rows.lowerBound * k, m: rows.count, k: k, b: b, ldb: ldb, n: n,
                 c: c + rows.lowerBound * ldc, ldc: ldc, bias: bias.map { $0 + rows.lowerBound },
                 activation: activation, padded: padded, scratch: scratch)
    }

    /// `multiply` for rows `0..<m` of an A laid out as `PackedMatrix.Layout(rows: m, columns: k)` puts
    /// it (e.g. weights expanded from LUT codes into scratch just before use).
    public static func multiply(packed a: UnsafePointer<Float>, m: Int, k: Int, b: UnsafePointer<Float>, ldb: Int,
                                n: Int, c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>? = nil,
                                activation: Activation = .linear, padded: Bool = false,
                                scratch: UnsafeMutablePointer<Float>?) {
        precondition(bias != nil || activation == .linear, "GEMM: an activation needs a bias")
        guard m > 0, n > 0 else { return }
        guard let tile else {
            multiplyWithBLAS(a, m: m, k: k, b: b, ldb: ldb, n: n, c: c, ldc: ldc)
            if let bias {
                for r in 0..<m { activation.applyBiased(c + r * ldc, count: n, bias: bias[r]) }
            }
            return
        }
        let operands = Operands(tile: tile, k: k, b: b, ldb: ldb, n: n, c: c, ldc: ldc, bias: bias,
                                activation: activation, padded: padded, scratch: scratch)
        let panelRows = operands.panelRows
        // Keep the larger operand streaming once: walk A's panels outermost when A is the larger.
        operands.run(a, panels: 0 ..< (m + panelRows - 1) / panelRows, rowEnd: m, panelsOuter: m * k >= k * n)
    }

    /// Rows and columns of C each OpenBLAS `sgemm` call computes (fewer only at C's own edges).
    ///
    /// OpenBLAS picks its code path by the call's shape (a direct kernel below about 7 M multiply-adds, a
    /// small-matrix kernel below 1 M, else its blocked kernels) and computes a call's last, partial block
    /// of columns with narrower kernels; the paths round differently (one value of C: 0x4118db93 against
    /// 0x4118db95, OpenBLAS 0.3.21, Cooperlake core). So a value's bits would depend on the part of C it was
    /// computed with, hence on the thread count. The portable family therefore computes C in fixed blocks
    /// anchored at its first row and column: callers split C along `rowAlignment` and `columnAlignment`,
    /// which are these, and every value comes from the same call, whatever the split.
    static let blasRowBlock = 64
    static let blasColumnBlock = 256

    /// `C = A · B` by OpenBLAS in blocks of `blasRowBlock × blasColumnBlock`, anchored at row and column 0 of
    /// this call (the callers' parts start on such a block).
    static func multiplyWithBLAS(_ a: UnsafePointer<Float>, m: Int, k: Int, b: UnsafePointer<Float>, ldb: Int, n: Int,
                                 c: UnsafeMutablePointer<Float>, ldc: Int) {
        for row in Swift.stride(from: 0, to: m, by: blasRowBlock) {
            let rows = Swift.min(blasRowBlock, m - row)
            for column in Swift.stride(from: 0, to: n, by: blasColumnBlock) {
                BLAS.sgemm(m: rows, n: Swift.min(blasColumnBlock, n - column), k: k, a: a + row * k, lda: k,
                           b: b + column, ldb: ldb, c: c + row * ldc + column, ldc: ldc)
            }
        }
    }
}
