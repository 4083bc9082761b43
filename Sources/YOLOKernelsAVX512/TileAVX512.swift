// The AVX-512 family's GEMM micro-kernel. This target is compiled for skylake-avx512 (x86-64-v4, Package.swift), so
// nothing here may run before `KernelFamily` has checked the CPU: this file's only entry points are the four
// non-generic functions `avx512TileStrided`, `avx512TileOffsets`, `avx512TileStreamed` and `avx512TileSweep`, reached
// through `TileKernel` function pointers (the target's other entry points, its Winograd transforms: WinogradAVX512.swift).
import YOLOKernels

/// A 6 × 64 tile of C in 24 registers of 16 floats: per step of the inner dimension, 64 floats of one
/// row of B (4 vectors), the 6 values of one column of A's panel broadcast, 24 fused multiply-adds.
/// Nothing is accumulated in memory: the tile is stored once, bias and a piecewise-linear activation applied in
/// registers (logistic, swish and mish in one pass over the stored rows, `activate`).
///
/// `TileKernel.Strided` for 6 × 64 tiles.
public func avx512TileStrided(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                           _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                           _ bias: UnsafePointer<Float>?, _ activation: Int) {
    #if arch(x86_64)
    var rowsOfB = StridedRows(b, ldb: ldb)
    AVX512Tile.tile(k, a, &rowsOfB, c, ldc, rows, accumulate, bias, activation)
    #endif
}

/// `TileKernel.Offsets` for 6 × 64 tiles.
public func avx512TileOffsets(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                           _ offsets: UnsafePointer<Int>, _ c: UnsafeMutablePointer<Float>, _ ldc: Int,
                           _ rows: Int, _ bias: UnsafePointer<Float>?, _ activation: Int) {
    #if arch(x86_64)
    var rowsOfB = OffsetRows(b, offsets: offsets)
    AVX512Tile.tile(k, a, &rowsOfB, c, ldc, rows, false, bias, activation)
    #endif
}

/// `TileKernel.Streamed` for 6 × 64 tiles.
public func avx512TileStreamed(_ k: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ ldb: Int,
                             _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                             _ bias: UnsafePointer<Float>?, _ activation: Int, _ prefetchDistance: Int) {
    #if arch(x86_64)
    var rowsOfB = StreamedRows(b, ldb: ldb, distance: prefetchDistance, lines: 4)
    AVX512Tile.tile(k, a, &rowsOfB, c, ldc, rows, accumulate, bias, activation)
    #endif
}

/// `TileKernel.Sweep` for 6 × 64 tiles.
public func avx512TileSweep(_ k: Int, _ a: UnsafePointer<Float>, _ aStride: Int, _ b: UnsafePointer<Float>, _ ldb: Int,
                            _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                            _ bias: UnsafePointer<Float>?, _ activation: Int, _ prefetchDistance: Int) {
    #if arch(x86_64)
    TileKernel.sweepPanels(rows: rows, panelRows: 6, a: a, aStride: aStride, c: c, ldc: ldc, bias: bias) { a, c, valid, bias in
        if prefetchDistance > 0 {
            avx512TileStreamed(k, a, b, ldb, c, ldc, valid, accumulate, bias, activation, prefetchDistance)
        } else {
            avx512TileStrided(k, a, b, ldb, c, ldc, valid, accumulate, bias, activation)
        }
    }
    #endif
}

/// The kernel's body, specialized for each way of finding B's rows.
enum AVX512Tile {
    typealias Vector = SIMD16<Float>

