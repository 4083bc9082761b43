// The AVX2 int8 GEMM micro-kernel, for CPUs without VNNI. Compiled for haswell with the target's other kernels;
// its only entry points are the `avx2Int8…` functions, reached through `Int8Kernel` function pointers.
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

/// `Int8Kernel.WinogradOutput`: per row of tiles and output row, 8 tiles at a time, the exact sums of the left and
/// right outputs (`Aᵀ M A`: the rows s0 = m0 + m1 + m2 and s1 = m1 − m2 − m3, 4 columns each, then the same along the
/// columns, `>> 2`), compensated, scaled and biased into the output row's values in the map's order, then the row
/// through the activation and the store (`AVX2Int8Tile.finishRow`).
public func avx2Int8WinogradOutput(_ products: UnsafePointer<Int32>, _ layout: UnsafeRawPointer, _ first: Int, _ end: Int,
                                   _ filter: Int, _ epilogue: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    struct Body: Int8ActivationBody {
        let products: UnsafePointer<Int32>, l: Int8WinogradLayout, first: Int, end: Int, f: Int, e: Int8Epilogue
        let output: UnsafeMutableRawPointer

        @inline(__always)
        func callAsFunction<A: TileActivation>(_: A.Type) {
            let compensation = Int32x8(repeating: e.compensation[f])
            let multiplier = Floatx8(repeating: e.multipliers[f]), bias = Floatx8(repeating: e.biases[f])
            let (l, products, first) = (l, products + f * l.filterStride, first)
            // An output row's values: two per tile, 16 spare for a row's last group of 8 tiles.
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * l.tilesX + 16) { staged in
                let staged = staged.baseAddress!
                for ty in first / l.tilesX ... (end - 1) / l.tilesX {
                    let row = ty * l.tilesX
                    let (lower, upper) = (max(0, first - row), min(l.tilesX, end - row))
                    for i in 0..<2 where 2 * ty + i < l.height {
                        var tx0 = lower
                        while tx0 < upper {
                            let m = products + (row + tx0 - first)
                            func r(_ j: Int) -> Int32x8 {
                                func at(_ xi: Int) -> Int32x8 { UnsafeRawPointer(m + xi * l.productStride).loadUnaligned(as: Int32x8.self) }
                                return i == 0 ? at(j) &+ at(4 + j) &+ at(8 + j) : at(4 + j) &- at(8 + j) &- at(12 + j)
                            }
                            let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3))
                            let left = (r0 &+ r1 &+ r2) &>> 2, right = (r1 &- r2 &- r3) &>> 2
                            let a = toFloat(left &+ compensation) * multiplier + bias
                            let b = toFloat(right &+ compensation) * multiplier + bias
                            let at = staged + 2 * (tx0 - lower)
                            for k in 0..<8 { (at[2 * k], at[2 * k + 1]) = (a[k], b[k]) }
                            tx0 += 8
                        }
                        let x0 = 2 * lower
                        AVX2Int8Tile.finishRow(min(l.width, 2 * upper) - x0, staged, e, A.self,
                                               output + (f * l.height * l.width + (2 * ty + i) * l.width + x0) * e.outputBytes)
                    }
                }
            }
        }
    }
    let e = epilogue.load(as: Int8Epilogue.self)
    withInt8Activation(e.activation, Body(products: products, l: layout.load(as: Int8WinogradLayout.self), first: first, end: end,
                                          f: filter, e: e, output: output))
    #endif
}

/// `Â` of int8 Winograd F(4×4, 3×3) on six vectors (the rows `(6 4 4 1 1 0), (0 4 −4 2 −2 0), (0 4 4 4 4 0),
/// (0 4 −4 8 −8 24)`), in shifts and adds.
@_transparent
func winograd4OutputRows(_ r0: Int32x8, _ r1: Int32x8, _ r2: Int32x8, _ r3: Int32x8, _ r4: Int32x8, _ r5: Int32x8)
    -> (Int32x8, Int32x8, Int32x8, Int32x8) {
    let (four12, fourDifference12, sum34, difference34) = ((r1 &+ r2) &<< 2, (r1 &- r2) &<< 2, r3 &+ r4, r3 &- r4)
    return ((r0 &<< 2) &+ (r0 &<< 1) &+ four12 &+ sum34, fourDifference12 &+ (difference34 &<< 1), four12 &+ (sum34 &<< 2),
            fourDifference12 &+ (difference34 &<< 3) &+ (r5 &<< 4) &+ (r5 &<< 3))
}

