/// The Winograd F(m×m, 3×3) tile transforms (m = 2 or 4; m = 6 for rows of tiles) of the fast paths, written once here and
/// compiled into each ISA kernel family (`YOLOKernelsAVX2`, `YOLOKernelsAVX512`) through that family's
/// `WinogradKernels` entry points. Everything here is inlined into those entry points: the engine's
/// own module is compiled for the baseline ISA (SSE2), where these vector loops would run on 128-bit
/// registers with spills.
///
/// Interpolation points 0, ±1 (m = 2); 0, ±1, ±2 and ∞ (m = 4); 0, ±1, ±2, ±½ and ∞ (m = 6): input tile
/// `Bᵀ d B` (α = m + 2), output tile `Aᵀ M A`. The matrices themselves (and the filter transform) live with the engine
/// (`WinogradTransform`); these are the same 1-D transforms on vectors whose lanes are independent
/// tiles or filters.
public enum WinogradTiles {
    public typealias Wide = SIMD16<Float>
    public typealias Lane = SIMD8<Float>

    // MARK: - 1-D transforms

    /// Applies `Bᵀ` to the α vectors `d[0], d[stride], ...`, writing α vectors to `r[0], r[rStride], ...`
    /// (`inputTransform` on vectors in memory).
    @inlinable @inline(__always)
    public static func inputColumn<V: SIMD>(m: Int, _ d: UnsafePointer<V>, _ stride: Int,
                                            _ r: UnsafeMutablePointer<V>, _ rStride: Int) where V.Scalar == Float {
        let t = inputTransform(m: m, d[0], d[stride], d[2 * stride], d[3 * stride],
                               m == 4 ? d[4 * stride] : V(), m == 4 ? d[5 * stride] : V())
        r[0] = t.0
        r[rStride] = t.1
        r[2 * rStride] = t.2
        r[3 * rStride] = t.3
        if m == 4 {
            r[4 * rStride] = t.4
            r[5 * rStride] = t.5
        }
    }

    /// `Bᵀ d B` in place for the α×α values at `buffer[0 ..< α²]` (row-major, lanes = independent tiles),
    /// using `buffer[α² ..< 2α²]` as scratch.
    @inlinable @inline(__always)
    public static func inputTile<V: SIMD>(m: Int, _ buffer: UnsafeMutablePointer<V>) where V.Scalar == Float {
        let alpha = m + 2
        let (tile, temp) = (buffer, buffer + alpha * alpha)
        for j in 0..<alpha { inputColumn(m: m, UnsafePointer(tile + j), alpha, temp + j, alpha) }
        for i in 0..<alpha { inputColumn(m: m, UnsafePointer(temp + i * alpha), 1, tile + i * alpha, 1) }
    }

    /// Stores the first α (= m + 2) of the six vectors `r` at `o[0 ..< α]`.
    @inlinable @inline(__always)
    public static func put<V: SIMD>(m: Int, _ r: (V, V, V, V, V, V), into o: UnsafeMutablePointer<V>)
        where V.Scalar == Float {
        o[0] = r.0
        o[1] = r.1
        o[2] = r.2
        o[3] = r.3
        if m == 4 {
            o[4] = r.4
            o[5] = r.5
        }
    }

    /// Applies `Aᵀ` to the α vectors `s[0], s[stride], ...`, writing m vectors to `o[0], o[oStride], ...`
    /// (`outputTransform` on vectors in memory).
    @inlinable @inline(__always)
    public static func outputColumn<V: SIMD>(m: Int, _ s: UnsafePointer<V>, _ stride: Int,
                                             _ o: UnsafeMutablePointer<V>, _ oStride: Int) where V.Scalar == Float {
        let t = outputTransform(m: m, s[0], s[stride], s[2 * stride], s[3 * stride],
                                m == 4 ? s[4 * stride] : V(), m == 4 ? s[5 * stride] : V())
        o[0] = t.0
        o[oStride] = t.1
        if m == 4 {
            o[2 * oStride] = t.2
            o[3 * oStride] = t.3
        }
    }

    /// `Bᵀ` on one column of values in registers: d0 … d5 (m = 4) or d0 … d3 (m = 2: d4 and d5 are
    /// ignored, results 4 and 5 are zero). The one place the input transform's arithmetic is written.
    @inlinable @inline(__always)
    public static func inputTransform<V: SIMD>(m: Int, _ d0: V, _ d1: V, _ d2: V, _ d3: V, _ d4: V, _ d5: V)
        -> (V, V, V, V, V, V) where V.Scalar == Float {
        if m == 2 { return (d0 - d2, d1 + d2, d2 - d1, d1 - d3, V(), V()) }
        let a = d4 - 4 * d2, b = d3 - 4 * d1
        let c = d4 - d2, e = 2 * (d3 - d1)
        return (4 * d0 - 5 * d2 + d4, a + b, a - b, c + e, c - e, 4 * d1 - 5 * d3 + d5)
    }

    /// `Aᵀ` on one column of values in registers: s0 … s5 (m = 4) or s0 … s3 (m = 2: results 2 and 3
    /// are zero). The one place the output transform's arithmetic is written.
    @inlinable @inline(__always)
    public static func outputTransform<V: SIMD>(m: Int, _ s0: V, _ s1: V, _ s2: V, _ s3: V, _ s4: V, _ s5: V)
        -> (V, V, V, V) where V.Scalar == Float {
        if m == 2 { return (s0 + s1 + s2, s1 - s2 - s3, V(), V()) }
        let p12 = s1 + s2, m12 = s1 - s2, p34 = s3 + s4, m34 = s3 - s4
        return (s0 + p12 + p34, m12 + 2 * m34, p12 + 4 * p34, m12 + 8 * m34 + s5)
    }

