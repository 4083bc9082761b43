/// Colour-name features per cell: the mean probability of each of the eleven basic colour terms over the cell's
/// pixels (`ColorNameTable`), 11 planes.
enum ColorNameFeatures {
    /// Number of planes.
    static let channels = ColorNameTable.terms.count

    /// Features of a `width × height` RGB patch (interleaved floats 0…255) in cells of `cellSize` pixels.
    static func compute(rgb: [Float], width: Int, height: Int, cellSize: Int) -> FeatureMap {
        let (cw, ch) = (width / cellSize, height / cellSize)
        var map = FeatureMap(width: cw, height: ch, channels: channels)
        let cells = cw * ch
        let weight = 1 / Float(cellSize * cellSize)
        ColorNameTable.probabilities.withUnsafeBufferPointer { table in
            map.values.withUnsafeMutableBufferPointer { out in
                for y in 0..<(ch * cellSize) {
                    for x in 0..<(cw * cellSize) {
                        let p = 3 * (y * width + x)
                        let (r, g, b) = (Int(min(max(rgb[p], 0), 255)), Int(min(max(rgb[p + 1], 0), 255)),
                                         Int(min(max(rgb[p + 2], 0), 255)))
                        let entry = ColorNameTable.index(r: r, g: g, b: b) * channels
                        let cell = (y / cellSize) * cw + x / cellSize
                        for t in 0..<channels { out[t * cells + cell] += weight * table[entry + t] }
                    }
                }
            }
        }
        return map
    }
}