/// The exact sum of an F(4×4, 3×3) output transform's `576·y` modulo 2³² (`· 9⁻¹ >> 6`), compensated, scaled and biased.
@_transparent
func winograd4Value(_ sum: Int32x8, _ inverse9: Int32x8, _ compensation: Int32x8, _ multiplier: Floatx8, _ bias: Floatx8) -> Floatx8 {
    toFloat(((sum &* inverse9) &>> 6) &+ compensation) * multiplier + bias
}

/// Four vectors' lanes interleaved: `(a₀ b₀ c₀ d₀ a₁ b₁ c₁ d₁), (a₂ … d₃), (a₄ … d₅), (a₆ … d₇)`.
@_transparent
func interleaved4(_ a: Floatx8, _ b: Floatx8, _ c: Floatx8, _ d: Floatx8) -> (Floatx8, Floatx8, Floatx8, Floatx8) {
    (Floatx8(a[0], b[0], c[0], d[0], a[1], b[1], c[1], d[1]), Floatx8(a[2], b[2], c[2], d[2], a[3], b[3], c[3], d[3]),
     Floatx8(a[4], b[4], c[4], d[4], a[5], b[5], c[5], d[5]), Floatx8(a[6], b[6], c[6], d[6], a[7], b[7], c[7], d[7]))
}

