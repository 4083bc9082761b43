import YOLOPrefetch

/// The entry points every ISA kernel family's GEMM micro-kernel provides. They are plain C function
/// pointers taking C-representable arguments: nothing generic crosses from a module compiled for a
/// higher ISA into baseline code (see docs/performance.md, "Kernel families"), and calling one is the
/// only way ISA-specific code runs.
///
/// A tile is `rows × columns` of `C` (the family's `tileRows × tileColumns`, e.g. 6 × 16 for AVX2):
/// `C[0..<rows, 0..<columns] = A · B (+ C when accumulating)`, then, when `bias` is given,
/// `activation(C[r, j] + bias[r])` in registers. `A` is one panel (`k × tileRows` floats, column by
/// column: the `tileRows` values of one column of A are adjacent); `B` is `k` rows of `columns`
/// floats; C's rows are `ldc` floats apart and `columns` floats of each of the first `rows` rows are
/// written (rows past `rows` are not).
public struct TileKernel: Sendable {
    /// B's row `i` at `b + i · ldb`:
    /// `(k, a, b, ldb, c, ldc, rows, accumulate, bias, activationCode)`.
    public typealias Strided = @convention(c) (
        Int, UnsafePointer<Float>, UnsafePointer<Float>, Int, UnsafeMutablePointer<Float>, Int, Int, Bool,
        UnsafePointer<Float>?, Int) -> Void
    /// B's row `i` at `b + offsets[i]` (a direct convolution's taps read in place), never accumulating:
    /// `(k, a, b, offsets, c, ldc, rows, bias, activationCode)`.
    public typealias Offsets = @convention(c) (
        Int, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Int>, UnsafeMutablePointer<Float>, Int, Int,
        UnsafePointer<Float>?, Int) -> Void

    /// `Strided` for a B that is streamed from memory once (the transposed Winograd path's filters):
    /// each row step also prefetches into L2 the cache line `prefetchDistance` bytes past the row, so the next
    /// block of the stream arrives while this one is multiplied:
    /// `(k, a, b, ldb, c, ldc, rows, accumulate, bias, activationCode, prefetchDistance)`.
    public typealias Streamed = @convention(c) (
        Int, UnsafePointer<Float>, UnsafePointer<Float>, Int, UnsafeMutablePointer<Float>, Int, Int, Bool,
        UnsafePointer<Float>?, Int, Int) -> Void

    /// A column of tiles: `Strided` (or `Streamed` when `prefetchDistance > 0`) for the panels of A that
    /// start `aStride` floats apart, one after another down C, against one block of B: rows
    /// `0 ..< rows` of C (the last panel may be partial), bias `r` for row `r`. One call per block of B
    /// instead of one per tile, so the per-call cost (a C-convention thunk that copies stack arguments,
    /// and the driver's bookkeeping) is paid once per block:
    /// `(k, a, aStride, b, ldb, c, ldc, rows, accumulate, bias, activationCode, prefetchDistance)`.
    public typealias Sweep = @convention(c) (
        Int, UnsafePointer<Float>, Int, UnsafePointer<Float>, Int, UnsafeMutablePointer<Float>, Int, Int, Bool,
        UnsafePointer<Float>?, Int, Int) -> Void

    public let strided: Strided
    public let offsets: Offsets
    public let streamed: Streamed
    public let sweep: Sweep

    public init(strided: Strided, offsets: Offsets, streamed: Streamed, sweep: Sweep) {
        self.strided = strided
        self.offsets = offsets
        self.streamed = streamed
        self.sweep = sweep
    }
}

extension TileKernel {
    /// The body of the families' `Sweep` entry points: calls `tile(a, c, rows, bias)` for each panel of
    /// `panelRows` rows down `rows` rows of C (the last panel may be partial), A's panels `aStride`
    /// floats apart, bias advancing with the rows.
    @inlinable @inline(__always)
    public static func sweepPanels(rows: Int, panelRows: Int, a: UnsafePointer<Float>, aStride: Int,
                                   c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>?,
                                   _ tile: (UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int, UnsafePointer<Float>?) -> Void) {
        var (a, c, bias, first) = (a, c, bias, 0)
        while first < rows {
            tile(a, c, min(panelRows, rows - first), bias)
            first += panelRows
            a += aStride
            c += panelRows * ldc
            bias = bias.map { $0 + panelRows }
        }
    }
}

/// How a micro-kernel finds B's successive rows (each kernel specializes its body for both).
public protocol RowsOfB {
    /// The next row's first float.
    mutating func next() -> UnsafeRawPointer
}

/// Rows a fixed number of bytes apart.
@frozen
public struct StridedRows: RowsOfB {
    @usableFromInline var row: UnsafeRawPointer
    @usableFromInline let step: Int

    @inlinable @inline(__always)
    public init(_ b: UnsafePointer<Float>, ldb: Int) {
        row = UnsafeRawPointer(b)
        step = ldb * MemoryLayout<Float>.stride
    }

    @inlinable @inline(__always)
    public mutating func next() -> UnsafeRawPointer {
        defer { row += step }
        return row
    }
}

/// Rows a fixed number of bytes apart, each step prefetching into L2 the row `distance` bytes past it:
/// `lines` 64-byte lines (1 for a 16-float row, 4 for a 64-float row). Kernels pass `lines` as a
/// literal, so the prefetches unroll into straight-line code (a loop here spills the accumulators).
@frozen
public struct StreamedRows: RowsOfB {
    @usableFromInline var row: UnsafeRawPointer
    @usableFromInline let step: Int
    @usableFromInline let distance: Int
    @usableFromInline let lines: Int

    @inlinable @inline(__always)
    public init(_ b: UnsafePointer<Float>, ldb: Int, distance: Int, lines: Int) {
        row = UnsafeRawPointer(b)
        step = ldb * MemoryLayout<Float>.stride
        self.distance = distance
        self.lines = lines
    }

    @inlinable @inline(__always)
    public mutating func next() -> UnsafeRawPointer {
        defer { row += step }
        for line in 0..<lines { prefetchIntoL2(row + distance + 64 * line) }
        return row
    }
}

/// Rows at listed offsets (in floats) from one base.
@frozen
public struct OffsetRows: RowsOfB {
    @usableFromInline let base: UnsafePointer<Float>
    @usableFromInline var offsets: UnsafePointer<Int>

    @inlinable @inline(__always)
    public init(_ base: UnsafePointer<Float>, offsets: UnsafePointer<Int>) {
        self.base = base
        self.offsets = offsets
    }

    @inlinable @inline(__always)
    public mutating func next() -> UnsafeRawPointer {
        defer { offsets += 1 }
        return UnsafeRawPointer(base + offsets.pointee)
    }
}

/// How many rows of a panel a micro-kernel specialization multiplies (the AVX2 fp32 tile, the VNNI int8 tile): a
/// call storing at most 2 (or 4) rows multiplies only those, on a third (or two thirds) of the accumulators,
/// instead of all 6. The transposed Winograd products have such panels often (16 tiles: 6 + 6 + 4; 49 tiles:
/// 8 × 6 + 1), and so does the last panel of most filter counts. `rows` is inlinable, so each specialization sees
/// a constant and compiles the unused accumulators away.
public protocol TileHeight { static var rows: Int { get } }
public enum TwoRows: TileHeight { @inlinable public static var rows: Int { 2 } }
public enum FourRows: TileHeight { @inlinable public static var rows: Int { 4 } }
public enum SixRows: TileHeight { @inlinable public static var rows: Int { 6 } }
