/// Resamples a window of a frame to a fixed size: the tracker's view of the object and its surroundings.
///
/// The window is centred on (`centerX`, `centerY`) (frame pixels, continuous: pixel (i, j) covers [i, i+1) × [j, j+1)
/// and has its centre at i + 0.5) and spans `windowWidth × windowHeight` frame pixels; the output has
/// `width × height` samples, bilinear, with coordinates clamped to the frame (the edge pixels repeat outside it).
/// When a window sample spans more than three frame pixels, each sample averages a 2×2 grid of bilinear taps
/// spread over its footprint, which keeps downscaled HOG from aliasing.
struct PatchSampler {
    let centerX: Double, centerY: Double
    let windowWidth: Double, windowHeight: Double
    let width: Int, height: Int
    /// Average 2×2 taps per sample whatever the step (consistent smoothing across scales), not only past 3 pixels.
    var alwaysAntialias = false

    /// Frame x of output column `i` (its sample centre), and likewise y of row `j`.
    private func frameX(_ i: Double) -> Double { centerX + (i + 0.5 - Double(width) / 2) * windowWidth / Double(width) }
    private func frameY(_ j: Double) -> Double { centerY + (j + 0.5 - Double(height) / 2) * windowHeight / Double(height) }

    /// The luma window, `width * height` floats, row-major.
    func gray(_ frame: TrackingFrame) -> [Float] {
        frame.gray.withUnsafeBufferPointer { sample($0, channels: 1, frameWidth: frame.width, frameHeight: frame.height) }
    }

    /// The RGB window, 0…255 as floats, interleaved, `3 * width * height` floats.
    func rgb(_ frame: TrackingFrame) -> [Float] {
        frame.image.pixels.withUnsafeBufferPointer { sample($0, channels: 3, frameWidth: frame.width, frameHeight: frame.height) }
    }

    private func sample<P: SampledPixel>(_ source: UnsafeBufferPointer<P>, channels: Int, frameWidth: Int, frameHeight: Int)
        -> [Float] {
        let stepX = windowWidth / Double(width), stepY = windowHeight / Double(height)
        let taps = alwaysAntialias || stepX > 3 || stepY > 3 ? [-0.25, 0.25] : [0.0]
        let weight = Float(1) / Float(taps.count * taps.count)
        // Per output column and tap: the two source offsets (pixel × channels) and the right one's weight.
        var columns: [(Int, Int, Float)] = []
        for i in 0..<width {
            for t in taps {
                let (x0, x1, fx) = Self.taps(frameX(Double(i)) + t * stepX, limit: frameWidth)
                columns.append((x0 * channels, x1 * channels, fx))
            }
        }
        let rowStride = frameWidth * channels, tapCount = taps.count
        return [Float](unsafeUninitializedCapacity: width * height * channels) { out, initialized in
            out.initialize(repeating: 0)
            for j in 0..<height {
                for ty in taps {
                    let (y0, y1, fy) = Self.taps(frameY(Double(j)) + ty * stepY, limit: frameHeight)
                    let (top, bottom) = (y0 * rowStride, y1 * rowStride)
                    let (wTop, wBottom) = (weight * (1 - fy), weight * fy)
                    var o = j * width * channels
                    for i in 0..<width {
                        for t in 0..<tapCount {
                            let (a, b, fx) = columns[i * tapCount + t]
                            for c in 0..<channels {
                                let upper = source[top + a + c].floatValue * (1 - fx) + source[top + b + c].floatValue * fx
                                let lower = source[bottom + a + c].floatValue * (1 - fx) + source[bottom + b + c].floatValue * fx
                                out[o + c] += wTop * upper + wBottom * lower
                            }
                        }
                        o += channels
                    }
                }
            }
            initialized = width * height * channels
        }
    }

    /// The two neighbouring pixel indices of continuous coordinate `p` and the weight of the second, clamped.
    private static func taps(_ p: Double, limit: Int) -> (Int, Int, Float) {
        let q = min(max(p - 0.5, 0), Double(limit - 1))
        let i0 = Int(q)
        return (i0, min(i0 + 1, limit - 1), Float(q - Double(i0)))
    }
}

/// A sample type the patch sampler reads: luma floats or RGB bytes.
protocol SampledPixel { var floatValue: Float { get } }
extension Float: SampledPixel { var floatValue: Float { self } }
extension UInt8: SampledPixel { var floatValue: Float { Float(self) } }