/// `Int8Kernel.Winograd4Output`: per row of tiles, 8 tiles at a time, the 16 exact sums of each tile (`Â M Âᵀ` down the
/// 6 rows of M, then along them, times 9⁻¹ modulo 2³², `>> 6`: `Int8WinogradGeometry`), compensated, scaled and biased
/// into the 4 output rows' values in the map's order, then each row through the activation and the store
/// (`AVX2Int8Tile.finishRow`).
public func avx2Int8Winograd4Output(_ products: UnsafePointer<Int32>, _ layout: UnsafeRawPointer, _ first: Int, _ end: Int,
                                    _ filter: Int, _ epilogue: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
    #if arch(x86_64)
    struct Body: Int8ActivationBody {
        let products: UnsafePointer<Int32>, l: Int8WinogradLayout, first: Int, end: Int, f: Int, e: Int8Epilogue
        let output: UnsafeMutableRawPointer

        @inline(__always)
        func callAsFunction<A: TileActivation>(_: A.Type) {
            let compensation = Int32x8(repeating: e.compensation[f])
            let multiplier = Floatx8(repeating: e.multipliers[f]), bias = Floatx8(repeating: e.biases[f])
            let inverse9 = Int32x8(repeating: 954_437_177)  // 9 · 954,437,177 = 2 · 2³² + 1
            let (l, products, first) = (l, products + f &* l.filterStride, first)
            // The 4 output rows' values: four per tile, 32 spare for a row's last group of 8 tiles.
            let rowFloats = 4 &* l.tilesX &+ 32
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 4 * rowFloats) { staged in
                let staged = staged.baseAddress!
                for ty in first / l.tilesX ... (end - 1) / l.tilesX {
                    let row = ty &* l.tilesX
                    let (lower, upper) = (max(0, first &- row), min(l.tilesX, end &- row))
                    var tx0 = lower
                    while tx0 < upper {
                        let m = UnsafeRawPointer(products + (row &+ tx0 &- first)), plane = 4 &* l.productStride
                        // Down the rows of M (ξ = 6i + j) for each column j: the 4 output rows' sums.
                        var columns = (Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(),
                                       Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(),
                                       Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8(), Int32x8())
                        withUnsafeMutableBytes(of: &columns) { columns in
                            let sums = columns.baseAddress!.assumingMemoryBound(to: Int32x8.self)
                            for j in 0..<6 {
                                func at(_ i: Int) -> Int32x8 { loadLanes(m + (6 &* i &+ j) &* plane) }
                                let y = winograd4OutputRows(at(0), at(1), at(2), at(3), at(4), at(5))
                                (sums[j], sums[6 &+ j], sums[12 &+ j], sums[18 &+ j]) = y
                            }
                            // Along each output row y: its 4 outputs of the 8 tiles, exact, compensated, scaled and biased,
                            // interleaved into the row's order.
                            for y in 0..<4 {
                                let s = sums + 6 &* y
                                let o = winograd4OutputRows(s[0], s[1], s[2], s[3], s[4], s[5])
                                let z = interleaved4(winograd4Value(o.0, inverse9, compensation, multiplier, bias),
                                                     winograd4Value(o.1, inverse9, compensation, multiplier, bias),
                                                     winograd4Value(o.2, inverse9, compensation, multiplier, bias),
                                                     winograd4Value(o.3, inverse9, compensation, multiplier, bias))
                                let at = UnsafeMutableRawPointer(staged + (y &* rowFloats &+ 4 &* (tx0 &- lower)))
                                storeLanes(z.0, at)
                                storeLanes(z.1, at + 32)
                                storeLanes(z.2, at + 64)
                                storeLanes(z.3, at + 96)
                            }
                        }
                        tx0 &+= 8
                    }
                    let x0 = 4 &* lower
                    for y in 0..<4 where 4 &* ty &+ y < l.height {
                        AVX2Int8Tile.finishRow(min(l.width, 4 &* upper) &- x0, staged + y &* rowFloats, e, A.self,
                                               output + (f &* l.height &* l.width &+ (4 &* ty &+ y) &* l.width &+ x0) &* e.outputBytes)
                    }
                }
            }
        }
    }
    let e = epilogue.load(as: Int8Epilogue.self)
    withInt8Activation(e.activation, Body(products: products, l: layout.load(as: Int8WinogradLayout.self), first: first, end: end,
                                          f: filter, e: e, output: output))
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
        /// The six rows' stores, the activation inlined.
        struct Stores: Int8ActivationBody {
            let c: UnsafeMutableRawPointer, rowBytes: Int, rows: Int, e: Int8Epilogue
            let sums: (Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8)

            @inline(__always)
            func callAsFunction<A: TileActivation>(_: A.Type) {
                let scalesAfter = e.scalesAfterActivation
                AVX2Int8Tile.store(c, 0, e, scalesAfter, A.self, sums.0, sums.1)
                if rows > 1 { AVX2Int8Tile.store(c + 1 * rowBytes, 1, e, scalesAfter, A.self, sums.2, sums.3) }
                if rows > 2 { AVX2Int8Tile.store(c + 2 * rowBytes, 2, e, scalesAfter, A.self, sums.4, sums.5) }
                if rows > 3 { AVX2Int8Tile.store(c + 3 * rowBytes, 3, e, scalesAfter, A.self, sums.6, sums.7) }
                if rows > 4 { AVX2Int8Tile.store(c + 4 * rowBytes, 4, e, scalesAfter, A.self, sums.8, sums.9) }
                if rows > 5 { AVX2Int8Tile.store(c + 5 * rowBytes, 5, e, scalesAfter, A.self, sums.10, sums.11) }
            }
        }
        withInt8Activation(e.activation, Stores(c: c, rowBytes: rowBytes, rows: rows, e: e,
                                                sums: (c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51)))
    }

    /// A row's 16 exact sums, as they are (`Int8Epilogue.sums`).
    @inline(__always)
    static func storeSums(_ p: UnsafeMutableRawPointer, _ v0: Int32x8, _ v1: Int32x8) {
        p.storeBytes(of: v0, as: Int32x8.self)
        p.storeBytes(of: v1, toByteOffset: 32, as: Int32x8.self)
    }

    /// Row `r` of the tile through the epilogue (`Int8Epilogue`), stored at `p`: 16 bytes or 16 floats.
    @inline(__always)
    static func store<A: TileActivation>(_ p: UnsafeMutableRawPointer, _ r: Int, _ e: Int8Epilogue, _ scalesAfter: Bool,
                                         _: A.Type, _ v0: Int32x8, _ v1: Int32x8) {
        let compensation = Int32x8(repeating: e.compensation[r])
        let multiplier = Floatx8(repeating: e.multipliers[r]), bias = Floatx8(repeating: e.biases[r])
        let f0 = A.apply(toFloat(v0 &+ compensation) * multiplier + bias), f1 = A.apply(toFloat(v1 &+ compensation) * multiplier + bias)
        finish(p, e, scalesAfter, f0)
        finish(p + 8 * e.outputBytes, e, scalesAfter, f1)
    }

    /// `count` values already compensated, scaled and biased through the activation and stored consecutively at `target`:
    /// 32 a step (four chains of the exponential side by side), then 8, then the rest (the missing lanes zero, not stored).
    @inline(__always)
    static func finishRow<A: TileActivation>(_ count: Int, _ source: UnsafePointer<Float>, _ e: Int8Epilogue, _: A.Type,
                                             _ target: UnsafeMutableRawPointer) {
        let (width, scalesAfter) = (e.outputBytes, e.scalesAfterActivation)
        func load(_ i: Int) -> Floatx8 { UnsafeRawPointer(source + i).loadUnaligned(as: Floatx8.self) }
        var i = 0
        while i + 32 <= count {
            let y = (A.apply(load(i)), A.apply(load(i + 8)), A.apply(load(i + 16)), A.apply(load(i + 24)))
            finish(target + i * width, e, scalesAfter, y.0)
            finish(target + (i + 8) * width, e, scalesAfter, y.1)
            finish(target + (i + 16) * width, e, scalesAfter, y.2)
            finish(target + (i + 24) * width, e, scalesAfter, y.3)
            i += 32
        }
        while i + 8 <= count {
            finish(target + i * width, e, scalesAfter, A.apply(load(i)))
            i += 8
        }
        guard i < count else { return }
        var x = Floatx8()
        for k in 0..<count - i { x[k] = source[i + k] }
        withUnsafeTemporaryAllocation(of: Floatx8.self, capacity: 1) { staged in
            let raw = UnsafeMutableRawPointer(staged.baseAddress!)
            finish(raw, e, scalesAfter, A.apply(x))
            (target + i * width).copyMemory(from: raw, byteCount: (count - i) * width)
        }
    }

    /// 8 activated values `f` stored at `p`: their u8 codes (`Int8Epilogue.code`'s operations) or the floats.
    @inline(__always)
    static func finish(_ p: UnsafeMutableRawPointer, _ e: Int8Epilogue, _ scalesAfter: Bool, _ f: Floatx8) {
        guard e.bytes else { return p.storeBytes(of: f, as: Floatx8.self) }
        let scaled = scalesAfter ? f * Floatx8(repeating: e.outputReciprocal) : f
        p.storeBytes(of: lowBytes(clampedRoundedCodes(scaled + Floatx8(repeating: e.zeroPoint))), as: SIMD8<UInt8>.self)
    }
}

