// The AVX-512-only intrinsics of the AVX512-VNNI kernel, through `Builtin` (this target is compiled with `-parse-stdlib`
// and `-target-cpu cascadelake`, Package.swift): `vpdpbusd` on zmm and the 64-code store. The conversions it shares
// with the AVX-VNNI kernel are in QuadLanes.swift (Swift's generic SIMD conversions and clamps go through the generic
// runtime here). Transparent: inlined into this target's kernels, never called from elsewhere.
import Swift

/// `acc + Σ_{t<4} u8[4j+t] · s8[4j+t]` per 32-bit lane `j` (`vpdpbusd zmm`): `bytes` read as unsigned, `weights`
/// as signed; exact (no saturation).
@_transparent
func dotProductAccumulate(_ acc: Int32x16, _ bytes: Int32x16, _ weights: Int32x16) -> Int32x16 {
    var result = Int32x16()
    result._storage._value = Builtin.int_x86_avx512_vpdpbusd_512(acc._storage._value, bytes._storage._value,
                                                                 weights._storage._value)
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
