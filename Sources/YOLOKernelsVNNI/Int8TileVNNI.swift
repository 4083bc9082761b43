// The AVX512-VNNI int8 GEMM micro-kernel. This target is compiled for cascadelake (skylake-avx512 + VNNI,
// Package.swift), so nothing here may run before the CPU check (`Int8KernelFamily`): its only entry points are
// `vnniInt8Sweep`, `vnniInt8DirectSweep` and `vnniInt8PackB` here, the packing and quantization it shares with the
// AVX-VNNI kernel (QuadLanes.swift) and that kernel's EVEX build (Int8TileYmm.swift), all reached through
// `Int8Kernel` function pointers.
import Swift
import YOLOKernels

/// `Int8Kernel.Sweep` for 6 × 64 tiles: per step (4 values of k), 64 columns of B (4 vectors of 16 lanes,
/// each lane one column's 4 bytes) and one 32-bit broadcast of A per row (folded into `vpdpbusd`'s memory
/// operand), 24 `vpdpbusd` into 24 accumulators (16 × s32 each). The sums never leave the registers before
/// the epilogue.
public func vnniInt8Sweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                          _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    VNNITile.sweepPanels(steps, a, aStride, b, c, ldc, rows, epilogue)
    #endif
}

/// `Int8Kernel.DirectSweep` for 6 × 64 tiles: as `vnniInt8Sweep`, but step `s` reads its 64 columns of quads at
/// `b + offsets[s]` (the quad-packed input itself, `vnniInt8PackQuads`) instead of a packed block.
public func vnniInt8DirectSweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                                _ offsets: UnsafePointer<Int32>, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                                _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    VNNITile.sweepPanelsDirect(steps, a, aStride, b, offsets, c, ldc, rows, epilogue)
    #endif
}

/// `Int8Kernel.PackB` for 64-column blocks of quads: `[k/4][64][4]` bytes.
public func vnniInt8PackB(_ k: Int, _ source: UnsafePointer<UInt8>, _ ld: Int, _ columns: Int,
                          _ target: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    packQuadBlock(k, source, ld, columns, target, width: 64)
    #endif
}

