// LLVM intrinsics on 16-lane vectors through `Builtin` (this target is compiled with `-parse-stdlib` and
// `-target-cpu cascadelake`, Package.swift): VNNI's `vpdpbusd`, and the conversions the int8 epilogue needs
// in one instruction each (Swift's generic SIMD conversions and clamps go through the generic runtime here).
// Transparent: inlined into this target's kernels, never called from elsewhere.
import Swift

typealias Int32x16 = SIMD16<Int32>
typealias Floatx16 = SIMD16<Float>

/// `acc + Σ_{t<4} u8[4j+t] · s8[4j+t]` per 32-bit lane `j` (`vpdpbusd zmm`): `bytes` read as unsigned, `weights`
/// as signed; exact (no saturation).
@_transparent
func dotProductAccumulate(_ acc: Int32x16, _ bytes: Int32x16, _ weights: Int32x16) -> Int32x16 {
    var result = Int32x16()
    result._storage._value = Builtin.int_x86_avx512_vpdpbusd_512(acc._storage._value, bytes._storage._value,
                                                                 weights._storage._value)
    return result
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

/// The u8 codes of 64 values in four vectors, in order: `min(max(x, 0), 255)` rounded to the nearest integer, ties
/// to even (NaN: 0), the same as `clampedRoundedCodes` under the default rounding mode, in fewer instructions:
/// `vmaxps` and `vminps` (NaN becomes 0, as there), `vcvtps2dq` (the current rounding mode), then the saturating
/// packs `vpackusdw` and `vpackuswb` make them bytes, and `vpermd` puts back in order the dwords the packs interleave
/// per 128-bit lane. (No intrinsic with an immediate operand: a debug build passes it as a variable, which LLVM's
/// verifier rejects.)
@_transparent
func packedCodes(_ x0: Floatx16, _ x1: Floatx16, _ x2: Floatx16, _ x3: Floatx16) -> SIMD64<UInt8> {
    let low = Floatx16()._storage._value, high = Floatx16(repeating: 255)._storage._value
    @_transparent func integers(_ x: Floatx16) -> Builtin.Vec16xInt32 {
        Builtin.int_lrint_Vec16xInt32_Vec16xFPIEEE32(
            Builtin.int_minnum_Vec16xFPIEEE32(Builtin.int_maxnum_Vec16xFPIEEE32(x._storage._value, low), high))
    }
    let words01 = Builtin.int_x86_avx512_packusdw_512(integers(x0), integers(x1))
    let words23 = Builtin.int_x86_avx512_packusdw_512(integers(x2), integers(x3))
    let bytes = Builtin.int_x86_avx512_packuswb_512(words01, words23)
    let order = SIMD16<Int32>(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)
    var result = SIMD64<UInt8>()
    result._storage._value = Builtin.bitcast_Vec16xInt32_Vec64xInt8(
        Builtin.int_x86_avx512_permvar_si_512(Builtin.bitcast_Vec64xInt8_Vec16xInt32(bytes), order._storage._value))
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