    /// `Aᵀ M` for the α columns of M whose value ξ = i·α + j is `value(ξ)`: leaves the m×α result at
    /// `temp` (row-major).
    @inlinable @inline(__always)
    public static func outputRows<V: SIMD>(m: Int, _ value: (Int) -> V, into temp: UnsafeMutablePointer<V>)
        where V.Scalar == Float {
        let alpha = m + 2
        for j in 0..<alpha {
            let o = outputTransform(m: m, value(j), value(alpha + j), value(2 * alpha + j), value(3 * alpha + j),
                                    m == 4 ? value(4 * alpha + j) : V(), m == 4 ? value(5 * alpha + j) : V())
            temp[j] = o.0
            temp[alpha + j] = o.1
            if m == 4 {
                temp[2 * alpha + j] = o.2
                temp[3 * alpha + j] = o.3
            }
        }
    }

    /// Row `i` of the output tile from `outputRows`' result: `Aᵀ` along it, plus `bias`, activated by `L`.
    @_transparent
    public static func outputRow<L: WideActivation>(m: Int, _ i: Int, _ temp: UnsafePointer<Wide>, bias: Wide,
                                                    activation: Activation, _ lanes: L.Type) -> (Wide, Wide, Wide, Wide) {
        let t = temp + i * (m + 2)
        let y = outputTransform(m: m, t[0], t[1], t[2], t[3], m == 4 ? t[4] : Wide(), m == 4 ? t[5] : Wide())
        return (L.apply(activation, y.0 + bias), L.apply(activation, y.1 + bias), L.apply(activation, y.2 + bias),
                L.apply(activation, y.3 + bias))
    }

    /// Loads the α² vectors of one group of tiles or filters from M (`p` at ξ = 0, planes `stride`
    /// floats apart) into `buffer[0 ..< α²]`.
    @inlinable @inline(__always)
    public static func loadTile<V: SIMD>(m: Int, _ p: UnsafePointer<Float>, stride: Int, into buffer: UnsafeMutablePointer<V>)
        where V.Scalar == Float {
        for xi in 0..<((m + 2) * (m + 2)) { buffer[xi] = UnsafeRawPointer(p + xi * stride).loadUnaligned(as: V.self) }
    }

    /// `Aᵀ M A` for the α×α values at `buffer[0 ..< α²]` (row-major, lanes = independent tiles or
    /// filters), using `buffer[α² ..< 2α²]` as scratch; leaves the m×m result at `buffer[0 ..< m²]`.
    @inlinable @inline(__always)
    public static func outputTile<V: SIMD>(m: Int, _ buffer: UnsafeMutablePointer<V>) where V.Scalar == Float {
        let alpha = m + 2
        let temp = buffer + alpha * alpha   // Aᵀ M: m×α
        for j in 0..<alpha { outputColumn(m: m, buffer + j, alpha, temp + j, alpha) }
        for i in 0..<m { outputColumn(m: m, temp + i * alpha, 1, buffer + i * m, 1) }
    }

    // MARK: - Rows of 16 tiles (the engine's `rowVectorized` plans)

    /// `Bᵀ d B` for 16 horizontally adjacent tiles of one channel. The padded input's rows (`pw` floats
    /// apart) are stored by phase: cell x at `(x mod m)·phase + x / m`; `source` is the first tile row's
    /// cell for the group's first tile in phase 0, so column j of the 16 tiles is the 16 floats at
    /// `source + (j mod m)·phase + j / m`. Value ξ of tile `t` goes to `target[ξ · planeStride + t]`
    /// for `t < valid`. `buffer`: 2α² vectors.
    @inlinable @inline(__always)
    public static func rowsInput(m: Int, source: UnsafePointer<Float>, pw: Int, phase: Int, target: UnsafeMutablePointer<Float>,
                                 planeStride: Int, valid: Int, buffer: UnsafeMutablePointer<Wide>) {
        let alpha = m + 2
        let rows = buffer      // d B, row by row (α² vectors)
        for i in 0..<alpha {
            let row = source + i * pw
            @inline(__always) func load(_ j: Int) -> Wide {
                UnsafeRawPointer(row + (j % m) * phase + j / m).loadUnaligned(as: Wide.self)
            }
            put(m: m, inputTransform(m: m, load(0), load(1), load(2), load(3), m == 4 ? load(4) : Wide(),
                                     m == 4 ? load(5) : Wide()), into: rows + i * alpha)
        }
        // Bᵀ along each column j gives V's values ξ = l·α + j, stored as they come.
        for j in 0..<alpha {
            let c = rows + j
            let r = inputTransform(m: m, c[0], c[alpha], c[2 * alpha], c[3 * alpha],
                                   m == 4 ? c[4 * alpha] : Wide(), m == 4 ? c[5 * alpha] : Wide())
            store(r.0, to: target + j * planeStride, count: valid)
            store(r.1, to: target + (alpha + j) * planeStride, count: valid)
            store(r.2, to: target + (2 * alpha + j) * planeStride, count: valid)
            store(r.3, to: target + (3 * alpha + j) * planeStride, count: valid)
            if m == 4 {
                store(r.4, to: target + (4 * alpha + j) * planeStride, count: valid)
                store(r.5, to: target + (5 * alpha + j) * planeStride, count: valid)
            }
        }
    }

