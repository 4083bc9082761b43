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
    if m == 6 { return avx2WinogradRowsInput6(source, pw, phase, target, planeStride, valid, buffer) }
    WinogradTiles.rowsInputEntry(m, source, pw, phase, target, planeStride, valid, buffer)
    #endif
}

/// `WinogradKernels.PadByPhase`.
public func avx2WinogradPadByPhase(_ m: Int, _ channel: UnsafePointer<Float>, _ height: Int, _ width: Int, _ first: Int,
                               _ count: Int, _ pw: Int, _ phase: Int, _ target: UnsafeMutablePointer<Float>) {
    #if arch(x86_64)
    if m == 6 { return avx2WinogradPadByPhase6(channel, height, width, first, count, pw, phase, target) }
    WinogradTiles.padByPhaseEntry(m, channel, height, width, first, count, pw, phase, target)
    #endif
}

/// `WinogradKernels.RowsOutput`.
public func avx2WinogradRowsOutput(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ bias: Float, _ code: Int,
                                 _ target: UnsafeMutablePointer<Float>, _ width: Int, _ rows: Int, _ count: Int,
                                 _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    if m == 6 { return avx2WinogradRowsOutput6(mm, planeStride, bias, code, target, width, rows, count, buffer) }
    WinogradTiles.rowsOutputEntry(m, mm, planeStride, bias, code, target, width, rows, count, buffer, FusedActivation.self)
    #endif
}

// F(6×6, 3×3)'s row transforms, each in a function of its own (reached from the entry points above for m = 6).
#if arch(x86_64)
@inline(never)
func avx2WinogradRowsInput6(_ source: UnsafePointer<Float>, _ pw: Int, _ phase: Int, _ target: UnsafeMutablePointer<Float>,
                             _ planeStride: Int, _ valid: Int, _ buffer: UnsafeMutableRawPointer) {
    WinogradTiles.rowsInput6(source: source, pw: pw, phase: phase, target: target, planeStride: planeStride, valid: valid,
                             buffer: buffer.assumingMemoryBound(to: WinogradTiles.Wide.self))
}

@inline(never)
func avx2WinogradPadByPhase6(_ channel: UnsafePointer<Float>, _ height: Int, _ width: Int, _ first: Int, _ count: Int,
                              _ pw: Int, _ phase: Int, _ target: UnsafeMutablePointer<Float>) {
    WinogradTiles.padByPhase(m: 6, channel: channel, height: height, width: width, first: first, count: count, pw: pw,
                             phase: phase, target: target)
}

@inline(never)
func avx2WinogradRowsOutput6(_ mm: UnsafePointer<Float>, _ planeStride: Int, _ bias: Float, _ code: Int,
                              _ target: UnsafeMutablePointer<Float>, _ width: Int, _ rows: Int, _ count: Int,
                              _ buffer: UnsafeMutableRawPointer) {
    WinogradTiles.rowsOutput6(mm: mm, planeStride: planeStride, bias: bias, activation: Activation(code: code),
                              FusedActivation.self, target: target, width: width, rows: rows, count: count,
                              buffer: buffer.assumingMemoryBound(to: WinogradTiles.Wide.self))
}
#endif

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

    /// Logistic and swish: their exponential's chain on an output row's eight vectors at once spills.
    @_transparent
    static func defers(_ activation: Activation) -> Bool {
        switch activation {
        case .logistic, .swish: return true
        default: return false
        }
    }

    /// The GEMM tile's pass (`AVX2Tile.activate`, four vectors at a time), the floats taken as rows of 16.
    @_transparent
    static func applyStored(_ activation: Activation, _ p: UnsafeMutablePointer<Float>, count: Int) {
        switch activation {
        case .logistic: AVX2Tile.activate(p, 16, count / 16, FusedLogistic.self)
        case .swish: AVX2Tile.activate(p, 16, count / 16, FusedSwish.self)
        default: break
        }
    }
}
