/// Turning a stored pixel grid upright according to an EXIF orientation tag.
///
/// EXIF orientation says how the stored grid must be transformed for display:
/// 1 as stored, 2 mirrored left-right, 3 rotated 180°, 4 mirrored top-bottom,
/// 5 transposed (mirrored along the main diagonal), 6 rotated 90° clockwise,
/// 7 transversed (mirrored along the anti-diagonal), 8 rotated 90° counter-clockwise.
/// Tags 5–8 swap width and height.
enum ImageOrientation {
    /// Whether `orientation` swaps the width and height.
    static func swapsAxes(_ orientation: Int) -> Bool { (5...8).contains(orientation) }

    /// The upright pixels of a `width` x `height` grid stored with `orientation`, and their size.
    /// `channels` interleaved bytes per pixel.
    static func upright(_ pixels: [UInt8], width: Int, height: Int, channels: Int,
                        orientation: Int) -> (pixels: [UInt8], width: Int, height: Int) {
        guard (2...8).contains(orientation) else { return (pixels, width, height) }
        let (outW, outH) = swapsAxes(orientation) ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        let (sx, sy) = sourcePoint(x, y, width: width, height: height, orientation: orientation)
                        let s = (sy * width + sx) * channels, d = (y * outW + x) * channels
                        for c in 0..<channels { dst[d + c] = src[s + c] }
                    }
                }
            }
        }
        return (out, outW, outH)
    }

    /// The stored-grid point shown at upright point (x, y).
    static func sourcePoint(_ x: Int, _ y: Int, width w: Int, height h: Int, orientation: Int) -> (Int, Int) {
        switch orientation {
        case 2: return (w - 1 - x, y)
        case 3: return (w - 1 - x, h - 1 - y)
        case 4: return (x, h - 1 - y)
        case 5: return (y, x)
        case 6: return (y, h - 1 - x)
        case 7: return (w - 1 - y, h - 1 - x)
        case 8: return (w - 1 - y, x)
        default: return (x, y)
        }
    }
}

extension Image {
    /// This image turned clockwise by `degrees` (0, 90, 180 or 270; anything else returns it unchanged),
    /// e.g. to apply a video stream's display rotation.
    public func rotated(clockwise degrees: Int) -> Image {
        let tag: Int
        switch ((degrees % 360) + 360) % 360 {
        case 90: tag = 6
        case 180: tag = 3
        case 270: tag = 8
        default: return self
        }
        let turned = ImageOrientation.upright(pixels, width: width, height: height, channels: 3, orientation: tag)
        return Image(width: turned.width, height: turned.height, pixels: turned.pixels)
    }
}
