import YOLOKernels

/// Int8 weights packed for one int8 kernel (`Int8Kernel`'s A layout: panels of `tileRows` rows,
/// `[K/group][tileRows][group]` elements each, zero-padded), built once with the layer.
@_spi(Engine) public struct Int8PackedMatrix: Sendable {
    public let rows: Int
    /// K, the unpadded row length.
    public let columns: Int
    public let kernel: Int8KernelFamily
    /// Bytes of one panel.
    public let panelBytes: Int
    let storage: SharedBuffer<UInt8>

    /// Packs `values` (`rows × columns`, row-major: s8 weights, or s16 ones for a kernel of 2-byte elements) for `kernel`.
    public init<Value: FixedWidthInteger & SignedInteger>(_ values: UnsafeBufferPointer<Value>, rows: Int, columns: Int,
                                                          kernel: Int8KernelFamily) {
        precondition(Value.bitWidth <= 8 * kernel.kernel.elementBytes, "Int8PackedMatrix: \(Value.self) values for \(kernel.name)")
        precondition(values.count == rows * columns && rows > 0 && columns > 0, "Int8PackedMatrix: \(values.count) values for \(rows)x\(columns)")
        let k = kernel.kernel
        let panels = (rows + k.tileRows - 1) / k.tileRows
        let panelBytes = k.panelBytes(columns)
        (self.rows, self.columns, self.kernel, self.panelBytes) = (rows, columns, kernel, panelBytes)
        storage = SharedBuffer<UInt8>(count: panels * panelBytes) { out in
            let raw = UnsafeMutableRawPointer(out.baseAddress!)
            // Row r's group of k values g (k = g·group + q) at element panel·panelElements + g·stride + inPanel·group + q.
            let (group, elementBytes) = (k.group, k.elementBytes)
            let (panelElements, stride) = (panelBytes / elementBytes, k.tileRows * group)
            let source = values.baseAddress!
            for r in 0..<rows {
                let (panel, inPanel) = r.quotientAndRemainder(dividingBy: k.tileRows)
                let row = source + r * columns
                var element = panel * panelElements + inPanel * group
                for start in Swift.stride(from: 0, to: columns, by: group) {
                    for q in 0..<min(group, columns &- start) {
                        if elementBytes == 1 {
                            raw.storeBytes(of: Int8(truncatingIfNeeded: row[start &+ q]), toByteOffset: element &+ q, as: Int8.self)
                        } else {
                            raw.storeBytes(of: Int16(truncatingIfNeeded: row[start &+ q]), toByteOffset: 2 &* (element &+ q), as: Int16.self)
                        }
                    }
                    element &+= stride
                }
            }
        }
    }

    /// The first byte of panel `panel`.
    func panel(_ panel: Int) -> UnsafeRawPointer { UnsafeRawPointer(storage.pointer) + panel * panelBytes }

    /// Bytes held.
    public var byteCount: Int { storage.count }
}

/// The driver of the int8 kernels: `C[rows, 0..<n] = epilogue(A[rows] · B)` with A packed
/// (`Int8PackedMatrix`), B u8 row-major (`K × n`, rows `ldb` bytes apart), C u8 or float as the epilogue says.
/// B is packed block by block (`Int8Kernel.packB`) into the worker's scratch, as many blocks as fit in its
/// share of L2 at a time; each block's whole column of tiles is one kernel call when A stays in L2 (it then
/// streams once per chunk of blocks), else each panel of A runs against every packed block before the next.
/// Sums are exact and every element goes through the same epilogue, so the result does not depend on the
/// blocking, the thread split or the kernel.
@_spi(Engine) public enum Int8GEMM {
    /// Bytes of packed B one call holds at once (384 KB: with A's panels, C's tiles and the im2col rows, a
    /// core's L2).
    static let packBudget = 393_216
    /// Bytes of A's panels that stay in L2 from one block of B to the next.
    static let residentWeightBytes = 262_144

    /// Blocks of B packed at once for a product with inner dimension `k`.
    static func blocksPerChunk(k: Int, kernel: Int8Kernel) -> Int { max(1, packBudget / kernel.blockBytes(k)) }

    /// Scratch bytes one `multiply` call needs (per worker): the packed blocks and an edge tile.
    public static func scratchBytes(k: Int, kernel: Int8Kernel) -> Int {
        let blocks = blocksPerChunk(k: k, kernel: kernel) * kernel.blockBytes(k)
        return (blocks + kernel.tileRows * kernel.tileColumns * 4 + 63) / 64 * 64
    }

