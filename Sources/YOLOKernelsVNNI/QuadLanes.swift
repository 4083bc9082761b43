// What the two VNNI int8 kernels share, on 16-lane vectors: loads and stores, conversions through `Builtin` (both
// targets are compiled with `-parse-stdlib`; none of these needs AVX-512, LLVM splits a 16-lane operation into two
// 8-lane ones where the target has only ymm registers), the quad packing of the direct path and of B, the quantization
// of a float input, the loop over A's panels and the tiles' epilogue stores with their activations. This file is compiled twice: in YOLOKernelsVNNI (cascadelake) and, through a symbolic link of
// the same name, in YOLOKernelsAVXVNNI (alderlake), so each kernel gets it for its own ISA with nothing copied.
// Transparent helpers: inlined into each target's kernels; the entry points are reached through `Int8Kernel`
// function pointers only.
import Swift
import YOLOKernels

typealias Int32x16 = SIMD16<Int32>
typealias Floatx16 = SIMD16<Float>

/// Loads and stores of these kernels' vectors through wrappers they inline whole: where a kernel calls `loadUnaligned`
/// or `storeBytes` itself, the specialization may stay a call, emitted once with shared linkage for both targets that
/// compile this file (check-isa.sh rejects it; the AVX512-VNNI tile ran 3.6× slower through such calls). Any alignment.
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: Int32.Type) -> Int32 {
    p.loadUnaligned(fromByteOffset: offset, as: Int32.self)
}
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: Int32x16.Type) -> Int32x16 {
    p.loadUnaligned(fromByteOffset: offset, as: Int32x16.self)
}
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: Floatx16.Type) -> Floatx16 {
    p.loadUnaligned(fromByteOffset: offset, as: Floatx16.self)
}
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: SIMD16<UInt8>.Type) -> SIMD16<UInt8> {
    p.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
}
@inline(__always) func loadLanes(_ p: UnsafeRawPointer, _ offset: Int = 0, as _: SIMD16<UInt16>.Type) -> SIMD16<UInt16> {
    p.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt16>.self)
}
@inline(__always) func storeLanes(_ v: Floatx16, _ p: UnsafeMutableRawPointer, _ offset: Int = 0) {
    p.storeBytes(of: v, toByteOffset: offset, as: Floatx16.self)
}
@inline(__always) func storeLanes(_ v: SIMD16<UInt32>, _ p: UnsafeMutableRawPointer, _ offset: Int = 0) {
    p.storeBytes(of: v, toByteOffset: offset, as: SIMD16<UInt32>.self)
}
@inline(__always) func storeLanes(_ v: SIMD16<UInt8>, _ p: UnsafeMutableRawPointer, _ offset: Int = 0) {
    p.storeBytes(of: v, toByteOffset: offset, as: SIMD16<UInt8>.self)
}
@inline(__always) func storeLanes(_ v: SIMD64<UInt8>, _ p: UnsafeMutableRawPointer, _ offset: Int = 0) {
    p.storeBytes(of: v, toByteOffset: offset, as: SIMD64<UInt8>.self)
}

/// Each lane converted to float, rounding to nearest even (`vcvtdq2ps`).
@_transparent
func toFloat(_ x: Int32x16) -> Floatx16 {
    var result = Floatx16()
    result._storage._value = Builtin.sitofp_Vec16xInt32_Vec16xFPIEEE32(x._storage._value)
    return result
}

/// `min(max(x, 0), 255)` rounded to the nearest integer, ties to even, as Int32 (`vmaxps`, `vminps`,
/// `vrndscaleps`, `vcvttps2dq`).
@_transparent
func clampedRoundedCodes(_ x: Floatx16) -> Int32x16 {
    let low = Floatx16(), high = Floatx16(repeating: 255)
    let clamped = Builtin.int_minnum_Vec16xFPIEEE32(Builtin.int_maxnum_Vec16xFPIEEE32(x._storage._value, low._storage._value),
                                                    high._storage._value)
    var result = Int32x16()
    result._storage._value = Builtin.fptosi_Vec16xFPIEEE32_Vec16xInt32(Builtin.int_roundeven_Vec16xFPIEEE32(clamped))
    return result
}

