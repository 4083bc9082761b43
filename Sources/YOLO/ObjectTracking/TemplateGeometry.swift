/// The sizes a correlation tracker works at, fixed when it is seeded: the search window around the target in
/// frame pixels, the template it is resampled to, and that template's grid of feature cells.
///
/// The window is the target grown by `padding × √(width × height)` on each axis (context around it, the same
/// amount on both axes so a thin target still sees its surroundings). The template keeps the window's aspect
/// ratio with an area near `templateArea` pixels, rounded to an even number of cells per axis (the FFTs want it).
/// As the target's scale changes, the window scales with it; the template and the grid never change.
struct TemplateGeometry {
    /// Pixels per cell side.
    let cellSize: Int
    /// The grid in cells (both even).
    let columns: Int, rows: Int
    /// The window in frame pixels at scale 1 (the seed's size).
    let windowWidth: Double, windowHeight: Double
    /// The target's size in cells.
    let targetColumns: Double, targetRows: Double

    /// The template in pixels.
    var templateWidth: Int { columns * cellSize }
    var templateHeight: Int { rows * cellSize }

    init(targetWidth: Double, targetHeight: Double, padding: Double, templateArea: Double, cellSize: Int) {
        self.cellSize = cellSize
        let context = padding * (targetWidth * targetHeight).squareRoot()
        let (w, h) = (targetWidth + context, targetHeight + context)
        let zoom = (templateArea / (w * h)).squareRoot()
        func cells(_ pixels: Double) -> Int { max(2 * Int((pixels * zoom / Double(2 * cellSize)).rounded()), 4) }
        (columns, rows) = (cells(w), cells(h))
        // The window spans exactly the grid: frame pixels per template pixel is the same on both axes up to rounding.
        windowWidth = Double(columns * cellSize) / zoom
        windowHeight = Double(rows * cellSize) / zoom
        targetColumns = targetWidth * zoom / Double(cellSize)
        targetRows = targetHeight * zoom / Double(cellSize)
    }

    /// The patch sampler for the window centred on (`x`, `y`) at `scale` × the seed's size.
    func sampler(x: Double, y: Double, scale: Double) -> PatchSampler {
        PatchSampler(centerX: x, centerY: y, windowWidth: windowWidth * scale, windowHeight: windowHeight * scale,
                     width: templateWidth, height: templateHeight)
    }

    /// Frame pixels per cell along x and y at `scale`.
    func cellPixels(scale: Double) -> (Double, Double) {
        (windowWidth * scale / Double(columns), windowHeight * scale / Double(rows))
    }
}