    /// Runs the product for rows `rows` (starting on a panel) and all `n` columns; `epilogue` describes row 0 of
    /// A; C's row `r` starts at `c + r · ldc` elements. `scratch`: `scratchBytes` bytes, 64-byte aligned.
    public static func multiply(_ a: Int8PackedMatrix, rows: Range<Int>, b: UnsafePointer<UInt8>, ldb: Int, n: Int,
                                c: UnsafeMutableRawPointer, ldc: Int, epilogue: Int8Epilogue,
                                scratch: UnsafeMutableRawPointer) {
        let kernel = a.kernel.kernel
        let (tileRows, tileColumns) = (kernel.tileRows, kernel.tileColumns)
        precondition(rows.lowerBound % tileRows == 0 && rows.upperBound <= a.rows, "Int8GEMM: rows \(rows) of \(a.rows)")
        guard !rows.isEmpty, n > 0 else { return }
        let k = a.columns
        let steps = Int8Kernel.paddedK(k) / kernel.group
        let blockBytes = kernel.blockBytes(k)
        let blocks = (n + tileColumns - 1) / tileColumns
        let perChunk = blocksPerChunk(k: k, kernel: kernel)
        let panels = rows.lowerBound / tileRows ..< (rows.upperBound + tileRows - 1) / tileRows
        let edge = scratch + perChunk * blockBytes
        let outputBytes = epilogue.outputBytes
        let weightsResident = panels.count * a.panelBytes <= residentWeightBytes

        /// Panels `first ..< end` against packed block `block`.
        func run(_ first: Int, _ end: Int, block: Int, packed: UnsafeRawPointer) {
            let rowStart = first * tileRows
            let rowEnd = min(rows.upperBound, end * tileRows)
            let column = block * tileColumns
            let width = min(tileColumns, n - column)
            var e = epilogue.rows(from: rowStart)
            if width == tileColumns {
                withUnsafePointer(to: &e) {
                    kernel.sweep(steps, a.panel(first), a.panelBytes, packed, c + (rowStart * ldc + column) * outputBytes,
                                 ldc, rowEnd - rowStart, UnsafeRawPointer($0))
                }
                return
            }
            // A partial block: each panel's tile into the edge tile, then its valid columns into C.
            for panel in first..<end {
                let start = panel * tileRows
                let valid = min(tileRows, rowEnd - start)
                var e = epilogue.rows(from: start)
                withUnsafePointer(to: &e) {
                    kernel.sweep(steps, a.panel(panel), a.panelBytes, packed, edge, tileColumns, valid, UnsafeRawPointer($0))
                }
                for r in 0..<valid {
                    (c + ((start + r) * ldc + column) * outputBytes)
                        .copyMemory(from: edge + r * tileColumns * outputBytes, byteCount: width * outputBytes)
                }
            }
        }

        for chunkStart in Swift.stride(from: 0, to: blocks, by: perChunk) {
            let chunk = chunkStart ..< min(blocks, chunkStart + perChunk)
            for block in chunk {
                let column = block * tileColumns
                kernel.packB(k, b + column, ldb, min(tileColumns, n - column), scratch + (block - chunkStart) * blockBytes)
            }
            if weightsResident {
                for block in chunk {
                    run(panels.lowerBound, panels.upperBound, block: block, packed: scratch + (block - chunkStart) * blockBytes)
                }
            } else {
                for panel in panels {
                    for block in chunk { run(panel, panel + 1, block: block, packed: scratch + (block - chunkStart) * blockBytes) }
                }
            }
        }
    }
}

extension Int8GEMM {
    /// The direct product (`Int8Kernel.DirectSweep`): `C[rows, block columns] = epilogue(A · B)` where step `s` of
    /// column `j` reads B's quad at `b + offsets[s] + 4·j` bytes; `blocks` are blocks of `tileColumns` columns, C's row
    /// `r` at `c + r · ldc` elements and every block written whole (C's rows hold `ldc` ≥ the blocks' columns). When
    /// the rows' panels fit `residentWeightBytes` they stay in L2 while each block runs against all of them; else
    /// each panel runs against every block (B, the packed input, then stays in L2).
    static func multiplyDirect(_ a: Int8PackedMatrix, rows: Range<Int>, b: UnsafeRawPointer, offsets: UnsafePointer<Int32>,
                               blocks: Range<Int>, c: UnsafeMutableRawPointer, ldc: Int, epilogue: Int8Epilogue) {
        let kernel = a.kernel.kernel
        guard let sweep = kernel.directSweep else { preconditionFailure("Int8GEMM: \(a.kernel.name) has no direct path") }
        let tileRows = kernel.tileRows
        guard !rows.isEmpty, !blocks.isEmpty else { return }
        precondition(rows.lowerBound % tileRows == 0 && rows.upperBound <= a.rows, "Int8GEMM: rows \(rows) of \(a.rows)")
        let steps = a.columns / kernel.group
        let outputBytes = epilogue.outputBytes
        let panels = rows.lowerBound / tileRows ..< (rows.upperBound + tileRows - 1) / tileRows

        func run(_ first: Int, _ end: Int, block: Int) {
            let rowStart = first * tileRows
            let rowEnd = min(rows.upperBound, end * tileRows)
            let column = block * kernel.tileColumns
            var e = epilogue.rows(from: rowStart)
            withUnsafePointer(to: &e) {
                sweep(steps, a.panel(first), a.panelBytes, b + 4 * column, offsets, c + (rowStart * ldc + column) * outputBytes, ldc,
                      rowEnd - rowStart, UnsafeRawPointer($0))
            }
        }

        if panels.count * a.panelBytes <= residentWeightBytes {
            for block in blocks { run(panels.lowerBound, panels.upperBound, block: block) }
        } else {
            for panel in panels {
                for block in blocks { run(panel, panel + 1, block: block) }
            }
        }
    }
}
