import Swift
import YOLOKernels

/// `Int8Kernel.WinogradInput`: for 16 tiles of a row at a time and each channel of the pair, the 4 input rows' column
/// transform (`d0 − d2, d1 + d2, d2 − d1, d1 − d3` on 16 tiles' columns at once), then the row transform, exact in s16
/// (|V| ≤ 1,020 for u8 codes); the two channels' values of each ξ and tile go into one 32-bit lane, staged ξ by ξ
/// for the chunk's tiles, then copied out a block's 16 lanes (64 bytes) at a time.
public func avx2Int8WinogradInput(_ planes: UnsafePointer<UInt8>, _ layout: UnsafeRawPointer, _ pair: Int, _ first: Int, _ end: Int,
                                  _ blocks: Int, _ target: UnsafeMutableRawPointer) {
    typealias Row = SIMD16<Int16>
    let l = layout.load(as: Int8WinogradInputLayout.self)
    let lanes = target.assumingMemoryBound(to: UInt32.self)
    guard first < end else { return }
    let chunkTiles = 16 * blocks
    withUnsafeTemporaryAllocation(of: Row.self, capacity: 32) { v in
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16 * (chunkTiles + 16)) { staged in
            let (v, staged) = (v.baseAddress!, staged.baseAddress!)
            // The 16 values of V (ξ = 4i + j) for 16 tiles of channel `c`, whose top-left padded pixels are
            // (2ty, 2tx0 + 2k), at `v + base`: first each row's column transform, then the row transform.
            @inline(__always)
            func transform(_ c: Int, _ ty: Int, _ tx0: Int, _ base: Int) {
                guard c < l.channels else {
                    for xi in 0..<16 { v[base + xi] = Row() }
                    return
                }
                for i in 0..<4 {
                    let offset: Int = c &* l.planeBytes &+ (2 &* ty &+ i) &* l.paddedWidth &+ 2 &* tx0
                    // 32 bytes as 16 little-endian u16: the even columns' bytes are the low bytes, the odd ones' the high.
                    let p = UnsafeRawPointer(planes + offset), low = SIMD16<UInt16>(repeating: 255)
                    let p0 = p.loadUnaligned(as: SIMD16<UInt16>.self), p2 = p.loadUnaligned(fromByteOffset: 2, as: SIMD16<UInt16>.self)
                    let (a, b) = (unsafeBitCast(p0 & low, to: Row.self), unsafeBitCast(p0 &>> 8, to: Row.self))
                    let (cc, d) = (unsafeBitCast(p2 & low, to: Row.self), unsafeBitCast(p2 &>> 8, to: Row.self))
                    v[base + 4 * i] = a &- cc
                    v[base + 4 * i + 1] = b &+ cc
                    v[base + 4 * i + 2] = cc &- b
                    v[base + 4 * i + 3] = b &- d
                }
                for j in 0..<4 {
                    let (r0, r1, r2, r3) = (v[base + j], v[base + 4 + j], v[base + 8 + j], v[base + 12 + j])
                    v[base + j] = r0 &- r2
                    v[base + 4 + j] = r1 &+ r2
                    v[base + 8 + j] = r2 &- r1
                    v[base + 12 + j] = r1 &- r3
                }
            }
            for ty in first / l.tilesX ... (end - 1) / l.tilesX {
                let row = ty * l.tilesX
                let columns = max(0, first - row) ..< min(l.tilesX, end - row)
                var tx0 = columns.lowerBound
                while tx0 < columns.upperBound {
                    transform(2 * pair, ty, tx0, 0)
                    transform(2 * pair + 1, ty, tx0, 16)
                    // 16 tiles' pairs of every ξ; lanes past the row's last tile land on the next tiles' places, which
                    // the next group overwrites, or past the chunk's tiles (into the ξ's 16 spare).
                    let t = row + tx0 - first
                    for xi in 0..<16 {
                        // Widened half by half (8 lanes: `vpmovzxwd`, inlined, where a 16-lane conversion is a call).
                        let (c0, c1) = (unsafeBitCast(v[xi], to: SIMD16<UInt16>.self), unsafeBitCast(v[16 + xi], to: SIMD16<UInt16>.self))
                        let at = UnsafeMutableRawPointer(staged + (xi &* (chunkTiles + 16) &+ t))
                        at.storeBytes(of: SIMD8<UInt32>(truncatingIfNeeded: c0.lowHalf) | (SIMD8<UInt32>(truncatingIfNeeded: c1.lowHalf) &<< 16),
                                      as: SIMD8<UInt32>.self)
                        at.storeBytes(of: SIMD8<UInt32>(truncatingIfNeeded: c0.highHalf) | (SIMD8<UInt32>(truncatingIfNeeded: c1.highHalf) &<< 16),
                                      toByteOffset: 32, as: SIMD8<UInt32>.self)
                    }
                    tx0 += 16
                }
            }
            for xi in 0..<16 {
                for block in 0..<blocks {
                    let to: Int = ((xi &* blocks &+ block) &* l.steps &+ pair) &* 16
                    let from: Int = xi &* (chunkTiles + 16) &+ block &* 16
                    (lanes + to).update(from: staged + from, count: 16)
                }
            }
        }
    }
}