    @inline(__always)
    static func tile<Rows: RowsOfB>(_ k: Int, _ a: UnsafePointer<Float>, _ rowsOfB: inout Rows,
                                    _ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ accumulate: Bool,
                                    _ bias: UnsafePointer<Float>?, _ code: Int) {
        var c00 = initial(c, ldc, 0, 0, rows, accumulate), c01 = initial(c, ldc, 0, 1, rows, accumulate), c02 = initial(c, ldc, 0, 2, rows, accumulate), c03 = initial(c, ldc, 0, 3, rows, accumulate)
        var c10 = initial(c, ldc, 1, 0, rows, accumulate), c11 = initial(c, ldc, 1, 1, rows, accumulate), c12 = initial(c, ldc, 1, 2, rows, accumulate), c13 = initial(c, ldc, 1, 3, rows, accumulate)
        var c20 = initial(c, ldc, 2, 0, rows, accumulate), c21 = initial(c, ldc, 2, 1, rows, accumulate), c22 = initial(c, ldc, 2, 2, rows, accumulate), c23 = initial(c, ldc, 2, 3, rows, accumulate)
        var c30 = initial(c, ldc, 3, 0, rows, accumulate), c31 = initial(c, ldc, 3, 1, rows, accumulate), c32 = initial(c, ldc, 3, 2, rows, accumulate), c33 = initial(c, ldc, 3, 3, rows, accumulate)
        var c40 = initial(c, ldc, 4, 0, rows, accumulate), c41 = initial(c, ldc, 4, 1, rows, accumulate), c42 = initial(c, ldc, 4, 2, rows, accumulate), c43 = initial(c, ldc, 4, 3, rows, accumulate)
        var c50 = initial(c, ldc, 5, 0, rows, accumulate), c51 = initial(c, ldc, 5, 1, rows, accumulate), c52 = initial(c, ldc, 5, 2, rows, accumulate), c53 = initial(c, ldc, 5, 3, rows, accumulate)
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
            ap += 6
        }
        guard let bias else {
            store(c, c00, c01, c02, c03)
            if rows > 1 { store(c + 1 * ldc, c10, c11, c12, c13) }
            if rows > 2 { store(c + 2 * ldc, c20, c21, c22, c23) }
            if rows > 3 { store(c + 3 * ldc, c30, c31, c32, c33) }
            if rows > 4 { store(c + 4 * ldc, c40, c41, c42, c43) }
            if rows > 5 { store(c + 5 * ldc, c50, c51, c52, c53) }
            return
        }
        let activation = Activation(code: code)
        let inRegisters = activation.isPiecewiseLinear
        (inRegisters ? activation : .linear).withVectorFunction(Vector.self) { activation in
            store(c, activation, bias[0], c00, c01, c02, c03)
            if rows > 1 { store(c + 1 * ldc, activation, bias[1], c10, c11, c12, c13) }
            if rows > 2 { store(c + 2 * ldc, activation, bias[2], c20, c21, c22, c23) }
            if rows > 3 { store(c + 3 * ldc, activation, bias[3], c30, c31, c32, c33) }
            if rows > 4 { store(c + 4 * ldc, activation, bias[4], c40, c41, c42, c43) }
            if rows > 5 { store(c + 5 * ldc, activation, bias[5], c50, c51, c52, c53) }
        }
        if !inRegisters { activate(c, ldc, rows, activation) }
    }

    /// The transcendental activations (logistic, swish, mish) on the tile's stored rows, out of line (as the AVX2
    /// tile does; there, their copies inlined into every row's store kept the SIL optimizer busy for minutes).
    /// Logistic and swish use the fused-multiply-add exponential (`FusedExponential`).
    @inline(never)
    static func activate(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _ activation: Activation) {
        switch activation {
        case .logistic: activate(c, ldc, rows, FusedLogistic.self)
        case .swish: activate(c, ldc, rows, FusedSwish.self)
        default:
            activation.withVectorFunction(Vector.self) { activation in
                for r in 0..<min(rows, 6) {
                    let p = UnsafeMutableRawPointer(c + r * ldc)
                    for offset in Swift.stride(from: 0, to: 256, by: 64) {
                        p.storeBytes(of: activation(p.loadUnaligned(fromByteOffset: offset, as: Vector.self)), toByteOffset: offset,
                                     as: Vector.self)
                    }
                }
            }
        }
    }

    /// `A` on the tile's stored rows, a row's four vectors at a time: a type parameter, not a closure, so the
    /// exponential is inlined, four chains side by side.
    @inline(__always)
    static func activate<A: TileActivation>(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ rows: Int, _: A.Type) {
        for r in 0..<min(rows, 6) {
            let p = UnsafeMutableRawPointer(c + r * ldc)
            let y = (A.apply(p.loadUnaligned(as: Vector.self)), A.apply(p.loadUnaligned(fromByteOffset: 64, as: Vector.self)),
                     A.apply(p.loadUnaligned(fromByteOffset: 128, as: Vector.self)), A.apply(p.loadUnaligned(fromByteOffset: 192, as: Vector.self)))
            store(p.assumingMemoryBound(to: Float.self), y.0, y.1, y.2, y.3)
        }
    }

    /// C's row `r` columns `j·16 ..< (j+1)·16` when accumulating into a row that exists, else zero.
    @inline(__always)
    static func initial(_ c: UnsafeMutablePointer<Float>, _ ldc: Int, _ r: Int, _ j: Int, _ rows: Int,
                        _ accumulate: Bool) -> Vector {
        guard accumulate && r < rows else { return Vector() }
        return UnsafeRawPointer(c + r * ldc + j * 16).loadUnaligned(as: Vector.self)
    }

    /// Stores one row of the tile at `p` as it is (products accumulated in parts, Winograd's M).
    @inline(__always)
    static func store(_ p: UnsafeMutablePointer<Float>, _ v0: Vector, _ v1: Vector, _ v2: Vector, _ v3: Vector) {
        let p = UnsafeMutableRawPointer(p)
        p.storeBytes(of: v0, as: Vector.self)
        p.storeBytes(of: v1, toByteOffset: 64, as: Vector.self)
        p.storeBytes(of: v2, toByteOffset: 128, as: Vector.self)
        p.storeBytes(of: v3, toByteOffset: 192, as: Vector.self)
    }

    /// Stores one row of the tile at `p` with its bias added and the activation applied.
    @inline(__always)
    static func store(_ p: UnsafeMutablePointer<Float>, _ activation: (Vector) -> Vector, _ bias: Float,
                      _ v0: Vector, _ v1: Vector, _ v2: Vector, _ v3: Vector) {
        let p = UnsafeMutableRawPointer(p)
        let beta = Vector(repeating: bias)
        p.storeBytes(of: activation(v0 + beta), as: Vector.self)
        p.storeBytes(of: activation(v1 + beta), toByteOffset: 64, as: Vector.self)
        p.storeBytes(of: activation(v2 + beta), toByteOffset: 128, as: Vector.self)
        p.storeBytes(of: activation(v3 + beta), toByteOffset: 192, as: Vector.self)
    }
}
