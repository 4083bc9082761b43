// The AVX-VNNI int8 GEMM micro-kernel: `vpdpbusd` on ymm registers, for CPUs that have it without AVX-512 (Intel's
// client cores from Alder Lake on, its E-core Xeons). The same 6-row tiles of u8 quads as the AVX512-VNNI kernel,
// 16 columns wide (two 8-lane vectors a row: 12 accumulators, two of B and one broadcast fill the 16 ymm registers),
// with the same direct path for 3×3 layers and the same epilogue, so its sums and stores equal that kernel's bit for
// bit.
//
// This file is compiled twice: in YOLOKernelsAVXVNNI (alderlake: AVX2 + AVX-VNNI, the instruction VEX-encoded) and,
// through a symbolic link of the same name, in YOLOKernelsVNNI (cascadelake: the EVEX encoding of the same
// instruction on ymm, AVX512-VNNI + VL). The second copy is the `avxvnni-evex` int8 kernel: it runs this code's logic
// where AVX-VNNI itself is missing (AMD before Zen 5, Intel's AVX-512 Xeons), so the tests cover it on those
// machines. Its only entry points are the `ymmVNNIInt8…` functions, reached through `Int8Kernel` function pointers.
import Swift
import YOLOKernels

typealias Int32x8 = SIMD8<Int32>

/// `acc + Σ_{t<4} u8[4j+t] · s8[4j+t]` per 32-bit lane `j` (`vpdpbusd ymm`; LLVM's intrinsic serves both encodings):
/// `bytes` read as unsigned, `weights` as signed; exact (no saturation).
@_transparent
func dotProductAccumulate8(_ acc: Int32x8, _ bytes: Int32x8, _ weights: Int32x8) -> Int32x8 {
    var result = Int32x8()
    result._storage._value = Builtin.int_x86_avx512_vpdpbusd_256(acc._storage._value, bytes._storage._value,
                                                                 weights._storage._value)
    return result
}

/// 8 lanes from `p + offset`, any alignment (inlined whole, as the other `loadLanes`: QuadLanes.swift).
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: Int32x8.Type) -> Int32x8 {
    p.loadUnaligned(fromByteOffset: offset, as: Int32x8.self)
}

/// `Int8Kernel.Sweep` for 6 × 16 tiles: per step (4 values of k), 16 columns of B (2 vectors of 8 lanes, each lane
/// one column's 4 bytes) and one 32-bit broadcast of A per row, 12 `vpdpbusd` into 12 accumulators (8 × s32 each).
public func ymmVNNIInt8Sweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                             _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    YmmVNNITile.sweepPanels(steps, a, aStride, b, c, ldc, rows, epilogue)
    #endif
}

/// `Int8Kernel.DirectSweep` for 6 × 16 tiles: as `ymmVNNIInt8Sweep`, but step `s` reads its 16 columns of quads at
/// `b + offsets[s]` (the quad-packed input itself, `vnniInt8PackQuads`) instead of a packed block.
public func ymmVNNIInt8DirectSweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                                   _ offsets: UnsafePointer<Int32>, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                                   _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    YmmVNNITile.sweepPanelsDirect(steps, a, aStride, b, offsets, c, ldc, rows, epilogue)
    #endif
}

/// `Int8Kernel.PackB` for 16-column blocks of quads: `[k/4][16][4]` bytes.
public func ymmVNNIInt8PackB(_ k: Int, _ source: UnsafePointer<UInt8>, _ ld: Int, _ columns: Int,
                             _ target: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    packQuadBlock(k, source, ld, columns, target, width: 16)
    #endif
}

