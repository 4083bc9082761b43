// The AVX2 family's Winograd tile transforms: `WinogradTiles` compiled for this target's ISA, reached only
// through the non-generic entry points below (`WinogradKernels` function pointers), after `KernelFamily` has
// checked the CPU. Each calls the one body `WinogradTiles` has for it (which fixes m as a constant).
import Swift
import YOLOKernels

/// `WinogradKernels.RowsInput`.
public func avx2WinogradRowsInput(_ m: Int, _ source: UnsafePointer<Float>, _ pw: Int, _ phase: Int,
                                _ target: UnsafeMutablePointer<Float>, _ planeStride: Int, _ valid: Int,
                                _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    WinogradTiles.rowsInputEntry(m, source, pw, phase, target, planeStride, valid, buffer)
    #endif
}

/// `WinogradKernels.PadByPhase`.
public func avx2WinogradPadByPhase(_ m: Int, _ channel: UnsafePointer<Float>, _ height: Int, _ width: Int, _ first: Int,
                               _ count: Int, _ pw: Int, _ phase: Int, _ target: UnsafeMutablePointer<Float>) {
    #if arch(x86_64)
    WinogradTiles.padByPhaseEntry(m, channel, height, width, first, count, pw, phase, target)
    #endif
}

/// `WinogradKernels.RowsOutput`.
public func avx2WinogradRowsOutput(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ bias: Float, _ code: Int,
                                 _ target: UnsafeMutablePointer<Float>, _ width: Int, _ rows: Int, _ count: Int,
                                 _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    WinogradTiles.rowsOutputEntry(m, mm, planeStride, bias, code, target, width, rows, count, buffer, FusedActivation.self)
    #endif
}

/// `WinogradKernels.TilesInput`.
public func avx2WinogradTilesInput(_ m: Int, _ plane: UnsafePointer<Float>, _ pw: Int, _ offsets: UnsafePointer<Int>,
                                 _ count: Int, _ v: UnsafeMutablePointer<Float>, _ planeStride: Int,
                                 _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    WinogradTiles.tilesInputEntry(m, plane, pw, offsets, count, v, planeStride, buffer)
    #endif
}

/// `WinogradKernels.FiltersOutput`.
public func avx2WinogradFiltersOutput(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ biases: UnsafePointer<Float>,
                                    _ count: Int, _ code: Int, _ origin: UnsafeMutablePointer<Float>, _ plane: Int,
                                    _ width: Int, _ rows: Int, _ columns: Int, _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    WinogradTiles.filtersOutputEntry(m, mm, planeStride, biases, count, code, origin, plane, width, rows, columns, buffer,
                                     FusedActivation.self)
    #endif
}

/// Logistic and swish on `fusedOnePlusExpNegated` (two 8-lane halves), the other activations as `Activation` applies them.
enum FusedActivation: WideActivation {
    @_transparent
    static func apply(_ activation: Activation, _ x: WinogradTiles.Wide) -> WinogradTiles.Wide {
        // The halves by bit casts: `lowHalf`/`highHalf` are generic accessors, specialized with shared linkage.
        let halves = unsafeBitCast(x, to: (Floatx8, Floatx8).self)
        switch activation {
        case .logistic: return unsafeBitCast((fusedLogistic(halves.0), fusedLogistic(halves.1)), to: WinogradTiles.Wide.self)
        case .swish: return unsafeBitCast((fusedSwish(halves.0), fusedSwish(halves.1)), to: WinogradTiles.Wide.self)
        default: return activation(x)
        }
    }
}