/// Work generic over the activation, run by `withInt8Activation` with the activation's type.
protocol Int8ActivationBody {
    func callAsFunction<A: TileActivation>(_: A.Type)
}

/// Runs `body` with the `TileActivation` of activation `code`, the operations of `Int8Epilogue.activate` (so the same
/// bits: logistic and swish on the fused-multiply-add exponential): a type, not a closure, so the exponential is
/// inlined (a closure stayed a call per vector, its chain of dependent operations one at a time), and defined in this
/// target: code compiled for this ISA stays named in this module (a specialization of a generic from YOLOKernels
/// would be emitted with shared linkage, and check-isa.sh rejects it).
@inline(__always)
func withInt8Activation<Body: Int8ActivationBody>(_ code: Int, _ body: Body) {
    switch Activation(code: code) {
    case .linear: body(Int8Linear.self)
    case .leaky: body(Int8Leaky.self)
    case .relu: body(Int8ReLU.self)
    case .logistic: body(FusedLogistic.self)
    case .swish: body(FusedSwish.self)
    case .mish: body(Int8Mish.self)
    }
}

enum Int8Linear: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { x }
}

enum Int8Leaky: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { Activation.positiveOr(x, x * 0.1) }
}

enum Int8ReLU: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { Activation.positiveOr(x, Floatx8()) }
}

/// Mish lane by lane, `Activation`'s scalar form.
enum Int8Mish: TileActivation {
    @_transparent static func apply(_ x: Floatx8) -> Floatx8 { Activation.scalarLanes(.mish, x) }
}
