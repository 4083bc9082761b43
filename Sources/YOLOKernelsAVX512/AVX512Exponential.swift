// Logistic and swish on 16 lanes with fused multiply-adds (`FusedExponential`), for this target's tile and Winograd
// output transforms. Transparent: inlined into this target's kernels, never called from elsewhere.
import YOLOKernels

typealias Floatx16 = SIMD16<Float>

/// An activation of one vector, for generic code that must inline it (`AVX512Tile.activate`, `FusedActivation`).
protocol TileActivation {
    static func apply(_ x: Floatx16) -> Floatx16
}

/// `FusedExponential.logistic` as a `TileActivation`.
enum FusedLogistic: TileActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { FusedExponential.logistic(x) }
}

/// `FusedExponential.swish` (SiLU) as a `TileActivation`.
enum FusedSwish: TileActivation {
    @_transparent static func apply(_ x: Floatx16) -> Floatx16 { FusedExponential.swish(x) }
}

/// Logistic and swish on `FusedExponential`, the other activations as `Activation` applies them (the Winograd
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
