// The AVX2 int8 GEMM micro-kernel, for CPUs without VNNI. Compiled for haswell with the target's other kernels;
// its only entry points are `avx2Int8Sweep` and `avx2Int8PackB`, reached through `Int8Kernel` function pointers.
//
// Saturation: `vpmaddubsw` (u8 × s8, pairs summed into s16) saturates when both products of a pair are large
// (255 · 127 · 2 > 32767). oneDNN halves the weights on such CPUs (7-bit weights: results differ from VNNI's);
// this kernel does what ncnn's x86 int8 GEMM does instead: both operands widened to s16 when packed, products
// summed in pairs by `vpmaddwd` (s16 × s16 → s32, exact). Every s8 weight keeps its 8 bits, so the sums equal
// VNNI's bit for bit, and the multiply ports do the same work per product: `vpmaddubsw` needs a `vpmaddwd` by
// ones after it to reach s32, two multiplies per 32 products either way. The cost is B twice as wide.
import Swift
import YOLOKernels

/// `Int8Kernel.Sweep` for 6 × 16 tiles: per step (2 values of k), 16 columns of B (2 vectors of 8 lanes, each
/// lane one column's pair of s16) and one 32-bit broadcast of A per row (its pair of s16 weights), 12
/// `vpmaddwd` + `vpaddd` into 12 accumulators (8 × s32 each).
public func avx2Int8Sweep(_ steps: Int, _ a: UnsafeRawPointer, _ aStride: Int, _ b: UnsafeRawPointer,
                          _ c: UnsafeMutableRawPointer, _ ldc: Int, _ rows: Int, _ epilogue: UnsafeRawPointer) {
    #if arch(x86_64)
    let e = epilogue.load(as: Int8Epilogue.self)
    var (panel, first) = (a, 0)
    while first < rows {
        AVX2Int8Tile.tile(steps, panel, b, c + first * ldc * e.outputBytes, ldc, min(6, rows - first), e.rows(from: first))
        panel += aStride
        first += 6
    }
    #endif
}

/// `Int8Kernel.PackB` for 16-column blocks of s16 pairs: `[k/2][16][2]` s16, the bytes zero-extended.
public func avx2Int8PackB(_ k: Int, _ source: UnsafePointer<UInt8>, _ ld: Int, _ columns: Int,
                          _ target: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    var out = target
    for first in Swift.stride(from: 0, to: (k + 3) / 4 * 4, by: 2) {
        if columns == 16 && first + 2 <= k {
            let r0 = UnsafeRawPointer(source + first * ld), r1 = r0 + ld
            let q0 = widened(r0.loadUnaligned(as: SIMD16<UInt8>.self))
            let q1 = widened(r1.loadUnaligned(as: SIMD16<UInt8>.self))
            out.storeBytes(of: interleavedPairs(q0, q1), as: SIMD16<UInt32>.self)
        } else {
            let values = out.assumingMemoryBound(to: UInt16.self)
            for j in 0..<16 {
                for t in 0..<2 {
                    values[2 * j + t] = j < columns && first + t < k ? UInt16(source[(first + t) * ld + j]) : 0
                }
            }
        }
        out += 64
    }
    #endif
}

/// `Int8Kernel.Quantize`, 8 values per step.
public func avx2Int8Quantize(_ count: Int, _ source: UnsafePointer<Float>, _ reciprocal: Float, _ zeroPoint: Float,
                             _ target: UnsafeMutablePointer<UInt8>) {
    #if arch(x86_64)
    let (r, z) = (Floatx8(repeating: reciprocal), Floatx8(repeating: zeroPoint))
    var i = 0
    while i + 8 <= count {
        let x = UnsafeRawPointer(source + i).loadUnaligned(as: Floatx8.self)
        UnsafeMutableRawPointer(target + i).storeBytes(of: lowBytes(clampedRoundedCodes(x * r + z)), as: SIMD8<UInt8>.self)
        i += 8
    }
    while i < count {
        target[i] = Int8Epilogue.code(source[i] * reciprocal, zeroPoint: zeroPoint)
        i += 1
    }
    #endif
}