    /// `Aᵀ M A` plus `bias` and the activation for 16 horizontally adjacent tiles of one filter
    /// (`mm` at the first tile in M, planes `planeStride` apart), written to the output as `rows`
    /// runs of `count` floats (`target` at the first run, runs `width` apart). Every run but the last is
    /// stored whole (16·m floats, one vector store) even when `count` is less: the caller writes the floats
    /// past a run's end, at the start of the next output row, after this call. `buffer`: 2α² + 4 vectors.
    @_transparent
    public static func rowsOutput<L: WideActivation>(m: Int, mm: UnsafePointer<Float>, planeStride: Int, bias: Float,
                                                     activation: Activation, _ lanes: L.Type, target: UnsafeMutablePointer<Float>,
                                                     width: Int, rows: Int, count: Int, buffer: UnsafeMutablePointer<Wide>) {
        let temp = buffer
        outputRows(m: m, { UnsafeRawPointer(mm + $0 * planeStride).loadUnaligned(as: Wide.self) }, into: temp)
        let biasVector = Wide(repeating: bias)
        let full = count == 16 * m
        let run = UnsafeMutableRawPointer(buffer + 2 * (m + 2) * (m + 2)).assumingMemoryBound(to: Float.self)
        let deferred = L.defers(activation)
        let inRegisters = deferred ? Activation.linear : activation
        for i in 0..<rows {
            let y = outputRow(m: m, i, UnsafePointer(temp), bias: biasVector, activation: inRegisters, lanes)
            let rowTarget = target + i * width
            let whole = full || i < rows - 1
            let raw = UnsafeMutableRawPointer(whole ? rowTarget : run)
            if m == 4 {
                storeInterleaved(y, to: raw)
            } else {
                raw.storeBytes(of: zip(y.0, y.1), as: SIMD32<Float>.self)
            }
            if deferred { L.applyStored(activation, raw.assumingMemoryBound(to: Float.self), count: 16 * m) }
            if !whole { rowTarget.update(from: run, count: count) }
        }
    }

    /// Stores the 64 values of `y` lane by lane, 4 at a time: `y.0[l], y.1[l], y.2[l], y.3[l]` for lane 0,
    /// then lane 1, … (for tiles, an output row's 16 runs of 4; for filters, each filter's run of 4).
    @inlinable @inline(__always)
    public static func storeInterleaved(_ y: (Wide, Wide, Wide, Wide), to raw: UnsafeMutableRawPointer) {
        let even = zip(y.0, y.2), odd = zip(y.1, y.3)
        raw.storeBytes(of: zip(even.lowHalf, odd.lowHalf), as: SIMD32<Float>.self)
        raw.storeBytes(of: zip(even.highHalf, odd.highHalf), toByteOffset: 128, as: SIMD32<Float>.self)
    }

    /// Stores the first `count` lanes of `x` at `p` (all 16 with one vector store).
    @inlinable @inline(__always)
    public static func store(_ x: Wide, to p: UnsafeMutablePointer<Float>, count: Int) {
        if count == 16 {
            UnsafeMutableRawPointer(p).storeBytes(of: x, as: Wide.self)
        } else {
            for lane in 0..<count { p[lane] = x[lane] }
        }
    }

