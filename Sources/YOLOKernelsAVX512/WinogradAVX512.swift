// The AVX-512 family's Winograd tile transforms: `WinogradTiles` compiled for this target's ISA, reached only
// through the non-generic entry points below (`WinogradKernels` function pointers), after `KernelFamily` has
// checked the CPU. Each entry point fixes m (2 or 4) as a constant, so the transforms unroll.
import YOLOKernels

/// `WinogradKernels.RowsInput`.
public func avx512WinogradRowsInput(_ m: Int, _ source: UnsafePointer<Float>, _ pw: Int, _ phase: Int, _ target: UnsafeMutablePointer<Float>,
                                _ planeStride: Int, _ valid: Int, _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    let wide = buffer.assumingMemoryBound(to: WinogradTiles.Wide.self)
    if m == 4 {
        WinogradTiles.rowsInput(m: 4, source: source, pw: pw, phase: phase, target: target, planeStride: planeStride, valid: valid, buffer: wide)
    } else {
        WinogradTiles.rowsInput(m: 2, source: source, pw: pw, phase: phase, target: target, planeStride: planeStride, valid: valid, buffer: wide)
    }
    #endif
}

/// `WinogradKernels.RowsOutput`.
public func avx512WinogradRowsOutput(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ bias: Float, _ code: Int,
                                 _ target: UnsafeMutablePointer<Float>, _ width: Int, _ rows: Int, _ count: Int,
                                 _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    let wide = buffer.assumingMemoryBound(to: WinogradTiles.Wide.self)
    let activation = Activation(code: code)
    if m == 4 {
        WinogradTiles.rowsOutput(m: 4, mm: mm, planeStride: planeStride, bias: bias, activation: activation, target: target,
                                 width: width, rows: rows, count: count, buffer: wide)
    } else {
        WinogradTiles.rowsOutput(m: 2, mm: mm, planeStride: planeStride, bias: bias, activation: activation, target: target,
                                 width: width, rows: rows, count: count, buffer: wide)
    }
    #endif
}

/// `WinogradKernels.TilesInput`.
public func avx512WinogradTilesInput(_ m: Int, _ plane: UnsafePointer<Float>, _ pw: Int, _ offsets: UnsafePointer<Int>,
                                 _ count: Int, _ v: UnsafeMutablePointer<Float>, _ planeStride: Int,
                                 _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    let lanes = buffer.assumingMemoryBound(to: WinogradTiles.Lane.self)
    if m == 4 {
        WinogradTiles.tilesInput(m: 4, plane: plane, pw: pw, offsets: offsets, count: count, v: v, planeStride: planeStride,
                                 buffer: lanes)
    } else {
        WinogradTiles.tilesInput(m: 2, plane: plane, pw: pw, offsets: offsets, count: count, v: v, planeStride: planeStride,
                                 buffer: lanes)
    }
    #endif
}

/// `WinogradKernels.FiltersOutput`.
public func avx512WinogradFiltersOutput(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ biases: UnsafePointer<Float>,
                                    _ count: Int, _ code: Int, _ origin: UnsafeMutablePointer<Float>, _ plane: Int,
                                    _ width: Int, _ rows: Int, _ columns: Int, _ buffer: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    let wide = buffer.assumingMemoryBound(to: WinogradTiles.Wide.self)
    let activation = Activation(code: code)
    if m == 4 {
        WinogradTiles.filtersOutput(m: 4, mm: mm, planeStride: planeStride, biases: biases, count: count, activation: activation,
                                    origin: origin, plane: plane, width: width, rows: rows, columns: columns, buffer: wide)
    } else {
        WinogradTiles.filtersOutput(m: 2, mm: mm, planeStride: planeStride, biases: biases, count: count, activation: activation,
                                    origin: origin, plane: plane, width: width, rows: rows, columns: columns, buffer: wide)
    }
    #endif
}
