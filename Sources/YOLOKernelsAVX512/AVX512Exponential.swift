// Logistic and swish on 16 lanes with fused multiply-adds, for this target's tile and Winograd output transforms
// (the AVX2 family's `fusedExponential` on 16 lanes). Transparent: inlined into this target's kernels, never
// called from elsewhere.
import YOLOKernels

typealias Floatx16 = SIMD16<Float>

/// e^x on 16 lanes: `Activation.exponential`'s method (x = n·ln 2 + r, Cephes' degree-7 polynomial for e^r, 2ⁿ
/// built in the exponent field, x clamped to [−87, 88] first) with every multiply-add fused, where the shared
/// form keeps the scalar form's bits without them. Within 2 ulp of e^x (the kernel tests bound swish and logistic
/// against their double-precision definitions); a NaN stays NaN.
@_transparent
func fusedExponential(_ x: Floatx16) -> Floatx16 {
    let low = Floatx16(repeating: -87), high = Floatx16(repeating: 88)
    let x = x.replacing(with: low, where: x .< low).replacing(with: high, where: x .> high)
    let magic = Floatx16(repeating: 12_582_912)
    let t = magic.addingProduct(x, Floatx16(repeating: 1.442_695_04))
    let n = t - magic
    let r = x.addingProduct(n, Floatx16(repeating: -0.693_359_375)).addingProduct(n, Floatx16(repeating: 2.121_944_4e-4))
    var p = Floatx16(repeating: 1.398_199_95e-3).addingProduct(Floatx16(repeating: 1.987_569_15e-4), r)
    p = Floatx16(repeating: 8.333_451_9e-3).addingProduct(p, r)
    p = Floatx16(repeating: 4.166_579_59e-2).addingProduct(p, r)
    p = Floatx16(repeating: 1.666_666_55e-1).addingProduct(p, r)
    p = Floatx16(repeating: 5.000_000_12e-1).addingProduct(p, r)
    let y = r.addingProduct(p, r * r) + 1
    let bias = SIMD16<Int32>(repeating: Int32(bitPattern: Float(12_582_912).bitPattern) &- 127)
    let exponent = (unsafeBitCast(t, to: SIMD16<Int32>.self) &- bias) &<< 23
    return y * unsafeBitCast(exponent, to: Floatx16.self)
}

/// An activation of one vector, for generic code that must inline it (`AVX512Tile.activate`, `FusedActivation`).
protocol TileActivation {
    static func apply(_ x: Floatx16) -> Floatx16
}

/// Logistic on `fusedExponential`.
enum FusedLogistic: TileActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { 1 / (1 + fusedExponential(-x)) }
}

/// Swish (SiLU) on `fusedExponential`.
enum FusedSwish: TileActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { x / (1 + fusedExponential(-x)) }
}

/// Logistic and swish on `fusedExponential`, the other activations as `Activation` applies them (the Winograd
/// output transforms' activation).
enum FusedActivation: WideActivation {
    @_transparent
    static func apply(_ activation: Activation, _ x: WinogradTiles.Wide) -> WinogradTiles.Wide {
        switch activation {
        case .logistic: return FusedLogistic.apply(x)
        case .swish: return FusedSwish.apply(x)
        default: return activation(x)
        }
    }
}