    /// `[a0, b0, a1, b1, …, a15, b15]` (lane permutations, written out so they compile to shuffles).
    @inlinable @inline(__always)
    public static func zip(_ a: Wide, _ b: Wide) -> SIMD32<Float> {
        SIMD32<Float>(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3], a[4], b[4], a[5], b[5], a[6], b[6], a[7], b[7],
                      a[8], b[8], a[9], b[9], a[10], b[10], a[11], b[11], a[12], b[12], a[13], b[13], a[14], b[14],
                      a[15], b[15])
    }

    /// Zero-padded rows `first ..< first + count` of one channel (`channel`: `height × width`, padded row
    /// `p` is input row `p − 1`, padded cell x is input cell `x − 1`), each stored by phase at
    /// `target + (p − first)·pw`: cell x at `(x mod m)·phase + x / m`, every cell of the `pw` not holding an
    /// input value zero (the layout `rowsInput` reads). Only the input values are written: the caller
    /// clears the rows first, once for all the channels it pads there, as the padding cells are the same for
    /// each (clearing each row's padding per channel would take four small `memset` calls a row).
    @inlinable @inline(__always)
    public static func padByPhase(m: Int, channel: UnsafePointer<Float>, height: Int, width: Int, first: Int, count: Int,
                                  pw: Int, phase: Int, target: UnsafeMutablePointer<Float>) {
        for padded in first ..< first + count {
            let row = target + (padded - first) * pw
            let y = padded - 1   // padded row 0 is the top padding
            guard y >= 0 && y < height else { continue }
            let values = channel + y * width
            // Padded x = input x + 1.
            var x = 0
            if m == 6 {
                x = padRunsOfSix(values, width: width, into: row, phase: phase)
            } else if m == 4 {
                // 16 values from an x with (x + 1) mod 4 == 0 are 4 values of each phase.
                while x < min(3, width) { row[((x + 1) % 4) * phase + (x + 1) / 4] = values[x]; x += 1 }
                while x + 16 <= width {
                    let run = UnsafeRawPointer(values + x).loadUnaligned(as: Wide.self)
                    let (even, odd) = (run.evenHalf, run.oddHalf)
                    let index = (x + 1) / 4
                    UnsafeMutableRawPointer(row + index).storeBytes(of: even.evenHalf, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(row + phase + index).storeBytes(of: odd.evenHalf, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(row + 2 * phase + index).storeBytes(of: even.oddHalf, as: SIMD4<Float>.self)
                    UnsafeMutableRawPointer(row + 3 * phase + index).storeBytes(of: odd.oddHalf, as: SIMD4<Float>.self)
                    x += 16
                }
            } else {
                while x < min(1, width) { row[((x + 1) % 2) * phase + (x + 1) / 2] = values[x]; x += 1 }
                while x + 16 <= width {
                    let run = UnsafeRawPointer(values + x).loadUnaligned(as: Wide.self)
                    let index = (x + 1) / 2
                    UnsafeMutableRawPointer(row + index).storeBytes(of: run.evenHalf, as: SIMD8<Float>.self)
                    UnsafeMutableRawPointer(row + phase + index).storeBytes(of: run.oddHalf, as: SIMD8<Float>.self)
                    x += 16
                }
            }
            while x < width {
                row[((x + 1) % m) * phase + (x + 1) / m] = values[x]
                x += 1
            }
        }
    }

    // MARK: - F(6×6, 3×3): rows of 16 tiles only

    /// `Bᵀ` of F(6×6, 3×3) on one column of eight values in registers. The one place its arithmetic is written.
    @inlinable @inline(__always)
    public static func inputTransform6<V: SIMD>(_ d: (V, V, V, V, V, V, V, V)) -> (V, V, V, V, V, V, V, V)
        where V.Scalar == Float {
        let t1 = d.2 + d.6 - d.4 * 4.25, t2 = d.1 + d.5 - d.3 * 4.25
        let t3 = d.6 + d.2 * 0.25 - d.4 * 1.25, t4 = d.1 * 0.5 - d.3 * 2.5 + d.5 * 2
        let t5 = d.6 + (d.2 - d.4 * 1.25) * 4, t6 = d.1 * 2 - d.3 * 2.5 + d.5 * 0.5
        return (d.0 - d.6 + (d.4 - d.2) * 5.25, t1 + t2, t1 - t2, t3 + t4, t3 - t4, t5 + t6, t5 - t6,
                d.7 - d.1 + (d.3 - d.5) * 5.25)
    }

    /// `Aᵀ` of F(6×6, 3×3) on one column of eight values in registers. The one place its arithmetic is written.
    @inlinable @inline(__always)
    public static func outputTransform6<V: SIMD>(_ s: (V, V, V, V, V, V, V, V)) -> (V, V, V, V, V, V)
        where V.Scalar == Float {
        let a = s.1 + s.2, b = s.1 - s.2, c = s.3 + s.4, e = s.3 - s.4, f = s.5 + s.6, h = s.5 - s.6
        return (s.0 + a + c + f, b + e * 2 + h * 0.5, a + c * 4 + f * 0.25, b + e * 8 + h * 0.125,
                a + c * 16 + f * 0.0625, b + e * 32 + h * 0.03125 + s.7)
    }

    /// `rowsInput` for m = 6 (α = 8).
    @inlinable @inline(__always)
    public static func rowsInput6(source: UnsafePointer<Float>, pw: Int, phase: Int, target: UnsafeMutablePointer<Float>,
                                  planeStride: Int, valid: Int, buffer: UnsafeMutablePointer<Wide>) {
        let rows = buffer      // d B, row by row (64 vectors)
        for i in 0..<8 {
            let row = source + i * pw
            @inline(__always) func load(_ j: Int) -> Wide {
                UnsafeRawPointer(row + (j % 6) * phase + j / 6).loadUnaligned(as: Wide.self)
            }
            let r = inputTransform6((load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7)))
            let o = rows + i * 8
            (o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]) = r
        }
        // Bᵀ along each column j gives V's values ξ = l·8 + j, stored as they come.
        for j in 0..<8 {
            let c = rows + j
            let r = inputTransform6((c[0], c[8], c[16], c[24], c[32], c[40], c[48], c[56]))
            store(r.0, to: target + j * planeStride, count: valid)
            store(r.1, to: target + (8 + j) * planeStride, count: valid)
            store(r.2, to: target + (16 + j) * planeStride, count: valid)
            store(r.3, to: target + (24 + j) * planeStride, count: valid)
            store(r.4, to: target + (32 + j) * planeStride, count: valid)
            store(r.5, to: target + (40 + j) * planeStride, count: valid)
            store(r.6, to: target + (48 + j) * planeStride, count: valid)
            store(r.7, to: target + (56 + j) * planeStride, count: valid)
        }
    }

    /// `rowsOutput` for m = 6: runs of 96 floats. `buffer`: 2·64 + 6 vectors.
    @_transparent
    public static func rowsOutput6<L: WideActivation>(mm: UnsafePointer<Float>, planeStride: Int, bias: Float,
                                                      activation: Activation, _ lanes: L.Type,
                                                      target: UnsafeMutablePointer<Float>, width: Int, rows: Int,
                                                      count: Int, buffer: UnsafeMutablePointer<Wide>) {
        let temp = buffer      // Aᵀ M: 6×8
        for j in 0..<8 {
            @inline(__always) func value(_ i: Int) -> Wide {
                UnsafeRawPointer(mm + (i * 8 + j) * planeStride).loadUnaligned(as: Wide.self)
            }
            let o = outputTransform6((value(0), value(1), value(2), value(3), value(4), value(5), value(6), value(7)))
            (temp[j], temp[8 + j], temp[16 + j], temp[24 + j], temp[32 + j], temp[40 + j]) = o
        }
        let biasVector = Wide(repeating: bias)
        let full = count == 96
        let run = UnsafeMutableRawPointer(buffer + 128).assumingMemoryBound(to: Float.self)
        let deferred = L.defers(activation)
        let inRegisters = deferred ? Activation.linear : activation
        for i in 0..<rows {
            let t = temp + i * 8
            let y = outputTransform6((t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]))
            let a = (L.apply(inRegisters, y.0 + biasVector), L.apply(inRegisters, y.1 + biasVector),
                     L.apply(inRegisters, y.2 + biasVector), L.apply(inRegisters, y.3 + biasVector),
                     L.apply(inRegisters, y.4 + biasVector), L.apply(inRegisters, y.5 + biasVector))
            let rowTarget = target + i * width
            let whole = full || i < rows - 1
            let raw = UnsafeMutableRawPointer(whole ? rowTarget : run)
            storeInterleaved6(a, to: raw)
            if deferred { L.applyStored(activation, raw.assumingMemoryBound(to: Float.self), count: 96) }
            if !whole { rowTarget.update(from: run, count: count) }
        }
    }

    /// Stores the 96 values of `y` tile by tile: `y.0[t], y.1[t], …, y.5[t]` for lane t = 0, then lane 1, … (an output
    /// row's 16 runs of 6). Each half of 8 tiles is transposed in registers (`columns`), and each tile's column is
    /// stored as 8 floats, its last two overwritten by the next tile's store; the last tile stores only its 6.
    @inlinable @inline(__always)
    public static func storeInterleaved6(_ y: (Wide, Wide, Wide, Wide, Wide, Wide), to raw: UnsafeMutableRawPointer) {
        let low = columns(y.0.lowHalf, y.1.lowHalf, y.2.lowHalf, y.3.lowHalf, y.4.lowHalf, y.5.lowHalf)
        let high = columns(y.0.highHalf, y.1.highHalf, y.2.highHalf, y.3.highHalf, y.4.highHalf, y.5.highHalf)
        @inline(__always) func put(_ column: Lane, _ tile: Int) {
            raw.storeBytes(of: column, toByteOffset: tile * 24, as: Lane.self)
        }
        put(low.0, 0); put(low.1, 1); put(low.2, 2); put(low.3, 3); put(low.4, 4); put(low.5, 5); put(low.6, 6); put(low.7, 7)
        put(high.0, 8); put(high.1, 9); put(high.2, 10); put(high.3, 11); put(high.4, 12); put(high.5, 13); put(high.6, 14)
        raw.storeBytes(of: high.7.lowHalf, toByteOffset: 15 * 24, as: SIMD4<Float>.self)
        raw.storeBytes(of: SIMD2(high.7[4], high.7[5]), toByteOffset: 15 * 24 + 16, as: SIMD2<Float>.self)
    }

    /// The vector part of `padByPhase` for m = 6 on one input row (`values`, `width` floats) into its padded row
    /// `row`: the first five values one by one, then 48 values at a time from an x with (x + 1) mod 6 == 0, which
    /// are 8 values of each phase, then 24 (4 of each). Returns the first x not written.
    @inlinable @inline(__always)
    public static func padRunsOfSix(_ values: UnsafePointer<Float>, width: Int, into row: UnsafeMutablePointer<Float>,
                                    phase: Int) -> Int {
        var x = 0
        while x < min(5, width) { row[((x + 1) % 6) * phase + (x + 1) / 6] = values[x]; x += 1 }
        @inline(__always) func load(_ offset: Int) -> Wide { UnsafeRawPointer(values + offset).loadUnaligned(as: Wide.self) }
        while x + 48 <= width {
            let (a, b, c) = (load(x), load(x + 16), load(x + 32))
            let cells = UnsafeMutableRawPointer(row + (x + 1) / 6)
            @inline(__always) func put(_ p: Int, _ v: SIMD8<Float>) {
                cells.storeBytes(of: v, toByteOffset: p * phase * 4, as: SIMD8<Float>.self)
            }
            put(0, SIMD8(a[0], a[6], a[12], b[2], b[8], b[14], c[4], c[10]))
            put(1, SIMD8(a[1], a[7], a[13], b[3], b[9], b[15], c[5], c[11]))
            put(2, SIMD8(a[2], a[8], a[14], b[4], b[10], c[0], c[6], c[12]))
            put(3, SIMD8(a[3], a[9], a[15], b[5], b[11], c[1], c[7], c[13]))
            put(4, SIMD8(a[4], a[10], b[0], b[6], b[12], c[2], c[8], c[14]))
            put(5, SIMD8(a[5], a[11], b[1], b[7], b[13], c[3], c[9], c[15]))
            x += 48
        }
        if x + 24 <= width {
            let a = load(x), b = UnsafeRawPointer(values + x + 16).loadUnaligned(as: SIMD8<Float>.self)
            let cells = UnsafeMutableRawPointer(row + (x + 1) / 6)
            @inline(__always) func put(_ p: Int, _ v: SIMD4<Float>) {
                cells.storeBytes(of: v, toByteOffset: p * phase * 4, as: SIMD4<Float>.self)
            }
            put(0, SIMD4(a[0], a[6], a[12], b[2]))
            put(1, SIMD4(a[1], a[7], a[13], b[3]))
            put(2, SIMD4(a[2], a[8], a[14], b[4]))
            put(3, SIMD4(a[3], a[9], a[15], b[5]))
            put(4, SIMD4(a[4], a[10], b[0], b[6]))
            put(5, SIMD4(a[5], a[11], b[1], b[7]))
            x += 24
        }
        return x
    }

    // MARK: - Transposed products (the engine's `transposed` plans)

    /// `Bᵀ d B` for 8 tiles of one channel, lanes = tiles: tile `lane` starts at `plane + offsets[lane]`
    /// (rows `pw` apart); leaves the α² values in `buffer[0 ..< α²]`, using `buffer[α² ..< 2α²]`.
    @inlinable @inline(__always)
    public static func inputTiles8(m: Int, plane: UnsafePointer<Float>, pw: Int, offsets: UnsafePointer<Int>,
                                   buffer: UnsafeMutablePointer<Lane>) {
        let alpha = m + 2
        let tile = buffer                  // d[i][j]
        let (o0, o1, o2, o3) = (offsets[0], offsets[1], offsets[2], offsets[3])
        let (o4, o5, o6, o7) = (offsets[4], offsets[5], offsets[6], offsets[7])
        for i in 0..<alpha {
            for j in 0..<alpha {
                let p = plane + i * pw + j
                tile[i * alpha + j] = Lane(p[o0], p[o1], p[o2], p[o3], p[o4], p[o5], p[o6], p[o7])
            }
        }
        inputTile(m: m, buffer)
    }

    /// `inputTiles8` for the 6 tiles of a panel (lanes 6 and 7 zero): each tile's row i is one
    /// 8-float load (α used) and the 6 loads of a row are transposed into the α columns in registers,
    /// instead of α² scalar loads inserted lane by lane per tile. Each row load reads up to 8 − α floats past the
    /// tile's row: `WinogradPlan.bandCount` leaves room after the padded plane.
    @inlinable @inline(__always)
    public static func inputTiles6(m: Int, plane: UnsafePointer<Float>, pw: Int, offsets: UnsafePointer<Int>,
                                   buffer: UnsafeMutablePointer<Lane>) {
        let alpha = m + 2
        let tile = buffer                  // d[i][j]
        let (p0, p1, p2) = (plane + offsets[0], plane + offsets[1], plane + offsets[2])
        let (p3, p4, p5) = (plane + offsets[3], plane + offsets[4], plane + offsets[5])
        @inline(__always) func load(_ p: UnsafePointer<Float>, _ i: Int) -> Lane {
            UnsafeRawPointer(p + i * pw).loadUnaligned(as: Lane.self)
        }
        for i in 0..<alpha {
            put(m: m, transposed(load(p0, i), load(p1, i), load(p2, i), load(p3, i), load(p4, i), load(p5, i)),
                into: tile + i * alpha)
        }
        inputTile(m: m, buffer)
    }

    /// Columns 0 … 5 of the 8 × 8 matrix whose rows are `r0 … r5` and two zero rows (`columns`).
    @inlinable @inline(__always)
    public static func transposed(_ r0: Lane, _ r1: Lane, _ r2: Lane, _ r3: Lane, _ r4: Lane, _ r5: Lane)
        -> (Lane, Lane, Lane, Lane, Lane, Lane) {
        let c = columns(r0, r1, r2, r3, r4, r5)
        return (c.0, c.1, c.2, c.3, c.4, c.5)
    }

    /// The 8 columns of the 8 × 8 matrix whose rows are `r0 … r5` and two zero rows: column j holds
    /// `r0[j], …, r5[j], 0, 0` (lane permutations written out so they compile to unpack, shuffle and
    /// 128-bit lane moves).
    @inlinable @inline(__always)
    public static func columns(_ r0: Lane, _ r1: Lane, _ r2: Lane, _ r3: Lane, _ r4: Lane, _ r5: Lane)
        -> (Lane, Lane, Lane, Lane, Lane, Lane, Lane, Lane) {
        @inline(__always) func low(_ a: Lane, _ b: Lane) -> Lane { Lane(a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5]) }
        @inline(__always) func high(_ a: Lane, _ b: Lane) -> Lane { Lane(a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7]) }
        @inline(__always) func even(_ a: Lane, _ b: Lane) -> Lane { Lane(a[0], a[1], b[0], b[1], a[4], a[5], b[4], b[5]) }
        @inline(__always) func odd(_ a: Lane, _ b: Lane) -> Lane { Lane(a[2], a[3], b[2], b[3], a[6], a[7], b[6], b[7]) }
        let zero = Lane()
        let (t0, t1, t2, t3) = (low(r0, r1), high(r0, r1), low(r2, r3), high(r2, r3))
        let (t4, t5) = (low(r4, r5), high(r4, r5))
        // s0: column 0 (tiles 0-3) and 4; s1: 1 and 5; s2: 2 and 6; s3: 3 and 7; s4 … s7 the same for tiles 4-7.
        let (s0, s1, s2, s3) = (even(t0, t2), odd(t0, t2), even(t1, t3), odd(t1, t3))
        let (s4, s5, s6, s7) = (even(t4, zero), odd(t4, zero), even(t5, zero), odd(t5, zero))
        return (Lane(lowHalf: s0.lowHalf, highHalf: s4.lowHalf), Lane(lowHalf: s1.lowHalf, highHalf: s5.lowHalf),
                Lane(lowHalf: s2.lowHalf, highHalf: s6.lowHalf), Lane(lowHalf: s3.lowHalf, highHalf: s7.lowHalf),
                Lane(lowHalf: s0.highHalf, highHalf: s4.highHalf), Lane(lowHalf: s1.highHalf, highHalf: s5.highHalf),
                Lane(lowHalf: s2.highHalf, highHalf: s6.highHalf), Lane(lowHalf: s3.highHalf, highHalf: s7.highHalf))
    }

    /// `Bᵀ d B` for up to 6 tiles of one channel (a panel of the transposed products): tile `lane` starts
    /// at `plane + offsets[lane]` (the padded input; rows `pw` apart; 8 offsets, lanes 6 and 7 and those
    /// past `count` read some valid tile); value ξ of tile `lane` goes to `v[ξ · planeStride + lane]` for
    /// `lane < count`, as one run. `buffer`: 2α² vectors.
    @inlinable @inline(__always)
    public static func tilesInput(m: Int, plane: UnsafePointer<Float>, pw: Int, offsets: UnsafePointer<Int>, count: Int,
                                  v: UnsafeMutablePointer<Float>, planeStride: Int, buffer: UnsafeMutablePointer<Lane>) {
        let alpha2 = (m + 2) * (m + 2)
        let tile = buffer
        inputTiles6(m: m, plane: plane, pw: pw, offsets: offsets, buffer: buffer)
        for xi in 0..<alpha2 {
            let target = UnsafeMutableRawPointer(v + xi * planeStride)
            let values = tile[xi]
            if count == 6 {
                target.storeBytes(of: values.lowHalf, as: SIMD4<Float>.self)
                target.storeBytes(of: SIMD2(values[4], values[5]), toByteOffset: 16, as: SIMD2<Float>.self)
            } else {
                let floats = target.assumingMemoryBound(to: Float.self)
                for lane in 0..<count { floats[lane] = values[lane] }
            }
        }
    }

    /// `Aᵀ M A` plus bias and the activation for one tile and `count` (≤ 16) adjacent filters: `mm` at
    /// the first filter's ξ = 0 value in Mᵀ (ξ `planeStride` apart), `biases` theirs; filter `lane`'s
    /// `rows × columns` output values go to `origin + lane · plane` (rows `width` apart).
    /// `buffer`: 2α² + 4 vectors.
    @_transparent
    public static func filtersOutput<L: WideActivation>(m: Int, mm: UnsafePointer<Float>, planeStride: Int,
                                                        biases: UnsafePointer<Float>, count: Int, activation: Activation,
                                                        _ lanes: L.Type, origin: UnsafeMutablePointer<Float>, plane: Int,
                                                        width: Int, rows: Int, columns: Int, buffer: UnsafeMutablePointer<Wide>) {
        let temp = buffer
        outputRows(m: m, { UnsafeRawPointer(mm + $0 * planeStride).loadUnaligned(as: Wide.self) }, into: temp)
        var bias = Wide()
        if count == 16 {
            bias = UnsafeRawPointer(biases).loadUnaligned(as: Wide.self)
        } else {
            for lane in 0..<count { bias[lane] = biases[lane] }
        }
        @inline(__always) func scatter(_ values: Wide, _ target: UnsafeMutablePointer<Float>) {
            for lane in 0..<count { target[lane * plane] = values[lane] }
        }
        let run = UnsafeMutableRawPointer(buffer + 2 * (m + 2) * (m + 2)).assumingMemoryBound(to: Float.self)
        let interleaved = m == 4 && columns == 4
        let deferred = interleaved && L.defers(activation)
        let inRegisters = deferred ? Activation.linear : activation
        for i in 0..<rows {
            let y = outputRow(m: m, i, UnsafePointer(temp), bias: bias, activation: inRegisters, lanes)
            let row = origin + i * width
            if interleaved {
                // Each filter's 4 values of this row, interleaved into runs of 4 (as `rowsOutput` does for
                // tiles), then stored 4 at a time: 16 vector stores instead of 64 scalar ones.
                storeInterleaved(y, to: UnsafeMutableRawPointer(run))
                if deferred { L.applyStored(activation, run, count: 64) }
                for lane in 0..<count {
                    UnsafeMutableRawPointer(row + lane * plane).storeBytes(
                        of: UnsafeRawPointer(run + 4 * lane).loadUnaligned(as: SIMD4<Float>.self), as: SIMD4<Float>.self)
                }
                continue
            }
            scatter(y.0, row)
            if columns > 1 { scatter(y.1, row + 1) }
            if m == 4 {
                if columns > 2 { scatter(y.2, row + 2) }
                if columns > 3 { scatter(y.3, row + 3) }
            }
        }
    }
}

