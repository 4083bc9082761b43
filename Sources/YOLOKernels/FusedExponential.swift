/// 1 + e^−x with fused multiply-adds, the denominator of logistic and swish, on 16 lanes (the AVX-512 tile's
/// logistic and swish, and the int8 kernels' stores after those activations) and on one value (`Int8Epilogue`'s
/// reference). `Activation.exponential`'s method (−x = n·ln 2 + r, 2ⁿ built in the exponent field, x clamped to
/// [−88, 87] first) with every multiply-add fused, and a shorter polynomial for e^r: `1 + r + r²·p(r)` with `p` of
/// degree 3, fitted for the smallest largest relative error on |r| ≤ ln 2 / 2 (Cephes' `p`, of degree 5, in the
/// shared form). The SiLU stores of the int8 kernels and of the float tiles spend most of their time in this
/// chain, bound by its nine multiplications and multiply-adds, so nothing else is spent: the negation is folded
/// into the reduction's multiply-adds and `1 + e^r·2ⁿ` is one multiply-add (`p` as `(c0 + c1·r) + (c2 + c3·r)·r²`
/// shortens the chain at no cost). The AVX2 family's `fusedOnePlusExpNegated` is the same sequence on 8
/// lanes. Every form rounds the same operations in the same order, so for finite x they agree bit for bit (a NaN
/// stays NaN here; the AVX2 form's clamp makes it a bound). e^−x within 3 ulp (1.7·10⁻⁷ relative; the kernel
/// tests bound swish and logistic against their double-precision definitions).
public enum FusedExponential {
    /// 1 + e^−x on 16 lanes. Concrete lane types (a generic form leaves the exponent's integer operations lane by
    /// lane) and transparent: compiled only into the ISA targets that call it.
    @_transparent
    public static func onePlusExpNegated(_ x: SIMD16<Float>) -> SIMD16<Float> {
        typealias V = SIMD16<Float>
        let low = V(repeating: -88), high = V(repeating: 87)
        let x = x.replacing(with: low, where: x .< low).replacing(with: high, where: x .> high)
        let magic = V(repeating: 12_582_912)
        let t = magic.addingProduct(x, V(repeating: -1.442_695_04))
        let n = t - magic
        let r = (-x).addingProduct(n, V(repeating: -0.693_359_375)).addingProduct(n, V(repeating: 2.121_944_4e-4))
        let r2 = r * r
        let low1 = V(repeating: 4.999_923_1e-1).addingProduct(V(repeating: 1.666_711_4e-1), r)
        let high1 = V(repeating: 4.189_011_5e-2).addingProduct(V(repeating: 8.312_525_2e-3), r)
        let y = (r + 1).addingProduct(low1.addingProduct(high1, r2), r2)
        let bias = SIMD16<Int32>(repeating: Int32(bitPattern: Float(12_582_912).bitPattern) &- 127)
        let exponent = (unsafeBitCast(t, to: SIMD16<Int32>.self) &- bias) &<< 23
        return V(repeating: 1).addingProduct(y, unsafeBitCast(exponent, to: V.self))
    }

    /// 1 + e^−x for one value, the operations of the 16-lane form (the reference the int8 kernels' stores match).
    @inlinable
    public static func onePlusExpNegated(_ x: Float) -> Float {
        let x = x < -88 ? -88 : x > 87 ? 87 : x
        let magic: Float = 12_582_912
        let t = magic.addingProduct(x, -1.442_695_04)
        let n = t - magic
        let r = (-x).addingProduct(n, -0.693_359_375).addingProduct(n, 2.121_944_4e-4)
        let r2 = r * r
        let low1 = Float(4.999_923_1e-1).addingProduct(1.666_711_4e-1, r)
        let high1 = Float(4.189_011_5e-2).addingProduct(8.312_525_2e-3, r)
        let y = (r + 1).addingProduct(low1.addingProduct(high1, r2), r2)
        let exponent = (Int32(bitPattern: t.bitPattern) &- (Int32(bitPattern: magic.bitPattern) &- 127)) &<< 23
        return Float(1).addingProduct(y, Float(bitPattern: UInt32(bitPattern: exponent)))
    }

    /// Logistic and swish, `1 / (1 + e^−x)` and `x / (1 + e^−x)`, on 16 lanes and on one value: the only place the
    /// kernels' forms are written (the AVX2 family's 8-lane ones excepted).
    @_transparent public static func logistic(_ x: SIMD16<Float>) -> SIMD16<Float> { 1 / onePlusExpNegated(x) }
    @_transparent public static func swish(_ x: SIMD16<Float>) -> SIMD16<Float> { x / onePlusExpNegated(x) }
    @inlinable public static func logistic(_ x: Float) -> Float { 1 / onePlusExpNegated(x) }
    @inlinable public static func swish(_ x: Float) -> Float { x / onePlusExpNegated(x) }
}
