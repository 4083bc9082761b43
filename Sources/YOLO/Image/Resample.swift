/// Resampling of planar float images (CHW, values in [0, 1]) for building network inputs.
///
/// Two kernels, both separable bilinear:
/// - `darknet`: darknet's `resize_image`, corner-aligned (`scale = (in − 1)/(out − 1)`), horizontal
///   pass first, all arithmetic in float32. The last output column copies the last input column and the
///   last output row gets only the `(1 − dy)` term — darknet's quirks, kept so that `.scaleFit` is
///   pixel-for-pixel what `darknet detect` feeds the network.
/// - `openCVLinear`: OpenCV's `cv::resize(..., INTER_LINEAR)` on 8-bit pixels, bit for bit (see
///   `Image.resizedOpenCVLinear`): centre-aligned, 11-bit fixed-point weights, result rounded to 8 bits,
///   then divided by 255 — what `cv2.dnn.blobFromImage` feeds a network.
enum ResampleKernel: Sendable {
    case darknet
    case openCVLinear
}

/// A planar float image: `channels` planes of `height × width` values.
struct PlanarImage: Sendable {
    var width: Int
    var height: Int
    var channels: Int
    var values: [Float]

    init(width: Int, height: Int, channels: Int, values: [Float]) {
        precondition(values.count == width * height * channels, "PlanarImage: size mismatch")
        self.width = width
        self.height = height
        self.channels = channels
        self.values = values
    }

    /// The pixels of `region` (x, y, width, height in pixels) of `image` as planar RGB floats `v / 255`.
    init(_ image: Image, region: (x: Int, y: Int, width: Int, height: Int)) {
        precondition(region.x >= 0 && region.y >= 0 && region.width > 0 && region.height > 0
                     && region.x + region.width <= image.width && region.y + region.height <= image.height,
                     "PlanarImage: region outside the image")
        let plane = region.width * region.height
        var values = [Float](repeating: 0, count: plane * 3)
        image.pixels.withUnsafeBufferPointer { source in
            values.withUnsafeMutableBufferPointer { destination in
                for y in 0..<region.height {
                    var s = ((region.y + y) * image.width + region.x) * 3
                    let row = y * region.width
                    for x in 0..<region.width {
                        destination[row + x] = Float(source[s]) / 255
                        destination[plane + row + x] = Float(source[s + 1]) / 255
                        destination[2 * plane + row + x] = Float(source[s + 2]) / 255
                        s += 3
                    }
                }
            }
        }
        self.init(width: region.width, height: region.height, channels: 3, values: values)
    }

    /// This image resampled to `width × height` with darknet's `resize_image`.
    func resized(width outW: Int, height outH: Int) -> PlanarImage {
        precondition(outW > 0 && outH > 0, "resized: empty target")
        return darknetResized(width: outW, height: outH)
    }

    // MARK: darknet

    private func darknetResized(width outW: Int, height outH: Int) -> PlanarImage {
        // A one-pixel target has no scale (darknet divides by zero there); it takes the first row / last column.
        let wScale = outW > 1 ? Float(width - 1) / Float(outW - 1) : 0
        let hScale = outH > 1 ? Float(height - 1) / Float(outH - 1) : 0
        // Horizontal pass: width → outW, every input row.
        var part = [Float](repeating: 0, count: outW * height * channels)
        for k in 0..<channels {
            for r in 0..<height {
                let source = k * width * height + r * width
                let destination = (k * height + r) * outW
                for c in 0..<outW {
                    if c == outW - 1 || width == 1 {
                        part[destination + c] = values[source + width - 1]
                    } else {
                        let sx = Float(c) * wScale
                        let ix = Int(sx)
                        let dx = sx - Float(ix)
                        part[destination + c] = (1 - dx) * values[source + ix] + dx * values[source + ix + 1]
                    }
                }
            }
        }
        // Vertical pass: height → outH.
        var result = [Float](repeating: 0, count: outW * outH * channels)
        for k in 0..<channels {
            for r in 0..<outH {
                let sy = Float(r) * hScale
                let iy = Int(sy)
                let dy = sy - Float(iy)
                let destination = (k * outH + r) * outW
                let upper = (k * height + iy) * outW
                for c in 0..<outW { result[destination + c] = (1 - dy) * part[upper + c] }
                if r == outH - 1 || height == 1 { continue }
                let lower = upper + outW
                for c in 0..<outW { result[destination + c] += dy * part[lower + c] }
            }
        }
        return PlanarImage(width: outW, height: outH, channels: channels, values: result)
    }
}