extension WinogradTiles {
    // MARK: - Entry-point bodies

    /// The bodies of a family's `WinogradKernels` entry points, with `WinogradKernels`' arguments: each fixes
    /// m (2 or 4) as a constant, so the transforms unroll. An ISA target's entry points call these, and for m = 6
    /// `rowsInput6`, `padByPhase(m: 6)` and `rowsOutput6`, each from a function of its own (with the m = 6 bodies
    /// inlined beside these, the m = 4 code ran slower); being inlined, they compile for that target's ISA.
    @inlinable @inline(__always)
    public static func rowsInputEntry(_ m: Int, _ source: UnsafePointer<Float>, _ pw: Int, _ phase: Int,
                                      _ target: UnsafeMutablePointer<Float>, _ planeStride: Int, _ valid: Int,
                                      _ buffer: UnsafeMutableRawPointer) {
        let wide = buffer.assumingMemoryBound(to: Wide.self)
        if m == 4 {
            rowsInput(m: 4, source: source, pw: pw, phase: phase, target: target, planeStride: planeStride, valid: valid,
                      buffer: wide)
        } else {
            rowsInput(m: 2, source: source, pw: pw, phase: phase, target: target, planeStride: planeStride, valid: valid,
                      buffer: wide)
        }
    }

    @inlinable @inline(__always)
    public static func padByPhaseEntry(_ m: Int, _ channel: UnsafePointer<Float>, _ height: Int, _ width: Int,
                                       _ first: Int, _ count: Int, _ pw: Int, _ phase: Int,
                                       _ target: UnsafeMutablePointer<Float>) {
        if m == 4 {
            padByPhase(m: 4, channel: channel, height: height, width: width, first: first, count: count, pw: pw,
                       phase: phase, target: target)
        } else {
            padByPhase(m: 2, channel: channel, height: height, width: width, first: first, count: count, pw: pw,
                       phase: phase, target: target)
        }
    }

