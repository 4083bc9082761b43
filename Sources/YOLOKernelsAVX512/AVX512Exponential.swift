// Logistic and swish on 16 lanes with fused multiply-adds, for this target's tile and Winograd output transforms
// (the AVX2 family's `fusedExponential` on 16 lanes). Transparent: inlined into this target's kernels, never
// called from elsewhere.
import YOLOKernels

typealias Floatx16 = SIMD16<Float>

/// e^x on 16 lanes with fused multiply-adds (`FusedExponential.lanes`, compiled here for this target).
@_transparent
func fusedExponential(_ x: Floatx16) -> Floatx16 { FusedExponential.lanes(x) }

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
