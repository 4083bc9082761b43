// The AVX2 + FMA family's GEMM micro-kernel. This target is compiled for haswell (x86-64-v3, Package.swift), so
// nothing here may run before `KernelFamily` has checked the CPU: this file's only entry points are the four
// non-generic functions `avx2TileStrided`, `avx2TileOffsets`, `avx2TileStreamed` and `avx2TileSweep`, reached
// through `TileKernel` function pointers (the target's other entry points, its Winograd transforms: WinogradAVX2.swift).
import Swift
import YOLOKernels

/// A 6 × 16 tile of C in 12 of the 16 ymm registers (8 floats each): per step of the inner dimension,
/// 16 floats of one row of B (2 vectors), the 6 values of one column of A's panel broadcast, 12 fused
/// multiply-adds; the other registers hold B's two vectors and the broadcast. (4 × 24, the other tile
/// that fits 16 registers, is slower on the models' shapes.) Nothing is
/// accumulated in memory: the tile is stored once, bias and a piecewise-linear activation applied in
/// registers (logistic, swish and mish in one pass over the stored rows, `activate`).
///
/// `TileKernel.Strided` for 6 × 16 tiles.
public func avx2TileStrided(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                           _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                           _ bias: UnsafePointer<Float>?, _ activation: Int) {
    #if arch(x86_64)
    if rows <= 2 {
        strided(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, TwoRows.self)
    } else if rows <= 4 {
        strided(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, FourRows.self)
    } else {
        strided(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, SixRows.self)
    }
    #endif
}

/// `TileKernel.Offsets` for 6 × 16 tiles.
public func avx2TileOffsets(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                           _ offsets: UnsafePointer<Int>, _ c: UnsafeMutablePointer<Float>, _ ldc: Int,
                           _ rows: Int, _ bias: UnsafePointer<Float>?, _ activation: Int) {
    #if arch(x86_64)
    if rows <= 2 {
        offset(k, a, b, offsets, c, ldc, rows, bias, activation, TwoRows.self)
    } else if rows <= 4 {
        offset(k, a, b, offsets, c, ldc, rows, bias, activation, FourRows.self)
    } else {
        offset(k, a, b, offsets, c, ldc, rows, bias, activation, SixRows.self)
    }
    #endif
}

/// `TileKernel.Streamed` for 6 × 16 tiles.
public func avx2TileStreamed(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                             _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                             _ bias: UnsafePointer<Float>?, _ activation: Int, _ prefetchDistance: Int) {
    #if arch(x86_64)
    if rows <= 2 {
        streamed(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, prefetchDistance, TwoRows.self)
    } else if rows <= 4 {
        streamed(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, prefetchDistance, FourRows.self)
    } else {
        streamed(k, a, b, ldb, c, ldc, rows, accumulate, bias, activation, prefetchDistance, SixRows.self)
    }
    #endif
}

/// `TileKernel.Sweep` for 6 × 16 tiles.
public func avx2TileSweep(_ k: Int, _ a: UnsafePointer<Float>, _ aStride: Int, _ b: UnsafePointer<Float>, _ ldb: Int,
                          _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                          _ bias: UnsafePointer<Float>?, _ activation: Int, _ prefetchDistance: Int) {
    #if arch(x86_64)
    TileKernel.sweepPanels(rows: rows, panelRows: 6, a: a, aStride: aStride, c: c, ldc: ldc, bias: bias) { a, c, valid, bias in
        if prefetchDistance > 0 {
            avx2TileStreamed(k, a, b, ldb, c, ldc, valid, accumulate, bias, activation, prefetchDistance)
        } else {
            avx2TileStrided(k, a, b, ldb, c, ldc, valid, accumulate, bias, activation)
        }
    }
    #endif
}

// One function per way of finding B's rows, specialized per height, each inlining the body once (with three
// bodies in one entry point the compiler leaves them as calls and no longer unrolls the prefetch loop).

@inline(never)
func strided<Height: TileHeight>(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                                 _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                                 _ bias: UnsafePointer<Float>?, _ activation: Int, _ height: Height.Type) {
    var rowsOfB = StridedRows(b, ldb: ldb)
    AVX2Tile.tile(k, a, &rowsOfB, c, ldc, rows, accumulate, bias, activation, height)
}

@inline(never)
func offset<Height: TileHeight>(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                                _ offsets: UnsafePointer<Int>, _ c: UnsafeMutablePointer<Float>, _ ldc: Int,
                                _ rows: Int, _ bias: UnsafePointer<Float>?, _ activation: Int, _ height: Height.Type) {
    var rowsOfB = OffsetRows(b, offsets: offsets)
    AVX2Tile.tile(k, a, &rowsOfB, c, ldc, rows, false, bias, activation, height)
}

