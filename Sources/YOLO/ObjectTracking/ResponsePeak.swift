/// Where a correlation response peaks and how distinct the peak is.
///
/// The response is a `width × height` grid of cells whose (0, 0) is "no motion" and which wraps around
/// (circular correlation), so a peak at column `width − 1` is a shift of −1.
struct ResponsePeak {
    /// The peak's shift in cells, sub-cell (a parabola through the peak and its two neighbours, per axis),
    /// in [−width/2, width/2) and [−height/2, height/2).
    let dx: Double, dy: Double
    /// The response at the peak.
    let value: Float
    /// Peak-to-sidelobe ratio: (peak − mean) / standard deviation of the response outside a window of
    /// `2 * exclusion + 1` cells around the peak.
    let psr: Float
    /// The largest response outside that window (the second mode), divided by the peak; 0 when the peak is not positive.
    let secondModeRatio: Float

    /// Analyzes a `width × height` response (row-major).
    init(response r: [Float], width: Int, height: Int) {
        var best = 0
        for i in 1..<r.count where r[i] > r[best] { best = i }
        let (px, py) = (best % width, best / width)
        func at(_ x: Int, _ y: Int) -> Float { r[((y + height) % height) * width + (x + width) % width] }
        func vertex(_ left: Float, _ centre: Float, _ right: Float) -> Double {
            let curvature = left - 2 * centre + right
            return curvature < 0 ? Double(min(max(0.5 * (left - right) / curvature, -0.5), 0.5)) : 0
        }
        var x = Double(px) + vertex(at(px - 1, py), at(px, py), at(px + 1, py))
        var y = Double(py) + vertex(at(px, py - 1), at(px, py), at(px, py + 1))
        if x >= Double(width) / 2 { x -= Double(width) }
        if y >= Double(height) / 2 { y -= Double(height) }
        (dx, dy, value) = (x, y, r[best])
        let exclusion = max(2, min(width, height) / 8)
        var (sum, squares, count, second): (Double, Double, Int, Float) = (0, 0, 0, -.infinity)
        for j in 0..<height {
            let oy = abs(j - py), wy = min(oy, height - oy)
            for i in 0..<width {
                let ox = abs(i - px), wx = min(ox, width - ox)
                if wx <= exclusion && wy <= exclusion { continue }
                let v = r[j * width + i]
                sum += Double(v); squares += Double(v) * Double(v); count += 1
                second = max(second, v)
            }
        }
        let mean = count > 0 ? sum / Double(count) : 0
        let deviation = count > 0 ? max(squares / Double(count) - mean * mean, 0).squareRoot() : 0
        psr = deviation > 0 ? Float((Double(r[best]) - mean) / deviation) : 0
        secondModeRatio = r[best] > 0 && count > 0 ? max(second, 0) / r[best] : 0
    }
}
