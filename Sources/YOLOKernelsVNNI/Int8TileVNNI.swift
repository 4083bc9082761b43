// The AVX512-VNNI int8 GEMM micro-kernel. This target is compiled for cascadelake (skylake-avx512 + VNNI,
// Package.swift), so nothing here may run before the CPU check (`Int8KernelFamily`): its only entry points are
// `vnniInt8Sweep` and `vnniInt8PackB`, reached through `Int8Kernel` function pointers.
import Swift
import YOLOKernels

/// `Int8Kernel.Sweep` for 6 × 64 tiles: per step (4 values of k), 64 columns of B (4 vectors of 16 lanes,
/// each lane one column's 4 bytes) and one 32-bit broadcast of A per row (folded into `vpdpbusd`'s memory
/// operand), 24 `vpdpbusd` into 24 accumulators (16 × s32 each). The sums never leave the registers before
/// the epilogue.
public func vnniInt8Sweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                          _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    let e = epilogue.load(as: Int8Epilogue.self)
    var (panel, first) = (a, 0)
    while first < rows {
        VNNITile.tile(steps, panel, b, c + first * ldc * e.outputBytes, ldc, min(6, rows - first), e.rows(from: first))
        panel += aStride
        first += 6
    }
    #endif
}

/// `Int8Kernel.DirectSweep` for 6 × 64 tiles: as `vnniInt8Sweep`, but step `s` reads its 64 columns of quads at
/// `b + offsets[s]` (the quad-packed input itself, `vnniInt8PackQuads`) instead of a packed block.
public func vnniInt8DirectSweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                                _ offsets: UnsafePointer<Int32>, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                                _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    let e = epilogue.load(as: Int8Epilogue.self)
    var (panel, first) = (a, 0)
    while first < rows {
        VNNITile.directTile(steps, panel, b, offsets, c + first * ldc * e.outputBytes, ldc, min(6, rows - first),
                            e.rows(from: first))
        panel += aStride
        first += 6
    }
    #endif
}

/// `Int8Kernel.PackQuads`: for each plane `q · stride² + a · stride + b` in `firstPlane ..< endPlane` (channel quad `q`,
/// phase `(a, b)` of `stride`; 1: the map; 2: rows `2Y + a`, columns `2X + b`), its quads at `target` (`planeStride`
/// quads each), pixel `(Y, X)` at quad `(Y + 1) · pitch + X + 1`, `pad` in every other quad and in the lanes of
/// channels past `channels`.
public func vnniInt8PackQuads(_ source: UnsafePointer<UInt8>, _ channels: Int, _ height: Int, _ width: Int, _ pad: UInt8,
                              _ stride: Int, _ pitch: Int, _ firstPlane: Int, _ endPlane: Int, _ planeStride: Int,
                              _ target: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    let padQuad = UInt32(pad) &* 0x0101_0101
    let padLanes = SIMD16<UInt32>(repeating: UInt32(pad))
    let plane = height * width
    // `pad` quads (a plain loop: the standard library's `update(repeating:count:)` would be specialized for this ISA
    // with shared linkage, where check-isa.sh rejects it).
    @inline(__always) func fill(_ target: UnsafeMutablePointer<UInt32>, _ count: Int) {
        for i in 0..<count { target[i] = padQuad }
    }
    for index in firstPlane..<endPlane {
        let (q, phase) = index.quotientAndRemainder(dividingBy: stride * stride)
        let first = source + 4 * q * plane
        let valid = min(4, channels - 4 * q)
        let (a, b) = phase.quotientAndRemainder(dividingBy: stride)
        // The phase's rows and columns: Y < (height − a) / stride rounded up.
        let rows = (height - a + stride - 1) / stride, columns = (width - b + stride - 1) / stride
        let out = (target + index * planeStride * 4).assumingMemoryBound(to: UInt32.self)
        // `pad` where no row goes: above the first row, between rows (pitch − columns quads) and below the last.
        fill(out, pitch + 1)
        for y in 0..<rows {
            let row = out + (y + 1) * pitch + 1
            let r0 = first + (stride * y + a) * width + b
            // 16 pixels of channel t from pixel x on (`pad` past the map's channels).
            @inline(__always) func lane(_ t: Int, _ x: Int) -> SIMD16<UInt32> {
                guard t < valid else { return padLanes }
                if stride == 1 { return widened(UnsafeRawPointer(r0 + t * plane + x).loadUnaligned(as: SIMD16<UInt8>.self)) }
                // 32 bytes from the row's even column 2x on: the phase's 16 pixels at its even or odd offsets.
                return phaseBytes(UnsafeRawPointer(r0 - b + t * plane + 2 * x).loadUnaligned(as: SIMD16<UInt16>.self), odd: b == 1)
            }
            // Whether 16 pixels from x on are read within the row.
            @inline(__always) func fits(_ x: Int) -> Bool { x >= 0 && (stride == 1 ? x + 16 <= columns : 2 * x + 32 <= width) }
            // The 16 quads from pixel x on.
            @inline(__always) func put(_ x: Int) {
                UnsafeMutableRawPointer(row + x).storeBytes(of: interleavedQuads(lane(0, x), lane(1, x), lane(2, x), lane(3, x)),
                                                            as: SIMD16<UInt32>.self)
            }
            var x = 0
            while fits(x) {
                put(x)
                x += 16
            }
            if x < columns && fits(columns - 16) {
                put(columns - 16)   // the last 16, overlapping quads already written with the same values
            } else if x < columns {
                // A narrow row (or its end too near the map's): each channel's remaining pixels gathered into a
                // vector first (`pad` past them), then interleaved as above.
                let count = columns - x
                @inline(__always) func gathered(_ t: Int) -> SIMD16<UInt32> {
                    guard t < valid else { return padLanes }
                    var bytes = SIMD16<UInt8>(repeating: pad)
                    for i in 0..<count { bytes[i] = r0[t * plane + stride * (x + i)] }
                    return widened(bytes)
                }
                let quads = interleavedQuads(gathered(0), gathered(1), gathered(2), gathered(3))
                withUnsafeBytes(of: quads) { UnsafeMutableRawPointer(row + x).copyMemory(from: $0.baseAddress!, byteCount: 4 * count) }
            }
            let gapEnd = y + 1 < rows ? (y + 2) * pitch + 1 : planeStride
            fill(row + columns, gapEnd - ((y + 1) * pitch + 1 + columns))
        }
        if rows == 0 { fill(out + pitch + 1, planeStride - pitch - 1) }
    }
    #endif
}