    /// `rowsOutput` for a kernel family's entry point, the activation applied by `L` (`SharedActivation`: the
    /// shared forms). Transparent, as the functions it calls: inlined whole into the entry point, so no
    /// specialization for `L` is emitted on its own (check-isa.sh would see this module's name on it).
    @_transparent
    public static func rowsOutputEntry<L: WideActivation>(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int, _ bias: Float,
                                                          _ code: Int, _ target: UnsafeMutablePointer<Float>, _ width: Int,
                                                          _ rows: Int, _ count: Int, _ buffer: UnsafeMutableRawPointer,
                                                          _ lanes: L.Type) {
        let wide = buffer.assumingMemoryBound(to: Wide.self)
        let activation = Activation(code: code)
        if m == 4 {
            rowsOutput(m: 4, mm: mm, planeStride: planeStride, bias: bias, activation: activation, lanes, target: target,
                       width: width, rows: rows, count: count, buffer: wide)
        } else {
            rowsOutput(m: 2, mm: mm, planeStride: planeStride, bias: bias, activation: activation, lanes, target: target,
                       width: width, rows: rows, count: count, buffer: wide)
        }
    }

    @inlinable @inline(__always)
    public static func tilesInputEntry(_ m: Int, _ plane: UnsafePointer<Float>, _ pw: Int, _ offsets: UnsafePointer<Int>,
                                       _ count: Int, _ v: UnsafeMutablePointer<Float>, _ planeStride: Int,
                                       _ buffer: UnsafeMutableRawPointer) {
        let lanes = buffer.assumingMemoryBound(to: Lane.self)
        if m == 4 {
            tilesInput(m: 4, plane: plane, pw: pw, offsets: offsets, count: count, v: v, planeStride: planeStride, buffer: lanes)
        } else {
            tilesInput(m: 2, plane: plane, pw: pw, offsets: offsets, count: count, v: v, planeStride: planeStride, buffer: lanes)
        }
    }