/// The low byte of each lane (`vpmovdb`).
@_transparent
func lowBytes(_ x: Int32x16) -> SIMD16<UInt8> {
    var result = SIMD16<UInt8>()
    result._storage._value = Builtin.trunc_Vec16xInt32_Vec16xInt8(x._storage._value)
    return result
}

/// Each byte zero-extended to 32 bits (`vpmovzxbd`).
@_transparent
func widened(_ x: SIMD16<UInt8>) -> SIMD16<UInt32> {
    var result = SIMD16<UInt32>()
    result._storage._value = Builtin.zext_Vec16xInt8_Vec16xInt32(x._storage._value)
    return result
}

/// `q0 | q1 << 8 | q2 << 16 | q3 << 24` per lane (`vpslld`, `vpor`): each column's four u8 values of k as one
/// 32-bit quad. (The generic SIMD shift went lane by lane through memory here.)
@_transparent
func interleavedQuads(_ q0: SIMD16<UInt32>, _ q1: SIMD16<UInt32>, _ q2: SIMD16<UInt32>, _ q3: SIMD16<UInt32>) -> SIMD16<UInt32> {
    let (eight, sixteen, twentyFour) = (SIMD16<UInt32>(repeating: 8), SIMD16<UInt32>(repeating: 16), SIMD16<UInt32>(repeating: 24))
    let a = Builtin.or_Vec16xInt32(q0._storage._value, Builtin.shl_Vec16xInt32(q1._storage._value, eight._storage._value))
    let b = Builtin.or_Vec16xInt32(Builtin.shl_Vec16xInt32(q2._storage._value, sixteen._storage._value),
                                   Builtin.shl_Vec16xInt32(q3._storage._value, twentyFour._storage._value))
    var result = SIMD16<UInt32>()
    result._storage._value = Builtin.or_Vec16xInt32(a, b)
    return result
}

