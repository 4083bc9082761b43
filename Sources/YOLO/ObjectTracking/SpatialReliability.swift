/// The spatial reliability map of CSR-DCF: which cells of the target's box hold the object (by its colours)
/// rather than background, so the filter learns from those only.
///
/// Colour histograms (16 levels per RGB channel, 4,096 bins) of the foreground (inside the target's box) and the
/// background (the rest of the window), followed with a learning rate. Per pixel, the foreground posterior
/// P(fg | colour) with priors from the two regions' areas; per cell, its mean, times a spatial prior that falls
/// from 1 at the box's centre to 0.5 at its edge (an Epanechnikov-like bump); cells above `threshold` inside the
/// box form the mask. When the mask would keep under `minimumFill` of the box, the whole box is the mask.
struct SpatialReliability {
    static let rate: Float = 0.04, threshold: Float = 0.5, minimumFill: Float = 0.25
    private var foreground = [Float](repeating: 0, count: 4096)
    private var background = [Float](repeating: 0, count: 4096)

    /// The histograms of `rgb` (`width × height`, interleaved 0…255) split by `box` (template pixels).
    init(rgb: [Float], width: Int, height: Int, box: Rect) {
        (foreground, background) = Self.histograms(rgb, width, height, box)
    }

    /// Moves the histograms toward those of a new window.
    mutating func update(rgb: [Float], width: Int, height: Int, box: Rect) {
        let (f, b) = Self.histograms(rgb, width, height, box)
        SpectrumMath.interpolate(&foreground, toward: f, rate: Self.rate, count: 4096)
        SpectrumMath.interpolate(&background, toward: b, rate: Self.rate, count: 4096)
    }

    /// The mask over the cells of `geometry`'s grid (1 reliable, 0 not) for the window `rgb` with the target at `box`.
    func mask(rgb: [Float], geometry: TemplateGeometry, box: Rect) -> [Float] {
        let (columns, rows, cell) = (geometry.columns, geometry.rows, geometry.cellSize)
        let width = geometry.templateWidth
        let boxArea = max(box.width * box.height, 1)
        let priorFg = Float(min(boxArea / Double(width * geometry.templateHeight), 0.9))
        var mask = [Float](repeating: 0, count: columns * rows)
        var inside = 0, kept = 0
        for cy in 0..<rows {
            for cx in 0..<columns {
                let (x, y) = (Double(cx * cell) + Double(cell) / 2, Double(cy * cell) + Double(cell) / 2)
                guard x >= box.minX, x < box.maxX, y >= box.minY, y < box.maxY else { continue }
                inside += 1
                var posterior: Float = 0
                for py in (cy * cell)..<((cy + 1) * cell) {
                    for px in (cx * cell)..<((cx + 1) * cell) {
                        let bin = Self.bin(rgb, 3 * (py * width + px))
                        let f = foreground[bin] * priorFg, b = background[bin] * (1 - priorFg)
                        posterior += f + b > 0 ? f / (f + b) : 0.5
                    }
                }
                posterior /= Float(cell * cell)
                let (u, v) = ((x - box.midX) / (box.width / 2), (y - box.midY) / (box.height / 2))
                let prior = Float(1 - 0.5 * min(u * u + v * v, 1))
                if posterior * prior > Self.threshold * 0.75 { mask[cy * columns + cx] = 1; kept += 1 }
            }
        }
        if Float(kept) < Self.minimumFill * Float(inside) || inside == 0 {
            return Self.boxMask(geometry: geometry, box: box)
        }
        return mask
    }

    /// 1 on the cells whose centre lies in `box`, 0 elsewhere (at least the centre cell).
    static func boxMask(geometry: TemplateGeometry, box: Rect) -> [Float] {
        let (columns, rows, cell) = (geometry.columns, geometry.rows, Double(geometry.cellSize))
        var mask = [Float](repeating: 0, count: columns * rows)
        for cy in 0..<rows {
            for cx in 0..<columns {
                let (x, y) = ((Double(cx) + 0.5) * cell, (Double(cy) + 0.5) * cell)
                if x >= box.minX, x < box.maxX, y >= box.minY, y < box.maxY { mask[cy * columns + cx] = 1 }
            }
        }
        mask[(rows / 2) * columns + columns / 2] = 1
        return mask
    }

    private static func bin(_ rgb: [Float], _ p: Int) -> Int {
        func level(_ v: Float) -> Int { min(max(Int(v) >> 4, 0), 15) }
        return level(rgb[p]) << 8 | level(rgb[p + 1]) << 4 | level(rgb[p + 2])
    }

    private static func histograms(_ rgb: [Float], _ width: Int, _ height: Int, _ box: Rect) -> ([Float], [Float]) {
        var f = [Float](repeating: 0, count: 4096), b = [Float](repeating: 0, count: 4096)
        for y in 0..<height {
            let inY = Double(y) + 0.5 >= box.minY && Double(y) + 0.5 < box.maxY
            for x in 0..<width {
                let bin = bin(rgb, 3 * (y * width + x))
                if inY && Double(x) + 0.5 >= box.minX && Double(x) + 0.5 < box.maxX { f[bin] += 1 } else { b[bin] += 1 }
            }
        }
        let (fs, bs) = (max(f.reduce(0, +), 1), max(b.reduce(0, +), 1))
        return (f.map { $0 / fs }, b.map { $0 / bs })
    }
}