    /// `filtersOutput` for a kernel family's entry point, the activation applied by `L` (as `rowsOutputEntry`).
    @_transparent
    public static func filtersOutputEntry<L: WideActivation>(_ m: Int, _ mm: UnsafePointer<Float>, _ planeStride: Int,
                                                             _ biases: UnsafePointer<Float>, _ count: Int, _ code: Int,
                                                             _ origin: UnsafeMutablePointer<Float>, _ plane: Int, _ width: Int,
                                                             _ rows: Int, _ columns: Int, _ buffer: UnsafeMutableRawPointer,
                                                             _ lanes: L.Type) {
        let wide = buffer.assumingMemoryBound(to: Wide.self)
        let activation = Activation(code: code)
        if m == 4 {
            filtersOutput(m: 4, mm: mm, planeStride: planeStride, biases: biases, count: count, activation: activation, lanes,
                          origin: origin, plane: plane, width: width, rows: rows, columns: columns, buffer: wide)
        } else {
            filtersOutput(m: 2, mm: mm, planeStride: planeStride, biases: biases, count: count, activation: activation, lanes,
                          origin: origin, plane: plane, width: width, rows: rows, columns: columns, buffer: wide)
        }
    }
}

/// A kernel family's Winograd transform entry points (`WinogradTiles` compiled for its ISA). Plain C
/// function pointers with C-representable arguments, like `TileKernel`: nothing generic crosses from
/// an ISA module into baseline code. `m` is 2 or 4 (6 too for `rowsInput`, `padByPhase` and `rowsOutput`);
/// `buffer` is the caller's scratch (64-byte aligned, sizes as `WinogradTiles` states); activations travel
/// as `Activation.code`.
public struct WinogradKernels: Sendable {
    /// `WinogradTiles.rowsInput`: `(m, source, pw, phase, target, planeStride, valid, buffer)`.
    public typealias RowsInput = @convention(c) (
        Int, UnsafePointer<Float>, Int, Int, UnsafeMutablePointer<Float>, Int, Int, UnsafeMutableRawPointer) -> Void
    /// `WinogradTiles.padByPhase`: `(m, channel, height, width, first, count, pw, phase, target)`.
    public typealias PadByPhase = @convention(c) (
        Int, UnsafePointer<Float>, Int, Int, Int, Int, Int, Int, UnsafeMutablePointer<Float>) -> Void
    /// `WinogradTiles.rowsOutput`: `(m, mm, planeStride, bias, activationCode, target, width, rows, count, buffer)`.
    public typealias RowsOutput = @convention(c) (
        Int, UnsafePointer<Float>, Int, Float, Int, UnsafeMutablePointer<Float>, Int, Int, Int, UnsafeMutableRawPointer) -> Void
    /// `WinogradTiles.tilesInput`: `(m, plane, pw, offsets, count, v, planeStride, buffer)`.
    public typealias TilesInput = @convention(c) (
        Int, UnsafePointer<Float>, Int, UnsafePointer<Int>, Int, UnsafeMutablePointer<Float>, Int,
        UnsafeMutableRawPointer) -> Void
    /// `WinogradTiles.filtersOutput`:
    /// `(m, mm, planeStride, biases, count, activationCode, origin, plane, width, rows, columns, buffer)`.
    public typealias FiltersOutput = @convention(c) (
        Int, UnsafePointer<Float>, Int, UnsafePointer<Float>, Int, Int, UnsafeMutablePointer<Float>, Int, Int, Int, Int,
        UnsafeMutableRawPointer) -> Void