enum VNNITile: QuadTile {
    /// One 6 × 64 tile (`rows` of its rows stored) against a packed block: A's panel is zero-padded, and a panel with
    /// 2 or 4 valid rows multiplies only those.
    @inline(never)
    static func tile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeMutableRawPointer,
                     _ ldc: Int, _ rows: Int, _ e: Int8Epilogue) {
        sweep(steps, a, c, ldc, rows, e) { b + 256 * $0 }
    }

    /// One 6 × 64 tile of the direct product: step `s` reads B's 256 bytes at `b + offsets[s]` (rows as `tile`).
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

    /// The 6 × 64 tile both entry points run: step `s` multiplies A's next 24 bytes (six rows of 4) by the 256
    /// bytes at `bAt(s)`, for the first `Height.rows` rows (a constant of each specialization: the other
    /// accumulators are compiled away); inlined into each, so the accumulators stay in registers.
    @inline(__always)
    static func sweep<Height: TileHeight>(_ steps: Int, _ a: UnsafeRawPointer, _ c: UnsafeMutableRawPointer, _ ldc: Int,
                                          _ rows: Int, _ e: Int8Epilogue, _ height: Height.Type,
                                          _ bAt: (Int) -> UnsafeRawPointer) {
        // Each row's sums start at its compensation (exact in s32, so the epilogue has one addition less).
        @inline(__always) func start(_ r: Int) -> Int32x16 { Int32x16(repeating: r < rows ? e.compensation[r] : 0) }
        let k0 = start(0), k1 = start(1), k2 = Height.rows > 2 ? start(2) : Int32x16()
        let k3 = Height.rows > 2 ? start(3) : Int32x16(), k4 = Height.rows > 4 ? start(4) : Int32x16()
        let k5 = Height.rows > 4 ? start(5) : Int32x16()
        var c00 = k0, c01 = k0, c02 = k0, c03 = k0
        var c10 = k1, c11 = k1, c12 = k1, c13 = k1
        var c20 = k2, c21 = k2, c22 = k2, c23 = k2
        var c30 = k3, c31 = k3, c32 = k3, c33 = k3
        var c40 = k4, c41 = k4, c42 = k4, c43 = k4
        var c50 = k5, c51 = k5, c52 = k5, c53 = k5
        var ap = a
        for s in 0..<steps {
            let bp = bAt(s)
            let b0 = loadLanes(bp, as: Int32x16.self)
            let b1 = loadLanes(bp, 64, as: Int32x16.self)
            let b2 = loadLanes(bp, 128, as: Int32x16.self)
            let b3 = loadLanes(bp, 192, as: Int32x16.self)
            var w = Int32x16(repeating: loadLanes(ap, as: Int32.self))
            c00 = dotProductAccumulate(c00, b0, w); c01 = dotProductAccumulate(c01, b1, w)
            c02 = dotProductAccumulate(c02, b2, w); c03 = dotProductAccumulate(c03, b3, w)
            w = Int32x16(repeating: loadLanes(ap, 4, as: Int32.self))
            c10 = dotProductAccumulate(c10, b0, w); c11 = dotProductAccumulate(c11, b1, w)
            c12 = dotProductAccumulate(c12, b2, w); c13 = dotProductAccumulate(c13, b3, w)
            if Height.rows > 2 {
                w = Int32x16(repeating: loadLanes(ap, 8, as: Int32.self))
                c20 = dotProductAccumulate(c20, b0, w); c21 = dotProductAccumulate(c21, b1, w)
                c22 = dotProductAccumulate(c22, b2, w); c23 = dotProductAccumulate(c23, b3, w)
                w = Int32x16(repeating: loadLanes(ap, 12, as: Int32.self))
                c30 = dotProductAccumulate(c30, b0, w); c31 = dotProductAccumulate(c31, b1, w)
                c32 = dotProductAccumulate(c32, b2, w); c33 = dotProductAccumulate(c33, b3, w)
            }
            if Height.rows > 4 {
                w = Int32x16(repeating: loadLanes(ap, 16, as: Int32.self))
                c40 = dotProductAccumulate(c40, b0, w); c41 = dotProductAccumulate(c41, b1, w)
                c42 = dotProductAccumulate(c42, b2, w); c43 = dotProductAccumulate(c43, b3, w)
                w = Int32x16(repeating: loadLanes(ap, 20, as: Int32.self))
                c50 = dotProductAccumulate(c50, b0, w); c51 = dotProductAccumulate(c51, b1, w)
                c52 = dotProductAccumulate(c52, b2, w); c53 = dotProductAccumulate(c53, b3, w)
            }
            ap += 24
        }
        storeTile(c, ldc, rows, e, Height.self, Row.self, ((c00, c01, c02, c03), (c10, c11, c12, c13), (c20, c21, c22, c23),
                                                           (c30, c31, c32, c33), (c40, c41, c42, c43), (c50, c51, c52, c53)))
    }

    /// A row's 64 sums (four vectors).
    enum Row: TileRow {
        typealias Sums = (Int32x16, Int32x16, Int32x16, Int32x16)

        /// Row `r` through the epilogue with the activation `A`, stored at `p`: 64 bytes or 64 floats. After logistic,
        /// swish and mish a u8 output is divided by its scale (`Int8Epilogue.outputReciprocal`).
        @_transparent
        static func store<A: StoreActivation>(_ v: Sums, _ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue,
                                              _ a: A.Type) {
            let multiplier = Floatx16(repeating: e.multipliers[r]), bias = Floatx16(repeating: e.biases[r])
            var (f0, f1) = (A.apply(toFloat(v.0) * multiplier + bias), A.apply(toFloat(v.1) * multiplier + bias))
            var (f2, f3) = (A.apply(toFloat(v.2) * multiplier + bias), A.apply(toFloat(v.3) * multiplier + bias))
            if !A.isPiecewiseLinear && e.bytes {
                let reciprocal = Floatx16(repeating: e.outputReciprocal)
                (f0, f1, f2, f3) = (f0 * reciprocal, f1 * reciprocal, f2 * reciprocal, f3 * reciprocal)
            }
            VNNITile.put(p, e, f0, f1, f2, f3)
        }
    }

    /// 64 activated values stored at `p`: as u8 codes (`bytes`) or as floats.
    @_transparent
    static func put(_ p: UnsafeMutableRawPointer, _ e: Int8Epilogue, _ f0: Floatx16, _ f1: Floatx16, _ f2: Floatx16,
                    _ f3: Floatx16) {
        if e.bytes {
            let zero = Floatx16(repeating: e.zeroPoint)
            storeLanes(packedCodes(f0 + zero, f1 + zero, f2 + zero, f3 + zero), p)
        } else {
            storeLanes(f0, p)
            storeLanes(f1, p, 64)
            storeLanes(f2, p, 128)
            storeLanes(f3, p, 192)
        }
    }
}