@inline(never)
func streamed<Height: TileHeight>(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                                  _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                                  _ bias: UnsafePointer<Float>?, _ activation: Int, _ prefetchDistance: Int,
                                  _ height: Height.Type) {
    var rowsOfB = StreamedRows(b, ldb: ldb, distance: prefetchDistance, lines: 1)
    AVX2Tile.tile(k, a, &rowsOfB, c, ldc, rows, accumulate, bias, activation, height)
}

/// The kernel's body, specialized for each way of finding B's rows.
enum AVX2Tile {
    typealias Vector = SIMD8<Float>

    /// `Height.rows` (2, 4 or 6, a constant of each specialization) is how many of the panel's rows are
    /// multiplied; the other accumulators stay unused and are compiled away.
    @inline(__always)
    static func tile<Rows: RowsOfB, Height: TileHeight>(_ k: Int, _ a: UnsafePointer<Float>, _ rowsOfB: inout Rows,
                                                       _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int,
                                                       _ accumulate: Bool, _ bias: UnsafePointer<Float>?, _ code: Int,
                                                       _ height: Height.Type) {
        var c00 = initial(c, ldc, 0, 0, rows, accumulate), c01 = initial(c, ldc, 0, 1, rows, accumulate)
        var c10 = initial(c, ldc, 1, 0, rows, accumulate), c11 = initial(c, ldc, 1, 1, rows, accumulate)
        var c20 = initial(c, ldc, 2, 0, rows, accumulate), c21 = initial(c, ldc, 2, 1, rows, accumulate)
        var c30 = initial(c, ldc, 3, 0, rows, accumulate), c31 = initial(c, ldc, 3, 1, rows, accumulate)
        var c40 = initial(c, ldc, 4, 0, rows, accumulate), c41 = initial(c, ldc, 4, 1, rows, accumulate)
        var c50 = initial(c, ldc, 5, 0, rows, accumulate), c51 = initial(c, ldc, 5, 1, rows, accumulate)
        var ap = a
        if Height.rows == 2 {
            // Two rows are 4 accumulators: one FMA chain each, so every step waits on the FMA latency (4
            // cycles) and the panel runs at half the kernel's rate. Odd steps go to a second set of
            // accumulators, summed before the store. (Rows 2 and 3's accumulators as that set are slower: they
            // start from `initial`'s conditional load.) Such panels end most filter
            // counts and the 49-tile Winograd products (8 × 6 + 1).
            var (e0, e1, f0, f1) = (Vector(), Vector(), Vector(), Vector())
            var step = 0
            while step + 1 < k {
                let (b0, b1) = load(rowsOfB.next())
                addTwoRows(ap, b0, b1, &c00, &c01, &c10, &c11)
                let (q0, q1) = load(rowsOfB.next())
                addTwoRows(ap + 6, q0, q1, &e0, &e1, &f0, &f1)
                ap += 12
                step += 2
            }
            if step < k {
                let (b0, b1) = load(rowsOfB.next())
                addTwoRows(ap, b0, b1, &c00, &c01, &c10, &c11)
            }
            c00 += e0; c01 += e1; c10 += f0; c11 += f1
        } else {
            for _ in 0..<k {
                let (b0, b1) = load(rowsOfB.next())
                addTwoRows(ap, b0, b1, &c00, &c01, &c10, &c11)
                if Height.rows > 2 { addTwoRows(ap + 2, b0, b1, &c20, &c21, &c30, &c31) }
                if Height.rows > 4 { addTwoRows(ap + 4, b0, b1, &c40, &c41, &c50, &c51) }
                ap += 6
            }
        }
        guard let bias else {
            store(c, c00, c01)
            if rows > 1 { store(c + 1 * ldc, c10, c11) }
            if rows > 2 { store(c + 2 * ldc, c20, c21) }
            if rows > 3 { store(c + 3 * ldc, c30, c31) }
            if rows > 4 { store(c + 4 * ldc, c40, c41) }
            if rows > 5 { store(c + 5 * ldc, c50, c51) }
            return
        }
        let activation = Activation(code: code)
        let inRegisters = activation.isPiecewiseLinear
        (inRegisters ? activation : .linear).withVectorFunction(Vector.self) { activation in
            store(c, activation, bias[0], c00, c01)
            if rows > 1 { store(c + 1 * ldc, activation, bias[1], c10, c11) }
            if rows > 2 { store(c + 2 * ldc, activation, bias[2], c20, c21) }
            if rows > 3 { store(c + 3 * ldc, activation, bias[3], c30, c31) }
            if rows > 4 { store(c + 4 * ldc, activation, bias[4], c40, c41) }
            if rows > 5 { store(c + 5 * ldc, activation, bias[5], c50, c51) }
        }
        if !inRegisters { activate(c, ldc, rows, activation) }
    }

