// LLVM intrinsics on 8-lane vectors through `Builtin` (this target is compiled with `-parse-stdlib` and
// `-target-cpu haswell`, Package.swift): AVX2's `vpmaddwd` and the conversions the int8 epilogue needs in one
// instruction each (Swift's generic SIMD conversions and clamps go through the generic runtime here).
// Transparent: inlined into this target's kernels, never called from elsewhere.
import Swift

typealias Int32x8 = SIMD8<Int32>
typealias Int16x16 = SIMD16<Int16>
typealias Floatx8 = SIMD8<Float>

/// `a[2j]·b[2j] + a[2j+1]·b[2j+1]` per 32-bit lane `j` (`vpmaddwd ymm`, s16 × s16 → s32): exact for every
/// s16 input but −32768² · 2.
@_transparent
func multiplyAddPairs(_ a: Int16x16, _ b: Int16x16) -> Int32x8 {
    var result = Int32x8()
    result._storage._value = Builtin.int_x86_avx2_pmadd_wd(a._storage._value, b._storage._value)
    return result
}

/// `value` (two s16 halves) in every 32-bit lane, seen as 16 s16 lanes (`vpbroadcastd`).
@_transparent
func broadcastPair(_ value: Int32) -> Int16x16 {
    let lanes = Int32x8(repeating: value)
    var result = Int16x16()
    result._storage._value = Builtin.bitcast_Vec8xInt32_Vec16xInt16(lanes._storage._value)
    return result
}

/// Each lane converted to float, rounding to nearest even (`vcvtdq2ps`).
@_transparent
func toFloat(_ x: Int32x8) -> Floatx8 {
    var result = Floatx8()
    result._storage._value = Builtin.sitofp_Vec8xInt32_Vec8xFPIEEE32(x._storage._value)
    return result
}

/// `min(max(x, 0), 255)` rounded to the nearest integer, ties to even, as Int32 (`vmaxps`, `vminps`,
/// `vroundps`, `vcvttps2dq`).
@_transparent
func clampedRoundedCodes(_ x: Floatx8) -> Int32x8 {
    let low = Floatx8(), high = Floatx8(repeating: 255)
    let clamped = Builtin.int_minnum_Vec8xFPIEEE32(Builtin.int_maxnum_Vec8xFPIEEE32(x._storage._value, low._storage._value),
                                                   high._storage._value)
    var result = Int32x8()
    result._storage._value = Builtin.fptosi_Vec8xFPIEEE32_Vec8xInt32(Builtin.int_roundeven_Vec8xFPIEEE32(clamped))
    return result
}

/// The low byte of each lane.
@_transparent
func lowBytes(_ x: Int32x8) -> SIMD8<UInt8> {
    var result = SIMD8<UInt8>()
    result._storage._value = Builtin.trunc_Vec8xInt32_Vec8xInt8(x._storage._value)
    return result
}

/// Each byte zero-extended to 32 bits (`vpmovzxbd`).
@_transparent
func widened(_ x: SIMD16<UInt8>) -> SIMD16<UInt32> {
    var result = SIMD16<UInt32>()
    result._storage._value = Builtin.zext_Vec16xInt8_Vec16xInt32(x._storage._value)
    return result
}

/// `low | high << 16` per lane (`vpslld`, `vpor`): each column's two u8 values of k as an s16 pair. (The
/// generic SIMD shift went lane by lane through memory here.)
@_transparent
func interleavedPairs(_ low: SIMD16<UInt32>, _ high: SIMD16<UInt32>) -> SIMD16<UInt32> {
    let sixteen = SIMD16<UInt32>(repeating: 16)
    var result = SIMD16<UInt32>()
    result._storage._value = Builtin.or_Vec16xInt32(low._storage._value,
                                                    Builtin.shl_Vec16xInt32(high._storage._value, sixteen._storage._value))
    return result
}

/// `a · b + c` per lane, one rounding (`vfmadd`).
@_transparent
func fused(_ a: Floatx8, _ b: Floatx8, _ c: Floatx8) -> Floatx8 {
    var result = Floatx8()
    result._storage._value = Builtin.int_fma_Vec8xFPIEEE32(a._storage._value, b._storage._value, c._storage._value)
    return result
}

/// 1 + e^−x on 8 lanes: `FusedExponential.onePlusExpNegated` (`Activation.exponential`'s method with every
/// multiply-add fused, a degree-3 `p` in two halves) with the clamp as `vmaxps`/`vminps`: 17
/// instructions where the shared form, which keeps the scalar form's bits without fused multiply-adds, takes 35. So
/// not bit-identical to the shared form, but to `FusedExponential`'s for finite x; e^−x within 3 ulp (the kernel
/// tests bound swish and logistic against their double-precision definitions).
@_transparent
func fusedOnePlusExpNegated(_ x: Floatx8) -> Floatx8 {
    let low = Floatx8(repeating: -88), high = Floatx8(repeating: 87)
    var x = x
    x._storage._value = Builtin.int_x86_avx_min_ps_256(Builtin.int_x86_avx_max_ps_256(x._storage._value, low._storage._value),
                                                       high._storage._value)
    let magic = Floatx8(repeating: 12_582_912)
    let t = fused(x, Floatx8(repeating: -1.442_695_04), magic)
    let n = t - magic
    let r = fused(n, Floatx8(repeating: 2.121_944_4e-4), fused(n, Floatx8(repeating: -0.693_359_375), -x))
    let r2 = r * r
    let low1 = fused(Floatx8(repeating: 1.666_711_4e-1), r, Floatx8(repeating: 4.999_923_1e-1))
    let high1 = fused(Floatx8(repeating: 8.312_525_2e-3), r, Floatx8(repeating: 4.189_011_5e-2))
    let y = fused(fused(high1, r2, low1), r2, r + 1)
    let bias = Int32x8(repeating: Int32(bitPattern: Float(12_582_912).bitPattern) &- 127)
    let exponent = (unsafeBitCast(t, to: Int32x8.self) &- bias) &<< 23
    return fused(y, unsafeBitCast(exponent, to: Floatx8.self), Floatx8(repeating: 1))
}

/// Logistic on `fusedOnePlusExpNegated`.
@_transparent
func fusedLogistic(_ x: Floatx8) -> Floatx8 { 1 / fusedOnePlusExpNegated(x) }

/// Swish (SiLU) on `fusedOnePlusExpNegated`.
@_transparent
func fusedSwish(_ x: Floatx8) -> Floatx8 { x / fusedOnePlusExpNegated(x) }

/// An activation of one vector, for generic code that must inline it (`AVX2Tile.activate`).
protocol TileActivation {
    static func apply(_ x: Floatx8) -> Floatx8
}

/// `fusedLogistic` as a `TileActivation`.
enum FusedLogistic: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { fusedLogistic(x) }
}

/// `fusedSwish` as a `TileActivation`.
enum FusedSwish: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { fusedSwish(x) }
}

/// 8 lanes from `p`, any alignment (a wrapper the kernels inline whole: where a loop calls `loadUnaligned` itself,
/// its specialization may stay a call, compiled for the baseline CPU).
@inline(__always)
func loadLanes(_ p: UnsafeRawPointer) -> Int32x8 { p.loadUnaligned(as: Int32x8.self) }

/// 8 floats stored at `p`, any alignment (inlined whole, as `loadLanes`).
@inline(__always)
func storeLanes(_ v: Floatx8, _ p: UnsafeMutableRawPointer) { p.storeBytes(of: v, as: Floatx8.self) }