    public let rowsInput: RowsInput
    public let padByPhase: PadByPhase
    public let rowsOutput: RowsOutput
    public let tilesInput: TilesInput
    public let filtersOutput: FiltersOutput

    public init(rowsInput: RowsInput, padByPhase: PadByPhase, rowsOutput: RowsOutput, tilesInput: TilesInput,
                filtersOutput: FiltersOutput) {
        self.rowsInput = rowsInput
        self.padByPhase = padByPhase
        self.rowsOutput = rowsOutput
        self.tilesInput = tilesInput
        self.filtersOutput = filtersOutput
    }
}

/// An activation on `WinogradTiles.Wide` vectors: the Winograd output transforms take it as a type, so a kernel
/// family can give logistic and swish its own exponential (the AVX2 family's fused multiply-adds).
public protocol WideActivation {
    static func apply(_ activation: Activation, _ x: WinogradTiles.Wide) -> WinogradTiles.Wide
    /// True when the output transforms store the values with bias only and then run `activation` over the stored
    /// floats with `applyStored`, rather than applying it to the transform's vectors in registers (where a long
    /// chain on all of an output row's vectors at once runs out of registers).
    static func defers(_ activation: Activation) -> Bool
    /// `activation` on the `count` floats at `p` (a multiple of 32), in place; only for activations `defers`.
    static func applyStored(_ activation: Activation, _ p: UnsafeMutablePointer<Float>, count: Int)
}

extension WideActivation {
    /// By default every activation is applied in registers (nothing deferred, nothing to apply after the stores).
    @_transparent
    public static func defers(_ activation: Activation) -> Bool { false }
    @_transparent
    public static func applyStored(_ activation: Activation, _ p: UnsafeMutablePointer<Float>, count: Int) {}
}

/// `Activation.callAsFunction`: the shared forms, bit-identical to the scalar ones.
public enum SharedActivation: WideActivation {
    @_transparent
    public static func apply(_ activation: Activation, _ x: WinogradTiles.Wide) -> WinogradTiles.Wide { activation(x) }
}