    /// The transcendental activations (logistic, swish, mish) on the tile's stored rows, out of line: inlined into
    /// each row's store of all nine specializations of `tile`, the exponential's copies make this module take many
    /// minutes to optimize. Logistic and swish use the fused-multiply-add exponential (`fusedOnePlusExpNegated`).
    @inline(never)
    static func activate(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ activation: Activation) {
        switch activation {
        case .logistic: activate(c, ldc, rows, FusedLogistic.self)
        case .swish: activate(c, ldc, rows, FusedSwish.self)
        default:
            activation.withVectorFunction(Vector.self) { activation in
                for r in 0..<min(rows, 6) {
                    let (v0, v1) = load(c + r * ldc)
                    store(c + r * ldc, activation(v0), activation(v1))
                }
            }
        }
    }

    /// `A` on the tile's stored rows, four vectors at a time: a type parameter, not a closure, so the exponential
    /// is inlined (a closure stayed a call per vector), and four chains side by side fit the 16 registers.
    @inline(__always)
    static func activate<A: TileActivation>(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _: A.Type) {
        var r = 0
        while r + 1 < rows {
            let (v0, v1) = load(c + r * ldc), (v2, v3) = load(c + (r + 1) * ldc)
            let y = (A.apply(v0), A.apply(v1), A.apply(v2), A.apply(v3))
            store(c + r * ldc, y.0, y.1); store(c + (r + 1) * ldc, y.2, y.3)
            r += 2
        }
        if r < rows {
            let (v0, v1) = load(c + r * ldc)
            store(c + r * ldc, A.apply(v0), A.apply(v1))
        }
    }

    /// One row of B: its 16 floats as two vectors.
    @inline(__always)
    static func load(_ bp: UnsafeRawPointer) -> (Vector, Vector) {
        (bp.loadUnaligned(as: Vector.self), bp.loadUnaligned(fromByteOffset: 32, as: Vector.self))
    }

    /// One step for two rows of the tile: A's values `ap[0]` and `ap[1]` times B's row (`b0`, `b1`), added to
    /// the first row's accumulators `x0`, `x1` and the second's `y0`, `y1`.
    @inline(__always)
    static func addTwoRows(_ ap: UnsafePointer<Float>, _ b0: Vector, _ b1: Vector,
                           _ x0: inout Vector, _ x1: inout Vector, _ y0: inout Vector, _ y1: inout Vector) {
        var s = Vector(repeating: ap[0])
        x0.addProduct(s, b0); x1.addProduct(s, b1)
        s = Vector(repeating: ap[1])
        y0.addProduct(s, b0); y1.addProduct(s, b1)
    }

    /// C's row `r` columns `j·8 ..< (j+1)·8` when accumulating into a row that exists, else zero.
    @inline(__always)
    static func initial(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ r: Int, _ j: Int, _ rows: Int,
                        _ accumulate: Bool) -> Vector {
        guard accumulate && r < rows else { return Vector() }
        return UnsafeRawPointer(c + r * ldc + j * 8).loadUnaligned(as: Vector.self)
    }

    /// Stores one row of the tile at `p` as it is (products accumulated in parts, Winograd's M).
    @inline(__always)
    static func store(_ p: UnsafeMutablePointer<Float>, _ v0: Vector, _ v1: Vector) {
        let p = UnsafeMutableRawPointer(p)
        p.storeBytes(of: v0, as: Vector.self)
        p.storeBytes(of: v1, toByteOffset: 32, as: Vector.self)
    }

    /// Stores one row of the tile at `p` with its bias added and the activation applied.
    @inline(__always)
    static func store(_ p: UnsafeMutablePointer<Float>, _ activation: (Vector) -> Vector, _ bias: Float,
                      _ v0: Vector, _ v1: Vector) {
        let p = UnsafeMutableRawPointer(p)
        let beta = Vector(repeating: bias)
        p.storeBytes(of: activation(v0 + beta), as: Vector.self)
        p.storeBytes(of: activation(v1 + beta), toByteOffset: 32, as: Vector.self)
    }
}
