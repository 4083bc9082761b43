// MARK: - OpenCV-compatible bilinear resize of 8-bit pixels

@_spi(Engine) extension Image {
    /// Resizes `region` of this image to `width × height` exactly as OpenCV's `cv::resize` with
    /// `INTER_LINEAR` does on 8-bit pixels (its vectorized path, as in opencv-python 4.x on x86-64):
    ///
    /// - source position `(d + 0.5) · in/out − 0.5` computed in float32;
    /// - horizontally, a position left of the first pixel or right of the last is clamped there (weight 0);
    ///   vertically, rows outside the image repeat the edge row (both weights kept);
    /// - weights are `round(w · 2048)`; the horizontal pass keeps integer sums, the vertical pass computes
    ///   `((b0 · (s0 >> 4)) >> 16 + (b1 · (s1 >> 4)) >> 16 + 2) >> 2`.
    ///
    /// Checked against opencv-python 4.14 on every image of the project's reference set (identical bytes).
    /// OpenCV switches to area averaging for exact 2× reductions; this function does not.
    /// - Returns: RGB interleaved 8-bit pixels, `width · height · 3` bytes.
    public func resizedOpenCVLinear(region: PixelRegion, width outW: Int, height outH: Int) -> [UInt8] {
        precondition(region.x >= 0 && region.y >= 0 && region.width > 0 && region.height > 0
                     && region.x + region.width <= width && region.y + region.height <= height && outW > 0 && outH > 0,
                     "resizedOpenCVLinear: bad region or size")
        var result = [UInt8](repeating: 0, count: outW * outH * 3)
        result.withUnsafeMutableBufferPointer { out in
            withRows { rows in
                Resample.openCVLinear(rows, region: region, width: outW, height: outH, gray: false) { y, rgb in
                    (out.baseAddress! + y * outW * 3).update(from: rgb, count: outW * 3)
                }
            }
        }
        return result
    }

    /// Per output position: first source index (may be −1 vertically) and the two fixed-point weights.
    static func openCVTaps(input: Int, output: Int, clampBothEnds: Bool) -> [(index: Int, w0: Int32, w1: Int32)] {
        let scale = Double(input) / Double(output)
        return (0..<output).map { d in
            var f = Float((Double(d) + 0.5) * scale - 0.5)
            var index = Int(f.rounded(.down))
            f -= Float(index)
            if clampBothEnds {
                if index < 0 { (index, f) = (0, 0) }
                if index >= input - 1 { (index, f) = (input - 1, 0) }
            }
            return (index, Int32(((1 - f) * 2048).rounded()), Int32((f * 2048).rounded()))
        }
    }
}