enum AVX2Int8Tile {
    /// One 6 × 16 tile (`rows` of its rows stored; A's panel is zero-padded, so all six are multiplied).
    @inline(never)
    static func tile(_ steps: Int, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeMutableRawPointer,
                     _ ldc: Int, _ rows: Int, _ e: Int8Epilogue) {
        var c00 = Int32x8(), c01 = Int32x8(), c10 = Int32x8(), c11 = Int32x8(), c20 = Int32x8(), c21 = Int32x8()
        var c30 = Int32x8(), c31 = Int32x8(), c40 = Int32x8(), c41 = Int32x8(), c50 = Int32x8(), c51 = Int32x8()
        var (ap, bp) = (a, b)
        for _ in 0..<steps {
            let b0 = bp.loadUnaligned(as: Int16x16.self)
            let b1 = bp.loadUnaligned(fromByteOffset: 32, as: Int16x16.self)
            var w = broadcastPair(ap.loadUnaligned(as: Int32.self))
            c00 &+= multiplyAddPairs(b0, w); c01 &+= multiplyAddPairs(b1, w)
            w = broadcastPair(ap.loadUnaligned(fromByteOffset: 4, as: Int32.self))
            c10 &+= multiplyAddPairs(b0, w); c11 &+= multiplyAddPairs(b1, w)
            w = broadcastPair(ap.loadUnaligned(fromByteOffset: 8, as: Int32.self))
            c20 &+= multiplyAddPairs(b0, w); c21 &+= multiplyAddPairs(b1, w)
            w = broadcastPair(ap.loadUnaligned(fromByteOffset: 12, as: Int32.self))
            c30 &+= multiplyAddPairs(b0, w); c31 &+= multiplyAddPairs(b1, w)
            w = broadcastPair(ap.loadUnaligned(fromByteOffset: 16, as: Int32.self))
            c40 &+= multiplyAddPairs(b0, w); c41 &+= multiplyAddPairs(b1, w)
            w = broadcastPair(ap.loadUnaligned(fromByteOffset: 20, as: Int32.self))
            c50 &+= multiplyAddPairs(b0, w); c51 &+= multiplyAddPairs(b1, w)
            ap += 24
            bp += 64
        }
        let rowBytes = ldc * e.outputBytes
        if e.sums {
            storeSums(c, c00, c01)
            if rows > 1 { storeSums(c + 1 * rowBytes, c10, c11) }
            if rows > 2 { storeSums(c + 2 * rowBytes, c20, c21) }
            if rows > 3 { storeSums(c + 3 * rowBytes, c30, c31) }
            if rows > 4 { storeSums(c + 4 * rowBytes, c40, c41) }
            if rows > 5 { storeSums(c + 5 * rowBytes, c50, c51) }
            return
        }
        let scalesAfter = e.scalesAfterActivation
        withInt8Activation(e.activation) { activation in
            store(c, 0, e, scalesAfter, activation, c00, c01)
            if rows > 1 { store(c + 1 * rowBytes, 1, e, scalesAfter, activation, c10, c11) }
            if rows > 2 { store(c + 2 * rowBytes, 2, e, scalesAfter, activation, c20, c21) }
            if rows > 3 { store(c + 3 * rowBytes, 3, e, scalesAfter, activation, c30, c31) }
            if rows > 4 { store(c + 4 * rowBytes, 4, e, scalesAfter, activation, c40, c41) }
            if rows > 5 { store(c + 5 * rowBytes, 5, e, scalesAfter, activation, c50, c51) }
        }
    }

    /// A row's 16 exact sums, as they are (`Int8Epilogue.sums`).
    @inline(__always)
    static func storeSums(_ p: UnsafeMutableRawPointer, _ v0: Int32x8, _ v1: Int32x8) {
        p.storeBytes(of: v0, as: Int32x8.self)
        p.storeBytes(of: v1, toByteOffset: 32, as: Int32x8.self)
    }

    /// Row `r` of the tile through the epilogue (`Int8Epilogue`), stored at `p`: 16 bytes or 16 floats.
    @inline(__always)
    static func store(_ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue, _ scalesAfter: Bool,
                      _ activation: (Floatx8) -> Floatx8, _ v0: Int32x8, _ v1: Int32x8) {
        let compensation = Int32x8(repeating: e.compensation[r])
        let multiplier = Floatx8(repeating: e.multipliers[r]), bias = Floatx8(repeating: e.biases[r])
        var f0 = activation(toFloat(v0 &+ compensation) * multiplier + bias)
        var f1 = activation(toFloat(v1 &+ compensation) * multiplier + bias)
        if e.bytes {
            if scalesAfter {
                let reciprocal = Floatx8(repeating: e.outputReciprocal)
                (f0, f1) = (f0 * reciprocal, f1 * reciprocal)
            }
            let zero = Floatx8(repeating: e.zeroPoint)
            p.storeBytes(of: lowBytes(clampedRoundedCodes(f0 + zero)), as: SIMD8<UInt8>.self)
            p.storeBytes(of: lowBytes(clampedRoundedCodes(f1 + zero)), toByteOffset: 8, as: SIMD8<UInt8>.self)
        } else {
            p.storeBytes(of: f0, as: Floatx8.self)
            p.storeBytes(of: f1, toByteOffset: 32, as: Floatx8.self)
        }
    }
}

/// `Activation.withVectorFunction` for this kernel's vectors, with the operations of `Int8Epilogue.activate` (so the
/// same bits: logistic and swish on the fused-multiply-add exponential), its closures defined in this target: code
/// compiled for this ISA stays named in this module (a specialization of the generic one would be emitted with
/// shared linkage, and check-isa.sh rejects it).
@inline(__always)
func withInt8Activation(_ code: Int, _ body: ((Floatx8) -> Floatx8) -> Void) {
    let activation = Activation(code: code)
    switch activation {
    case .linear: body { $0 }
    case .leaky: body { Activation.positiveOr($0, $0 * 0.1) }
    case .relu: body { Activation.positiveOr($0, Floatx8()) }
    case .logistic: body { fusedLogistic($0) }
    case .swish: body { fusedSwish($0) }
    case .mish: body { Activation.scalarLanes(activation, $0) }
    }
}
