import Foundation

/// Histogram-of-oriented-gradients features per cell, as Felzenszwalb et al. define them for their part models
/// ("Object detection with discriminatively trained part-based models", PAMI 2010, section 6): 31 planes.
///
/// Per pixel: central-difference gradient, its magnitude voted (bilinearly over the four nearest cell centres)
/// into the nearest of 18 contrast-sensitive orientations (20° apart). Per cell, four normalizers: 1/√(energy of
/// the 2×2 block of cells) for the four blocks that contain it, energy = Σ over the 9 contrast-insensitive bins of
/// the squared bin sums. Features: 18 sensitive orientations and 9 insensitive ones, each normalized by the four
/// normalizers, clipped at 0.2 and summed (× 0.5); and 4 texture features, one per normalizer, the sum of the 18
/// clipped sensitive values (× 0.2357). Cells outside the grid take the energy of the nearest cell inside.
enum HOGFeatures {
    /// Number of planes.
    static let channels = 31

    /// Features of a `width × height` luma patch with square cells of `cellSize` pixels.
    /// - Precondition: `width` and `height` are multiples of `cellSize`.
    static func compute(gray: [Float], width: Int, height: Int, cellSize: Int) -> FeatureMap {
        precondition(width % cellSize == 0 && height % cellSize == 0, "HOG: \(width)x\(height) not in cells of \(cellSize)")
        let (cw, ch) = (width / cellSize, height / cellSize)
        let histogram = orientationHistogram(gray: gray, width: width, height: height, cellSize: cellSize)
        return normalized(histogram, cw, ch)
    }

    /// 18 orientation bins per cell (bin-major: bin b of cell k at `b * cells + k`), bilinear spatial votes.
    private static func orientationHistogram(gray: [Float], width: Int, height: Int, cellSize: Int) -> [Float] {
        let (cw, ch) = (width / cellSize, height / cellSize)
        let cells = cw * ch
        var histogram = [Float](repeating: 0, count: 18 * cells)
        let inverseCell = 1 / Float(cellSize)
        // Per column: the left cell of its bilinear pair and the right cell's weight.
        let columnCells = (0..<width).map { x -> (Int, Float) in
            let cx = (Float(x) + 0.5) * inverseCell - 0.5
            let ix = Int((cx + 1).rounded(.down)) - 1
            return (ix, cx - Float(ix))
        }
        var (dxs, dys, bins) = ([Float](repeating: 0, count: width), [Float](repeating: 0, count: width), [Int32](repeating: 0, count: width))
        histogram.withUnsafeMutableBufferPointer { hist in
            gray.withUnsafeBufferPointer { g in
                for y in 0..<height {
                    let up = max(y - 1, 0) * width, down = min(y + 1, height - 1) * width, row = y * width
                    // Gradients of the row (borders: one-sided), then each pixel's nearest of 18 directions.
                    dxs[0] = g[row + 1] - g[row]
                    dxs[width - 1] = g[row + width - 1] - g[row + width - 2]
                    for x in 1..<(width - 1) { dxs[x] = g[row + x + 1] - g[row + x - 1] }
                    for x in 0..<width { dys[x] = g[down + x] - g[up + x] }
                    for x in 0..<width { bins[x] = Self.direction(dxs[x], dys[x]) }
                    let cy = (Float(y) + 0.5) * inverseCell - 0.5
                    let iy = Int((cy + 1).rounded(.down)) - 1, fy = cy - Float(iy)
                    for x in 0..<width {
                        let magnitude = (dxs[x] * dxs[x] + dys[x] * dys[x]).squareRoot()
                        guard magnitude > 0 else { continue }
                        let (ix, fx) = columnCells[x]
                        let base = Int(bins[x]) * cells
                        if iy >= 0 { vote(hist, base + iy * cw, ix, cw, magnitude * (1 - fy), fx) }
                        if iy + 1 < ch { vote(hist, base + (iy + 1) * cw, ix, cw, magnitude * fy, fx) }
                    }
                }
            }
        }
        return histogram
    }

    /// The nearest of the 18 directions k × 20° (k = 0…17) to the gradient's angle (a polynomial atan2, error
    /// under 1e-4 rad, far below the 10° that decides a bin).
    @inline(__always)
    static func direction(_ dx: Float, _ dy: Float) -> Int32 {
        let (ax, ay) = (abs(dx), abs(dy))
        let a = min(ax, ay) / max(max(ax, ay), 1e-20), s = a * a
        var r = ((-0.0464964749 * s + 0.15931422) * s - 0.327622764) * s * a + a
        r = ay > ax ? Float.pi / 2 - r : r
        r = dx < 0 ? Float.pi - r : r
        r = dy < 0 ? 2 * Float.pi - r : r
        let k = Int32((r * (9 / Float.pi)).rounded())
        return k >= 18 ? k - 18 : k
    }

    /// Adds `amount` to the cells `ix` (weight 1 − fx) and `ix + 1` (weight fx) of the row starting at `row`.
    @inline(__always)
    private static func vote(_ hist: UnsafeMutableBufferPointer<Float>, _ row: Int, _ ix: Int, _ cw: Int, _ amount: Float, _ fx: Float) {
        if ix >= 0 { hist[row + ix] += amount * (1 - fx) }
        if ix + 1 < cw { hist[row + ix + 1] += amount * fx }
    }

    private static func normalized(_ histogram: [Float], _ cw: Int, _ ch: Int) -> FeatureMap {
        let cells = cw * ch
        var energy = [Float](repeating: 0, count: cells)
        for k in 0..<cells {
            for o in 0..<9 { let v = histogram[o * cells + k] + histogram[(o + 9) * cells + k]; energy[k] += v * v }
        }
        func e(_ x: Int, _ y: Int) -> Float { energy[min(max(y, 0), ch - 1) * cw + min(max(x, 0), cw - 1)] }
        var map = FeatureMap(width: cw, height: ch, channels: channels)
        map.values.withUnsafeMutableBufferPointer { out in
            for y in 0..<ch {
                for x in 0..<cw {
                    let k = y * cw + x
                    func norm(_ ox: Int, _ oy: Int) -> Float {
                        1 / (e(x + ox, y + oy) + e(x + ox + 1, y + oy) + e(x + ox, y + oy + 1) + e(x + ox + 1, y + oy + 1) + 1e-4).squareRoot()
                    }
                    let norms = SIMD4<Float>(norm(-1, -1), norm(0, -1), norm(-1, 0), norm(0, 0))
                    let clip = SIMD4<Float>(repeating: 0.2)
                    var texture = SIMD4<Float>()
                    for o in 0..<18 {
                        let v = pointwiseMin(histogram[o * cells + k] * norms, clip)
                        texture += v
                        out[o * cells + k] = 0.5 * v.sum()
                    }
                    for o in 0..<9 {
                        let v = pointwiseMin((histogram[o * cells + k] + histogram[(o + 9) * cells + k]) * norms, clip)
                        out[(18 + o) * cells + k] = 0.5 * v.sum()
                    }
                    for n in 0..<4 { out[(27 + n) * cells + k] = 0.2357 * texture[n] }
                }
            }
        }
        return map
    }
}