/// `Int8Kernel.PackB` for 64-column blocks of quads: `[k/4][64][4]` bytes.
public func vnniInt8PackB(_ k: Int, _ source: UnsafePointer<UInt8>, _ ld: Int, _ columns: Int,
                          _ target: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    var out = target
    for first in Swift.stride(from: 0, to: k, by: 4) {
        if columns == 64 && first + 4 <= k {
            let r0 = UnsafeRawPointer(source + first * ld), r1 = r0 + ld, r2 = r1 + ld, r3 = r2 + ld
            for j in Swift.stride(from: 0, to: 64, by: 16) {
                let q0 = widened(r0.loadUnaligned(fromByteOffset: j, as: SIMD16<UInt8>.self))
                let q1 = widened(r1.loadUnaligned(fromByteOffset: j, as: SIMD16<UInt8>.self))
                let q2 = widened(r2.loadUnaligned(fromByteOffset: j, as: SIMD16<UInt8>.self))
                let q3 = widened(r3.loadUnaligned(fromByteOffset: j, as: SIMD16<UInt8>.self))
                out.storeBytes(of: interleavedQuads(q0, q1, q2, q3), toByteOffset: 4 * j, as: SIMD16<UInt32>.self)
            }
        } else {
            let bytes = out.assumingMemoryBound(to: UInt8.self)
            for j in 0..<64 {
                for t in 0..<4 {
                    bytes[4 * j + t] = j < columns && first + t < k ? source[(first + t) * ld + j] : 0
                }
            }
        }
        out += 256
    }
    #endif
}

/// `Int8Kernel.Quantize`, 16 values per step.
public func vnniInt8Quantize(_ count: Int, _ source: UnsafePointer<Float>, _ reciprocal: Float, _ zeroPoint: Float,
                             _ target: UnsafeMutablePointer<UInt8>) {
    #if arch(x86_64)
    let (r, z) = (Floatx16(repeating: reciprocal), Floatx16(repeating: zeroPoint))
    var i = 0
    while i + 16 <= count {
        let x = UnsafeRawPointer(source + i).loadUnaligned(as: Floatx16.self)
        UnsafeMutableRawPointer(target + i).storeBytes(of: lowBytes(clampedRoundedCodes(x * r + z)), as: SIMD16<UInt8>.self)
        i += 16
    }
    while i < count {
        target[i] = Int8Epilogue.code(source[i] * reciprocal, zeroPoint: zeroPoint)
        i += 1
    }
    #endif
}

