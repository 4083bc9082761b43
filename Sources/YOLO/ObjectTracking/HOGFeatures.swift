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
    private static let directions: [(Float, Float)] = (0..<9).map {
        (Float(cos(Double($0) * Double.pi / 9)), Float(sin(Double($0) * Double.pi / 9)))
    }

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
        histogram.withUnsafeMutableBufferPointer { hist in
            gray.withUnsafeBufferPointer { g in
                for y in 0..<height {
                    let up = max(y - 1, 0), down = min(y + 1, height - 1)
                    let cy = (Float(y) + 0.5) * inverseCell - 0.5
                    let iy = Int((cy + 1).rounded(.down)) - 1, fy = cy - Float(iy)
                    for x in 0..<width {
                        let left = max(x - 1, 0), right = min(x + 1, width - 1)
                        let dx = g[y * width + right] - g[y * width + left]
                        let dy = g[down * width + x] - g[up * width + x]
                        let magnitude = (dx * dx + dy * dy).squareRoot()
                        guard magnitude > 0 else { continue }
                        var best: Float = 0, bin = 0
                        for o in 0..<9 {
                            let dot = directions[o].0 * dx + directions[o].1 * dy
                            if dot > best { best = dot; bin = o }
                            if -dot > best { best = -dot; bin = o + 9 }
                        }
                        let cx = (Float(x) + 0.5) * inverseCell - 0.5
                        let ix = Int((cx + 1).rounded(.down)) - 1, fx = cx - Float(ix)
                        let base = bin * cells
                        if iy >= 0 { vote(hist, base + iy * cw, ix, cw, magnitude * (1 - fy), fx) }
                        if iy + 1 < ch { vote(hist, base + (iy + 1) * cw, ix, cw, magnitude * fy, fx) }
                    }
                }
            }
        }
        return histogram
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
                    var norms = [Float](repeating: 0, count: 4)
                    for (n, (ox, oy)) in [(-1, -1), (0, -1), (-1, 0), (0, 0)].enumerated() {
                        let sum = e(x + ox, y + oy) + e(x + ox + 1, y + oy) + e(x + ox, y + oy + 1) + e(x + ox + 1, y + oy + 1)
                        norms[n] = 1 / (sum + 1e-4).squareRoot()
                    }
                    var texture: [Float] = [0, 0, 0, 0]
                    for o in 0..<18 {
                        var sum: Float = 0
                        for n in 0..<4 {
                            let v = min(histogram[o * cells + k] * norms[n], 0.2)
                            sum += v
                            texture[n] += v
                        }
                        out[o * cells + k] = 0.5 * sum
                    }
                    for o in 0..<9 {
                        var sum: Float = 0
                        let v = histogram[o * cells + k] + histogram[(o + 9) * cells + k]
                        for n in 0..<4 { sum += min(v * norms[n], 0.2) }
                        out[(18 + o) * cells + k] = 0.5 * sum
                    }
                    for n in 0..<4 { out[(27 + n) * cells + k] = 0.2357 * texture[n] }
                }
            }
        }
        return map
    }
}

import Foundation