/// The even (`odd` false) or the odd bytes of 32, zero-extended to 32 bits (`vpmovzxwd`, then `vpandd` or `vpsrld`):
/// one phase of a row for a stride-2 layer.
@_transparent
func phaseBytes(_ x: SIMD16<UInt16>, odd: Bool) -> SIMD16<UInt32> {
    let wide = Builtin.zext_Vec16xInt16_Vec16xInt32(x._storage._value)
    var result = SIMD16<UInt32>()
    if odd {
        result._storage._value = Builtin.lshr_Vec16xInt32(wide, SIMD16<UInt32>(repeating: 8)._storage._value)
    } else {
        result._storage._value = Builtin.and_Vec16xInt32(wide, SIMD16<UInt32>(repeating: 0xFF)._storage._value)
    }
    return result
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
                if stride == 1 { return widened(loadLanes(UnsafeRawPointer(r0 + t * plane + x), as: SIMD16<UInt8>.self)) }
                // 32 bytes from the row's even column 2x on: the phase's 16 pixels at its even or odd offsets.
                return phaseBytes(loadLanes(UnsafeRawPointer(r0 - b + t * plane + 2 * x), as: SIMD16<UInt16>.self), odd: b == 1)
            }
            // Whether 16 pixels from x on are read within the row.
            @inline(__always) func fits(_ x: Int) -> Bool { x >= 0 && (stride == 1 ? x + 16 <= columns : 2 * x + 32 <= width) }
            // The 16 quads from pixel x on.
            @inline(__always) func put(_ x: Int) {
                storeLanes(interleavedQuads(lane(0, x), lane(1, x), lane(2, x), lane(3, x)), UnsafeMutableRawPointer(row + x))
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

/// One block of `width` (a multiple of 16) columns of B's `k` rows (u8, rows `ld` bytes apart; `columns` of them
/// valid, zero past them and past k) as quads: `[k/4][width][4]` bytes, `Int8Kernel.PackB` of both VNNI kernels.
@inline(__always)
func packQuadBlock(_ k: Int, _ source: UnsafePointer<UInt8>, _ ld: Int, _ columns: Int, _ target: UnsafeMutableRawPointer,
                   width: Int) {
    var out = target
    for first in Swift.stride(from: 0, to: k, by: 4) {
        if columns == width && first + 4 <= k {
            let r0 = UnsafeRawPointer(source + first * ld), r1 = r0 + ld, r2 = r1 + ld, r3 = r2 + ld
            for j in Swift.stride(from: 0, to: width, by: 16) {
                let q0 = widened(loadLanes(r0, j, as: SIMD16<UInt8>.self))
                let q1 = widened(loadLanes(r1, j, as: SIMD16<UInt8>.self))
                let q2 = widened(loadLanes(r2, j, as: SIMD16<UInt8>.self))
                let q3 = widened(loadLanes(r3, j, as: SIMD16<UInt8>.self))
                storeLanes(interleavedQuads(q0, q1, q2, q3), out, 4 * j)
            }
        } else {
            let bytes = out.assumingMemoryBound(to: UInt8.self)
            for j in 0..<width {
                for t in 0..<4 {
                    bytes[4 * j + t] = j < columns && first + t < k ? source[(first + t) * ld + j] : 0
                }
            }
        }
        out += 4 * width
    }
}

/// `Int8Kernel.Quantize`, 16 values per step.
public func vnniInt8Quantize(_ count: Int, _ source: UnsafePointer<Float>, _ reciprocal: Float, _ zeroPoint: Float,
                             _ target: UnsafeMutablePointer<UInt8>) {
    #if arch(x86_64)
    let (r, z) = (Floatx16(repeating: reciprocal), Floatx16(repeating: zeroPoint))
    var i = 0
    while i + 16 <= count {
        let x = loadLanes(UnsafeRawPointer(source + i), as: Floatx16.self)
        storeLanes(lowBytes(clampedRoundedCodes(x * r + z)), UnsafeMutableRawPointer(target + i))
        i += 16
    }
    while i < count {
        target[i] = Int8Epilogue.code(source[i] * reciprocal, zeroPoint: zeroPoint)
        i += 1
    }
    #endif
}

/// A VNNI kernel's 6-row tile of quads (`VNNITile`: 6 × 64 on zmm; `YmmVNNITile`: 6 × 16 on ymm): one tile of C
/// (`rows` of its rows stored) against a packed block of B, or of the direct product, step `s` reading B at
/// `b + offsets[s]`; each out of line, its body inlined into it (a closure for B's address, which a generic body
/// would leave as a call per step).
protocol QuadTile {
    static func tile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeMutableRawPointer,
                     _ ldc: Int, _ rows: Int, _ e: Int8Epilogue)
    static func directTile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ offsets: UnsafePointer<Int32>,
                           _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ e: Int8Epilogue)
}

extension QuadTile {
    /// `Int8Kernel.Sweep`: the tiles of A's panels (`aStride` bytes apart) against one packed block of B.
    @inline(__always)
    static func sweepPanels(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                            _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ epilogue: UnsafeRawPointer) {
        forEachPanel(a, aStride, c, ldc, rows, epilogue) { tile(steps, $0, b, $1, ldc, $2, $3) }
    }

    /// `Int8Kernel.DirectSweep`: as `sweepPanels`, step `s` reading B at `b + offsets[s]`.
    @inline(__always)
    static func sweepPanelsDirect(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                                  _ offsets: UnsafePointer<Int32>, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                                  _ epilogue: UnsafeRawPointer) {
        forEachPanel(a, aStride, c, ldc, rows, epilogue) { directTile(steps, $0, b, offsets, $1, ldc, $2, $3) }
    }