enum YmmVNNITile: QuadTile {
    /// One 6 × 16 tile (`rows` of its rows stored) against a packed block: A's panel is zero-padded, and a panel with
    /// 2 or 4 valid rows multiplies only those.
    @inline(never)
    static func tile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeMutableRawPointer,
                     _ ldc: Int, _ rows: Int, _ e: Int8Epilogue) {
        sweep(steps, a, c, ldc, rows, e) { b + 64 * $0 }
    }

    /// One 6 × 16 tile of the direct product: step `s` reads B's 64 bytes at `b + offsets[s]` (rows as `tile`).
    @inline(never)
    static func directTile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ offsets: UnsafePointer<Int32>,
                           _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ e: Int8Epilogue) {
        sweep(steps, a, c, ldc, rows, e) { b + Int(offsets[$0]) }
    }

    /// `sweep` specialized for the fewest of 2, 4 or 6 rows that covers `rows` (`TileHeight`).
    @inline(__always)
    static func sweep(_ steps: Int, _ a: UnsafeRawPointer, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                      _ e: Int8Epilogue, _ bAt: (Int) -> UnsafeRawPointer) {
        switch rows {
        case ...2: sweep(steps, a, c, ldc, rows, e, TwoRows.self, bAt)
        case 3...4: sweep(steps, a, c, ldc, rows, e, FourRows.self, bAt)
        default: sweep(steps, a, c, ldc, rows, e, SixRows.self, bAt)
        }
    }

    /// The 6 × 16 tile both entry points run: step `s` multiplies A's next 24 bytes (six rows of 4) by the 64 bytes
    /// at `bAt(s)`, for the first `Height.rows` rows; inlined into each, so the accumulators stay in registers.
    @inline(__always)
    static func sweep<Height: TileHeight>(_ steps: Int, _ a: UnsafeRawPointer, _ c: UnsafeMutableRawPointer, _ ldc: Int,
                                          _ rows: Int, _ e: Int8Epilogue, _ height: Height.Type,
                                          _ bAt: (Int) -> UnsafeRawPointer) {
        // Each row's sums start at its compensation (exact in s32, so the epilogue has one addition less).
        @inline(__always) func start(_ r: Int) -> Int32x8 { Int32x8(repeating: r < rows ? e.compensation[r] : 0) }
        let k0 = start(0), k1 = start(1), k2 = Height.rows > 2 ? start(2) : Int32x8()
        let k3 = Height.rows > 2 ? start(3) : Int32x8(), k4 = Height.rows > 4 ? start(4) : Int32x8()
        let k5 = Height.rows > 4 ? start(5) : Int32x8()
        var (c00, c01, c10, c11, c20, c21) = (k0, k0, k1, k1, k2, k2)
        var (c30, c31, c40, c41, c50, c51) = (k3, k3, k4, k4, k5, k5)
        var ap = a
        for s in 0..<steps {
            let bp = bAt(s)
            let b0 = loadLanes(bp, as: Int32x8.self), b1 = loadLanes(bp, 32, as: Int32x8.self)
            var w = Int32x8(repeating: loadLanes(ap, as: Int32.self))
            c00 = dotProductAccumulate8(c00, b0, w); c01 = dotProductAccumulate8(c01, b1, w)
            w = Int32x8(repeating: loadLanes(ap, 4, as: Int32.self))
            c10 = dotProductAccumulate8(c10, b0, w); c11 = dotProductAccumulate8(c11, b1, w)
            if Height.rows > 2 {
                w = Int32x8(repeating: loadLanes(ap, 8, as: Int32.self))
                c20 = dotProductAccumulate8(c20, b0, w); c21 = dotProductAccumulate8(c21, b1, w)
                w = Int32x8(repeating: loadLanes(ap, 12, as: Int32.self))
                c30 = dotProductAccumulate8(c30, b0, w); c31 = dotProductAccumulate8(c31, b1, w)
            }
            if Height.rows > 4 {
                w = Int32x8(repeating: loadLanes(ap, 16, as: Int32.self))
                c40 = dotProductAccumulate8(c40, b0, w); c41 = dotProductAccumulate8(c41, b1, w)
                w = Int32x8(repeating: loadLanes(ap, 20, as: Int32.self))
                c50 = dotProductAccumulate8(c50, b0, w); c51 = dotProductAccumulate8(c51, b1, w)
            }
            ap += 24
        }
        // Each row's 16 sums as one 16-lane vector: the stores are the AVX512-VNNI kernel's on a quarter of its row.
        @inline(__always) func row(_ low: Int32x8, _ high: Int32x8) -> Int32x16 { Int32x16(lowHalf: low, highHalf: high) }
        storeTile(c, ldc, rows, e, Height.self, Row.self, (row(c00, c01), row(c10, c11), row(c20, c21), row(c30, c31),
                                                           row(c40, c41), row(c50, c51)))
    }

    /// A row's 16 sums (one 16-lane vector).
    enum Row: TileRow {
        typealias Sums = Int32x16

        /// Row `r` through the epilogue with the activation `A`, stored at `p`: 16 bytes or 16 floats
        /// (`clampedRoundedCodes` rounds as the AVX512-VNNI kernel's `packedCodes` does).
        @_transparent
        static func store<A: StoreActivation>(_ v: Sums, _ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue,
                                              _ a: A.Type) {
            var f = A.apply(toFloat(v) * Floatx16(repeating: e.multipliers[r]) + Floatx16(repeating: e.biases[r]))
            if !A.isPiecewiseLinear && e.bytes { f = f * Floatx16(repeating: e.outputReciprocal) }
            if e.bytes {
                storeLanes(lowBytes(clampedRoundedCodes(f + Floatx16(repeating: e.zeroPoint))), p)
            } else {
                storeLanes(f, p)
            }
        }
    }
}
