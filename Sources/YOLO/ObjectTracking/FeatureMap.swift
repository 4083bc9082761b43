import Foundation

/// Several feature planes over one grid of cells: what the correlation filters learn from.
///
/// Layout: channel-major, `channels` planes of `height` rows of `width` floats; plane `c` starts at
/// `c * width * height`.
struct FeatureMap {
    /// Grid width and height in cells.
    let width: Int, height: Int
    /// Number of planes.
    private(set) var channels: Int
    /// `channels * width * height` floats.
    var values: [Float]

    /// An all-zero map.
    init(width: Int, height: Int, channels: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        values = [Float](repeating: 0, count: width * height * channels)
    }

    /// Floats in one plane.
    var planeCount: Int { width * height }

    /// Adds `other`'s planes after this map's. - Precondition: same grid.
    mutating func append(_ other: FeatureMap) {
        precondition(other.width == width && other.height == height, "FeatureMap: grids differ")
        values += other.values
        channels += other.channels
    }

    /// Multiplies every plane by `window` (`width * height` floats), e.g. a Hann window.
    mutating func applyWindow(_ window: [Float]) {
        let n = planeCount
        values.withUnsafeMutableBufferPointer { v in
            for c in 0..<channels { for i in 0..<n { v[c * n + i] *= window[i] } }
        }
    }

    /// The separable Hann window over a `width × height` grid (0 at the borders' outer edge, 1 in the middle).
    static func hannWindow(width: Int, height: Int) -> [Float] {
        func hann(_ n: Int) -> [Float] {
            (0..<n).map { i in Float(0.5 - 0.5 * cos(2 * Double.pi * (Double(i) + 0.5) / Double(n))) }
        }
        let (wx, wy) = (hann(width), hann(height))
        return (0..<(width * height)).map { wy[$0 / width] * wx[$0 % width] }
    }
}
