/// A batch of equally sized matrices `A` (`rows × columns` each, e.g. filters × filter length)
/// stored the way `GEMM` reads them, built once when a network is built.
///
/// With a kernel family that has its own micro-kernel (`GEMM.usesOwnKernel`) each matrix is cut into panels of
/// `GEMM.panelRows` rows, stored column by column inside a panel (`[panel][column][row in panel]`),
/// the last panel zero-padded: the kernel then reads one short contiguous run per column. Without it
/// the matrices are plain row-major, as BLAS expects.
@_spi(Engine) public struct PackedMatrix: Sendable {
    /// Matrices in the batch.
    public let count: Int
    public let rows: Int
    public let columns: Int
    /// Floats from one matrix to the next.
    public let matrixStride: Int
    let storage: FloatBuffer

    /// Allocates the batch zero-filled and lets `fill` write it through `index(matrix:row:column:)`.
    public init(count: Int = 1, rows: Int, columns: Int, fill: (UnsafeMutablePointer<Float>, PackedMatrix.Layout) -> Void) {
        precondition(count >= 1 && rows >= 1 && columns >= 1, "PackedMatrix: empty matrix")
        let layout = Layout(rows: rows, columns: columns)
        self.init(count: count, rows: rows, columns: columns, matrixStride: layout.matrixStride,
                  storage: FloatBuffer(count: count * layout.matrixStride) { fill($0.baseAddress!, layout) })
    }

    private init(count: Int, rows: Int, columns: Int, matrixStride: Int, storage: FloatBuffer) {
        self.count = count
        self.rows = rows
        self.columns = columns
        self.matrixStride = matrixStride
        self.storage = storage
    }

    /// One row-major matrix (`rows × columns`, e.g. a convolution's weights): packed into new memory
    /// for the own kernel, used in place (no copy) for BLAS.
    public init(rowMajor buffer: FloatBuffer, rows: Int, columns: Int) {
        precondition(buffer.count == rows * columns, "PackedMatrix: \(buffer.count) floats for \(rows)x\(columns)")
        if GEMM.usesOwnKernel {
            self.init(rows: rows, columns: columns) { target, layout in
                layout.pack(buffer.pointer, rowStride: columns, rows: 0..<rows, into: target)
            }
        } else {
            precondition(rows >= 1 && columns >= 1, "PackedMatrix: empty matrix")
            self.init(count: 1, rows: rows, columns: columns, matrixStride: rows * columns, storage: buffer)
        }
    }

    /// The first float of matrix `matrix`.
    public func pointer(matrix: Int = 0) -> UnsafePointer<Float> {
        precondition(matrix >= 0 && matrix < count, "PackedMatrix: matrix \(matrix) of \(count)")
        return storage.pointer + matrix * matrixStride
    }

    /// Bytes held.
    public var byteCount: Int { storage.count * MemoryLayout<Float>.stride }

    /// Where each element of a matrix lives.
    public struct Layout: Sendable {
        public let rows: Int
        public let columns: Int
        /// Rows per panel: `GEMM.panelRows` with the own kernel, else all rows (row-major).
        let panelRows: Int
        let panels: Int

        public init(rows: Int, columns: Int) {
            self.rows = rows
            self.columns = columns
            self.panelRows = GEMM.usesOwnKernel ? GEMM.panelRows : 1
            self.panels = (rows + panelRows - 1) / panelRows
        }

        /// Floats of one matrix, padding included.
        public var matrixStride: Int { panels * panelRows * columns }

        /// Offset of element (`row`, `column`) of matrix `matrix` from the batch's first float.
        @inline(__always)
        public func index(matrix: Int, row: Int, column: Int) -> Int {
            if panelRows == 1 { return matrix * matrixStride + row * columns + column }
            let (panel, inPanel) = row.quotientAndRemainder(dividingBy: panelRows)
            return matrix * matrixStride + (panel * columns + column) * panelRows + inPanel
        }

        /// Puts one row (`columns` floats) at row `row` of the matrix at `target`.
        @inline(__always)
        public func packRow(_ source: UnsafePointer<Float>, at row: Int, into target: UnsafeMutablePointer<Float>) {
            if panelRows == 1 {
                (target + row * columns).update(from: source, count: columns)
                return
            }
            let (panel, inPanel) = row.quotientAndRemainder(dividingBy: panelRows)
            let base = target + panel * columns * panelRows + inPanel
            for c in 0..<columns { base[c * panelRows] = source[c] }
        }

        /// Packs `rows` of a row-major matrix (rows `rowStride` apart, `source` at row 0) into the
        /// matrix at `target` (matrix 0 of a batch, or a scratch holding just those rows' panels
        /// when `rows` starts at 0).
        func pack(_ source: UnsafePointer<Float>, rowStride: Int, rows range: Range<Int>,
                  into target: UnsafeMutablePointer<Float>) {
            if panelRows == 1 {
                for r in range { (target + r * columns).update(from: source + r * rowStride, count: columns) }
                return
            }
            for r in range {
                let row = source + r * rowStride
                let (panel, inPanel) = r.quotientAndRemainder(dividingBy: panelRows)
                let base = target + panel * columns * panelRows + inPanel
                for c in 0..<columns { base[c * panelRows] = row[c] }
            }
        }
    }
}
