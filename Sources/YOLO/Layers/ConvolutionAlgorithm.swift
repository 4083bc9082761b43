/// How a `Convolution` computes its output.
///
/// All algorithms give the same result up to float rounding; Winograd's rounding error is larger
/// (see `Convolution+Winograd.swift`). `.auto` lets the planner pick per layer (`ConvolutionPlanner`).
public enum ConvolutionAlgorithm: String, Sendable, CaseIterable {
    /// Winograd for 3×3 stride-1 convolutions with enough channels (F(2×2) on small maps, F(4×4) on
    /// larger ones), GEMM otherwise: see `ConvolutionPlanner.winogradTile`.
    case auto
    /// The plain path: im2col unfolding (skipped for 1×1 stride-1 unpadded) and one GEMM; int8 layers too (no
    /// direct or Winograd path). `winograd2` and `winograd4` also choose the tile of an int8 layer that runs exact
    /// integer Winograd (`ConvolutionPlanner.int8WinogradTile`); otherwise int8 layers follow the planner's rules.
    case im2col
    /// Winograd F(2×2, 3×3): 4×4 input tiles, 2.25× fewer multiplications, small rounding error.
    case winograd2
    /// Winograd F(4×4, 3×3): 6×6 input tiles, 4× fewer multiplications, larger rounding error.
    case winograd4
    /// Winograd F(6×6, 3×3): 8×8 input tiles, 5.06× fewer multiplications, the largest rounding error. Only
    /// with a kernel family's row transforms (`KernelFamily.FastPaths.winogradRows`) on maps at least
    /// `ConvolutionPlanner.rowTilesMinimum` tiles wide; elsewhere F(4×4) runs instead. Never chosen by `.auto`
    /// (docs/performance.md says why).
    case winograd6

    /// The output tile edge `m` of a Winograd algorithm, nil for the GEMM path.
    var winogradTile: Int? {
        switch self {
        case .winograd2: return 2
        case .winograd4: return 4
        case .winograd6: return 6
        case .auto, .im2col: return nil
        }
    }
}