enum VNNITile {
    /// One 6 × 64 tile (`rows` of its rows stored): A's panel is zero-padded, and a panel with 2 or 4 valid rows
    /// multiplies only those (the last panel of 32, 64, 128 or 256 filters: one in 11 of 64 filters' products).
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
            let b0 = bp.loadUnaligned(as: Int32x16.self)
            let b1 = bp.loadUnaligned(fromByteOffset: 64, as: Int32x16.self)
            let b2 = bp.loadUnaligned(fromByteOffset: 128, as: Int32x16.self)
            let b3 = bp.loadUnaligned(fromByteOffset: 192, as: Int32x16.self)
            var w = Int32x16(repeating: ap.loadUnaligned(as: Int32.self))
            c00 = dotProductAccumulate(c00, b0, w); c01 = dotProductAccumulate(c01, b1, w)
            c02 = dotProductAccumulate(c02, b2, w); c03 = dotProductAccumulate(c03, b3, w)
            w = Int32x16(repeating: ap.loadUnaligned(fromByteOffset: 4, as: Int32.self))
            c10 = dotProductAccumulate(c10, b0, w); c11 = dotProductAccumulate(c11, b1, w)
            c12 = dotProductAccumulate(c12, b2, w); c13 = dotProductAccumulate(c13, b3, w)
            if Height.rows > 2 {
                w = Int32x16(repeating: ap.loadUnaligned(fromByteOffset: 8, as: Int32.self))
                c20 = dotProductAccumulate(c20, b0, w); c21 = dotProductAccumulate(c21, b1, w)
                c22 = dotProductAccumulate(c22, b2, w); c23 = dotProductAccumulate(c23, b3, w)
                w = Int32x16(repeating: ap.loadUnaligned(fromByteOffset: 12, as: Int32.self))
                c30 = dotProductAccumulate(c30, b0, w); c31 = dotProductAccumulate(c31, b1, w)
                c32 = dotProductAccumulate(c32, b2, w); c33 = dotProductAccumulate(c33, b3, w)
            }
            if Height.rows > 4 {
                w = Int32x16(repeating: ap.loadUnaligned(fromByteOffset: 16, as: Int32.self))
                c40 = dotProductAccumulate(c40, b0, w); c41 = dotProductAccumulate(c41, b1, w)
                c42 = dotProductAccumulate(c42, b2, w); c43 = dotProductAccumulate(c43, b3, w)
                w = Int32x16(repeating: ap.loadUnaligned(fromByteOffset: 20, as: Int32.self))
                c50 = dotProductAccumulate(c50, b0, w); c51 = dotProductAccumulate(c51, b1, w)
                c52 = dotProductAccumulate(c52, b2, w); c53 = dotProductAccumulate(c53, b3, w)
            }
            ap += 24
        }
        let rowBytes = e.bytes ? ldc : 4 &* ldc
        // The stores once per activation (no branch per vector, so the accumulators stay in registers; logistic
        // and swish inline their exponential, mish alone calls out per vector).
        let sums = ((c00, c01, c02, c03), (c10, c11, c12, c13), (c20, c21, c22, c23), (c30, c31, c32, c33),
                    (c40, c41, c42, c43), (c50, c51, c52, c53))
        switch Activation(code: e.activation) {
        case .leaky: storeRows(c, rowBytes, rows, e, Height.self, Leaky.self, sums)
        case .linear: storeRows(c, rowBytes, rows, e, Height.self, Linear.self, sums)
        case .relu: storeRows(c, rowBytes, rows, e, Height.self, Relu.self, sums)
        case .logistic: storeRows(c, rowBytes, rows, e, Height.self, Logistic.self, sums)
        case .swish: storeRows(c, rowBytes, rows, e, Height.self, Swish.self, sums)
        case .mish: storeRows(c, rowBytes, rows, e, Height.self, Mish.self, sums)
        }
    }

    typealias RowSums = (Int32x16, Int32x16, Int32x16, Int32x16)

    /// The tile's first `rows` rows through `store` with activation `A`.
    @_transparent
    static func storeRows<Height: TileHeight, A: StoreActivation>(
        _ c: UnsafeMutableRawPointer, _ rowBytes: Int, _ rows: Int, _ e: Int8Epilogue, _ height: Height.Type,
        _ a: A.Type, _ sums: (RowSums, RowSums, RowSums, RowSums, RowSums, RowSums)
    ) {
        store(c, 0, e, a, sums.0)
        if rows > 1 { store(c + 1 * rowBytes, 1, e, a, sums.1) }
        if Height.rows > 2 && rows > 2 { store(c + 2 * rowBytes, 2, e, a, sums.2) }
        if Height.rows > 2 && rows > 3 { store(c + 3 * rowBytes, 3, e, a, sums.3) }
        if Height.rows > 4 && rows > 4 { store(c + 4 * rowBytes, 4, e, a, sums.4) }
        if Height.rows > 4 && rows > 5 { store(c + 5 * rowBytes, 5, e, a, sums.5) }
    }

    /// Row `r` of the tile (sums that include the compensation) through the epilogue (`Int8Epilogue`) with the
    /// activation `A`, stored at `p`: 64 bytes or 64 floats. After logistic, swish and mish a u8 output is divided
    /// by its scale (`Int8Epilogue.outputReciprocal`).
    @_transparent
    static func store<A: StoreActivation>(_ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue, _ a: A.Type,
                                          _ v: RowSums) {
        let multiplier = Floatx16(repeating: e.multipliers[r]), bias = Floatx16(repeating: e.biases[r])
        var (f0, f1) = (A.apply(toFloat(v.0) * multiplier + bias), A.apply(toFloat(v.1) * multiplier + bias))
        var (f2, f3) = (A.apply(toFloat(v.2) * multiplier + bias), A.apply(toFloat(v.3) * multiplier + bias))
        if !A.isPiecewiseLinear && e.bytes {
            let reciprocal = Floatx16(repeating: e.outputReciprocal)
            (f0, f1, f2, f3) = (f0 * reciprocal, f1 * reciprocal, f2 * reciprocal, f3 * reciprocal)
        }
        put(p, e, f0, f1, f2, f3)
    }

    /// 64 activated values stored at `p`: as u8 codes (`bytes`) or as floats.
    @_transparent
    static func put(_ p: UnsafeMutableRawPointer, _ e: Int8Epilogue, _ f0: Floatx16, _ f1: Floatx16, _ f2: Floatx16,
                    _ f3: Floatx16) {
        if e.bytes {
            let zero = Floatx16(repeating: e.zeroPoint)
            p.storeBytes(of: packedCodes(f0 + zero, f1 + zero, f2 + zero, f3 + zero), as: SIMD64<UInt8>.self)
        } else {
            p.storeBytes(of: f0, as: Floatx16.self)
            p.storeBytes(of: f1, toByteOffset: 64, as: Floatx16.self)
            p.storeBytes(of: f2, toByteOffset: 128, as: Floatx16.self)
            p.storeBytes(of: f3, toByteOffset: 192, as: Floatx16.self)
        }
    }
}

