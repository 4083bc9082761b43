/// The grey feature: one plane, each cell's mean luma minus 0.5 (the `.accurate` tracker's intensity channel).
enum GrayFeature {
    /// The plane of a `width × height` luma patch in cells of `cellSize` pixels.
    static func compute(_ gray: [Float], width: Int, height: Int, cellSize: Int) -> FeatureMap {
        let (cw, ch) = (width / cellSize, height / cellSize)
        var map = FeatureMap(width: cw, height: ch, channels: 1)
        let weight = 1 / Float(cellSize * cellSize)
        for y in 0..<(ch * cellSize) {
            for x in 0..<(cw * cellSize) { map.values[(y / cellSize) * cw + x / cellSize] += weight * gray[y * width + x] }
        }
        for i in 0..<map.values.count { map.values[i] -= 0.5 }
        return map
    }
}