    /// `tile(panel, c, rows, epilogue)` for each 6-row panel of A (`aStride` bytes apart): its rows of C, how many of
    /// them to store (the last panel may be partial) and the epilogue from its first row on.
    @inline(__always)
    static func forEachPanel(_ a: UnsafeRawPointer, _ aStride: Int, _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int,
                             _ epilogue: UnsafeRawPointer,
                             _ tile: (UnsafeRawPointer, UnsafeMutableRawPointer, Int, Int8Epilogue) -> Void) {
        let e = epilogue.load(as: Int8Epilogue.self)
        var (panel, first) = (a, 0)
        while first < rows {
            tile(panel, c + first * ldc * e.outputBytes, min(6, rows - first), e.rows(from: first))
            panel += aStride
            first += 6
        }
    }
}

/// How one row of a tile's exact sums (its compensation included) goes through the epilogue (`Int8Epilogue`) with the
/// activation `A` into `p`: the AVX512-VNNI tile's 64 (`VNNITile.Row`), the AVX-VNNI tile's 16 (`YmmVNNITile.Row`). A
/// caseless type and a tuple or vector of sums, not a struct holding them: a struct of 64 or 256 bytes in these targets
/// gets value-witness copy helpers (`_swift_memcpy256_16`) that the compiler emits for this ISA under a name every module
/// shares, and check-isa.sh rejects them.
protocol TileRow {
    associatedtype Sums
    static func store<A: StoreActivation>(_ row: Sums, _ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue, _ a: A.Type)
}

/// A 6-row tile's sums through the epilogue, into C's rows `ldc` elements apart (u8 or float, as `e` says): its first
/// `rows` rows, `Height.rows` at most. The stores are compiled once per activation (no branch per vector, so the
/// accumulators stay in registers; logistic and swish inline their exponential, mish alone calls out per vector).
@_transparent
func storeTile<Row: TileRow, Height: TileHeight>(_ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ e: Int8Epilogue,
                                                 _ height: Height.Type, _ row: Row.Type,
                                                 _ sums: (Row.Sums, Row.Sums, Row.Sums, Row.Sums, Row.Sums, Row.Sums)) {
    let rowBytes = e.bytes ? ldc : 4 &* ldc
    switch Activation(code: e.activation) {
    case .leaky: storeRows(c, rowBytes, rows, e, height, row, Leaky.self, sums)
    case .linear: storeRows(c, rowBytes, rows, e, height, row, Linear.self, sums)
    case .relu: storeRows(c, rowBytes, rows, e, height, row, Relu.self, sums)
    case .logistic: storeRows(c, rowBytes, rows, e, height, row, Logistic.self, sums)
    case .swish: storeRows(c, rowBytes, rows, e, height, row, Swish.self, sums)
    case .mish: storeRows(c, rowBytes, rows, e, height, row, Mish.self, sums)
    }
}

/// The tile's first `rows` rows through `Row.store` with activation `A`.
@_transparent
func storeRows<Row: TileRow, Height: TileHeight, A: StoreActivation>(
    _ c: UnsafeMutableRawPointer, _ rowBytes: Int, _ rows: Int, _ e: Int8Epilogue, _ height: Height.Type, _ row: Row.Type,
    _ a: A.Type, _ sums: (Row.Sums, Row.Sums, Row.Sums, Row.Sums, Row.Sums, Row.Sums)
) {
    Row.store(sums.0, c, 0, e, a)
    if rows > 1 { Row.store(sums.1, c + 1 * rowBytes, 1, e, a) }
    if Height.rows > 2 && rows > 2 { Row.store(sums.2, c + 2 * rowBytes, 2, e, a) }
    if Height.rows > 2 && rows > 3 { Row.store(sums.3, c + 3 * rowBytes, 3, e, a) }
    if Height.rows > 4 && rows > 4 { Row.store(sums.4, c + 4 * rowBytes, 4, e, a) }
    if Height.rows > 4 && rows > 5 { Row.store(sums.5, c + 5 * rowBytes, 5, e, a) }
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