/// An activation of the stores with the same operations as `Int8Epilogue.activate` (so the same bits), a type so
/// that each tile's stores are compiled once per activation; specialized in this target: code compiled for this ISA
/// stays named in this module (a specialization of the generic one would be emitted with shared linkage, and
/// check-isa.sh rejects it).
protocol StoreActivation {
    static func apply(_ x: Floatx16) -> Floatx16
    /// True when the activation commutes with the division by a u8 output's scale (folded into the multipliers).
    static var isPiecewiseLinear: Bool { get }
}
enum Linear: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { x }
    static var isPiecewiseLinear: Bool { true }
}
enum Leaky: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { Activation.positiveOr(x, x * 0.1) }
    static var isPiecewiseLinear: Bool { true }
}
enum Relu: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { Activation.positiveOr(x, Floatx16()) }
    static var isPiecewiseLinear: Bool { true }
}
/// Logistic and swish on the fused-multiply-add exponential (`FusedExponential`), inlined into the store.
enum Logistic: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { FusedExponential.logistic(x) }
    static var isPiecewiseLinear: Bool { false }
}
enum Swish: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { FusedExponential.swish(x) }
    static var isPiecewiseLinear: Bool { false }
}
/// Mish lane by lane through the scalar form, out of line (`mishLanes`).
enum Mish: StoreActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { mishLanes(x) }
    static var isPiecewiseLinear: Bool { false }
}

/// Mish on this kernel's vectors, lane by lane through the scalar form, out of line: the store stays short.
@inline(never)
func mishLanes(_ x: Floatx16) -> Floatx16 {
    Activation.scalarLanes(.mish, x)
}