/// `Bᵀ` of int8 Winograd F(4×4, 3×3) on six vectors (the rows `(4 0 −5 0 1 0), (0 −4 −4 1 1 0), (0 4 −4 −1 1 0),
/// (0 −2 −1 2 1 0), (0 2 −1 −2 1 0), (0 4 0 −5 0 1)`), in shifts and adds.
@_transparent
func winograd4InputRows(_ x0: Int32x8, _ x1: Int32x8, _ x2: Int32x8, _ x3: Int32x8, _ x4: Int32x8, _ x5: Int32x8)
    -> (Int32x8, Int32x8, Int32x8, Int32x8, Int32x8, Int32x8) {
    let (sum12, difference12) = (x1 &+ x2, x1 &- x2)
    let (sum34, difference43) = (x3 &+ x4, x4 &- x3)
    let (difference42, twice31) = (x4 &- x2, (x3 &- x1) &<< 1)
    return ((x0 &<< 2) &- (x2 &<< 2) &- x2 &+ x4, sum34 &- (sum12 &<< 2), difference43 &+ (difference12 &<< 2),
            difference42 &+ twice31, difference42 &- twice31, (x1 &<< 2) &- (x3 &<< 2) &- x3 &+ x5)
}

/// `Int8Kernel.Winograd4Input`: for 8 tiles of a row at a time and each channel of the pair, each of the 6 input rows'
/// transform along the row (`Bᵀ`'s rows on the 6 codes under each tile, read as the 4 bytes of a 32-bit lane and the
/// first 2 of the next), then the same down the 6 rows, exact in 32-bit lanes (|V| ≤ 20,400, so the low 16 bits hold
/// it); the two channels' values of each ξ and tile go into one 32-bit lane, staged ξ by ξ for the chunk's tiles, then
/// copied out a block's 16 lanes (64 bytes) at a time.
public func avx2Int8Winograd4Input(_ planes: UnsafePointer<UInt8>, _ layout: UnsafeRawPointer, _ pair: Int, _ first: Int, _ end: Int,
                                   _ blocks: Int, _ target: UnsafeMutableRawPointer) {
    let l = layout.load(as: Int8WinogradInputLayout.self)
    let lanes = target.assumingMemoryBound(to: UInt32.self)
    guard first < end else { return }
    let chunkTiles = 16 &* blocks, stride = chunkTiles &+ 8
    withUnsafeTemporaryAllocation(of: Int32x8.self, capacity: 72) { v in
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 36 * stride) { staged in
            let (v, staged) = (v.baseAddress!, staged.baseAddress!)
            let byte = Int32x8(repeating: 255), low = Int32x8(repeating: 0xFFFF)
            for ty in first / l.tilesX ... (end - 1) / l.tilesX {
                let row = ty &* l.tilesX
                let columns = max(0, first &- row) ..< min(l.tilesX, end &- row)
                var tx0 = columns.lowerBound
                while tx0 < columns.upperBound {
                    // The 36 values of V (ξ = 6i + j) for 8 tiles of each channel of the pair, whose top-left padded pixels
                    // are (4ty, 4tx0 + 4k), at `v + 36h`: first each row's transform, then down the columns.
                    for h in 0..<2 {
                        let c = 2 &* pair &+ h, base = 36 &* h
                        guard c < l.channels else {
                            for xi in 0..<36 { v[base &+ xi] = Int32x8() }
                            continue
                        }
                        var p = UnsafeRawPointer(planes + (c &* l.planeBytes &+ 4 &* ty &* l.paddedWidth &+ 4 &* tx0))
                        for r in 0..<6 {
                            let q0 = loadLanes(p), q1 = loadLanes(p + 4)
                            let y = winograd4InputRows(q0 & byte, (q0 &>> 8) & byte, (q0 &>> 16) & byte, (q0 &>> 24) & byte,
                                                       q1 & byte, (q1 &>> 8) & byte)
                            let at = v + (base &+ 6 &* r)
                            (at[0], at[1], at[2], at[3], at[4], at[5]) = y
                            p += l.paddedWidth
                        }
                        for j in 0..<6 {
                            let at = v + (base &+ j)
                            let y = winograd4InputRows(at[0], at[6], at[12], at[18], at[24], at[30])
                            (at[0], at[6], at[12], at[18], at[24], at[30]) = y
                        }
                    }
                    // 8 tiles' pairs of every ξ; lanes past the row's last tile land on the next tiles' places, which
                    // the next group overwrites, or past the chunk's tiles (into the ξ's 8 spare).
                    let t = row &+ tx0 &- first
                    for xi in 0..<36 {
                        let packed = (v[xi] & low) | (v[36 &+ xi] &<< 16)
                        UnsafeMutableRawPointer(staged + (xi &* stride &+ t)).storeBytes(of: packed, as: Int32x8.self)
                    }
                    tx0 &+= 8
                }
            }
            for xi in 0..<36 {
                for block in 0..<blocks {
                    let to: Int = ((xi &* blocks &+ block) &* l.steps &+ pair) &* 16
                    (lanes + to).update(from: staged + (xi &* stride &+ block &* 16), count: 16)
                }
            }
        }
    }
}
