// MARK: - Drawing boxes and labels (for annotated output)

extension Image {
    /// An RGB colour for drawing.
    public struct Color: Sendable, Hashable {
        /// Red, green and blue levels, 0...255 (sRGB-encoded, like the image's pixels).
        public var r: UInt8, g: UInt8, b: UInt8
        /// A colour from its red, green and blue levels (0...255).
        public init(r: UInt8, g: UInt8, b: UInt8) { self.r = r; self.g = g; self.b = b }
        /// (0, 0, 0).
        public static let black = Color(r: 0, g: 0, b: 0)
        /// (255, 255, 255).
        public static let white = Color(r: 255, g: 255, b: 255)
        /// Black or white, whichever reads better on this colour (by Rec. 601 luma).
        public var contrasting: Color {
            299 * Int(r) + 587 * Int(g) + 114 * Int(b) >= 140_000 ? .black : .white
        }
    }

    // MARK: Rectangles

    /// Fills the pixels x ..< x + width, y ..< y + height, clipped to the image.
    public mutating func fillRectangle(x: Int, y: Int, width: Int, height: Int, color: Color) {
        guard width > 0, height > 0 else { return }
        fillSpan(x0: x, x1: x.addingClamped(width), y0: y, y1: y.addingClamped(height), color: color)
    }

    /// Draws the outline of the rectangle x ..< x + width, y ..< y + height, `thickness` pixels
    /// wide, growing inward (the outline never leaves the rectangle), clipped to the image.
    public mutating func drawRectangle(x: Int, y: Int, width: Int, height: Int, color: Color, thickness: Int = 1) {
        guard width > 0, height > 0, thickness > 0 else { return }
        let x1 = x.addingClamped(width), y1 = y.addingClamped(height)
        let t = Swift.min(thickness, width / 2 + width % 2, height / 2 + height % 2)
        let innerTop = y.addingClamped(t), innerBottom = y1.addingClamped(-t)
        fillSpan(x0: x, x1: x1, y0: y, y1: innerTop, color: color)                           // top
        fillSpan(x0: x, x1: x1, y0: innerBottom, y1: y1, color: color)                       // bottom
        fillSpan(x0: x, x1: x.addingClamped(t), y0: innerTop, y1: innerBottom, color: color)   // left
        fillSpan(x0: x1.addingClamped(-t), x1: x1, y0: innerTop, y1: innerBottom, color: color) // right
    }

    /// Fills columns x0 ..< x1 of rows y0 ..< y1 (ends exclusive), clipped to the image.
    private mutating func fillSpan(x0: Int, x1: Int, y0: Int, y1: Int, color: Color) {
        let left = Swift.max(0, x0), right = Swift.min(width, x1)
        let top = Swift.max(0, y0), bottom = Swift.min(height, y1)
        guard left < right, top < bottom else { return }
        let w = width
        pixels.withUnsafeMutableBufferPointer { p in
            for row in top..<bottom {
                for column in left..<right {
                    let i = (row * w + column) * 3
                    p[i] = color.r; p[i + 1] = color.g; p[i + 2] = color.b
                }
            }
        }
    }

    // MARK: Text

    /// The size in pixels of `text` drawn with the built-in 5x7 font at `scale`.
    /// - Precondition: `1 <= scale <= 10_000`.
    public static func textSize(_ text: String, scale: Int = 1) -> (width: Int, height: Int) {
        precondition((1...10_000).contains(scale), "textSize: scale \(scale) outside 1...10000")
        let n = text.count
        return (n == 0 ? 0 : (n * BitmapFont.advance - 1) * scale, BitmapFont.glyphHeight * scale)
    }

    /// Draws `text` with the built-in 5x7 font, each font pixel a `scale` x `scale` square, its
    /// top-left corner at (x, y), clipped to the image. Characters outside printable ASCII draw as `?`.
    /// - Precondition: `1 <= scale <= 10_000`.
    public mutating func drawText(_ text: String, x: Int, y: Int, color: Color, scale: Int = 1) {
        precondition((1...10_000).contains(scale), "drawText: scale \(scale) outside 1...10000")
        var left = x
        for character in text {
            for (row, bits) in BitmapFont.glyph(character).enumerated() {
                for column in 0..<BitmapFont.glyphWidth where bits & (0x10 >> UInt8(column)) != 0 {
                    fillRectangle(x: left.addingClamped(column * scale), y: y.addingClamped(row * scale),
                                  width: scale, height: scale, color: color)
                }
            }
            left = left.addingClamped(BitmapFont.advance * scale)
        }
    }

    // MARK: Labelled boxes

    /// Line thickness and text scale that stay readable at this image's size: 1 and 1 up to
    /// 300 pixels on the short side, then one more per 300 pixels (2 and 2 at 600x400 and 640x480).
    var annotationScale: (thickness: Int, textScale: Int) {
        let s = max(1, Int((Double(min(width, height)) / 300).rounded(.up)))
        return (s, s)
    }

    /// Draws a detection: the box outline, and a filled tag in the same colour holding `label`
    /// (e.g. "dog 87%") in black or white, whichever contrasts. The tag sits on the box's top
    /// edge, outside the box, or inside it when there is no room above; it is shifted to stay
    /// inside the image. Box coordinates are pixels of this image, rounded to the nearest pixel;
    /// a box with a non-finite coordinate is not drawn.
    public mutating func labelBox(x: Double, y: Double, width: Double, height: Double, label: String,
                                  color: Color, thickness: Int? = nil, textScale: Int? = nil) {
        guard [x, y, width, height].allSatisfy(\.isFinite) else { return }
        let t = thickness ?? annotationScale.thickness
        let s = min(1000, max(1, textScale ?? annotationScale.textScale))
        func pixel(_ v: Double) -> Int { Int(min(max(v, -1e9), 1e9).rounded()) }  // far-off boxes stay far off
        let x0 = pixel(x), y0 = pixel(y), x1 = pixel(x + width), y1 = pixel(y + height)
        drawRectangle(x: x0, y: y0, width: x1 - x0, height: y1 - y0, color: color, thickness: t)
        guard !label.isEmpty else { return }
        let text = Self.textSize(label, scale: s)
        let pad = s
        let tagW = text.width + 2 * pad, tagH = text.height + 2 * pad
        var tagX = min(x0, self.width - tagW)
        var tagY = y0.addingClamped(-tagH) >= 0 ? y0 - tagH : y0
        tagX = max(0, tagX)
        tagY = max(0, min(tagY, self.height - tagH))
        fillRectangle(x: tagX, y: tagY, width: tagW, height: tagH, color: color)
        drawText(label, x: tagX + pad, y: tagY + pad, color: color.contrasting, scale: s)
    }

    // MARK: Class colours

    /// A distinct, deterministic colour for class `index` of `count`: hues evenly spaced around
    /// the colour wheel, visited in a stride that puts neighbouring indices far apart, with every
    /// other class darker so that more than a dozen classes stay distinguishable.
    /// - Precondition: `0 <= index < count`.
    public static func classColor(index: Int, count: Int) -> Color {
        precondition(count > 0 && (0..<count).contains(index), "classColor: index \(index) of \(count)")
        var stride = max(1, Int((Double(count) * 0.382).rounded()))
        while gcd(stride, count) != 1 { stride += 1 }
        let hue = Double((index * stride) % count) / Double(count)
        return hsv(hue: hue, saturation: 0.85, value: index % 2 == 0 ? 0.95 : 0.7)
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    /// HSV (each 0...1, hue in turns) to 8-bit RGB.
    private static func hsv(hue: Double, saturation: Double, value: Double) -> Color {
        let h = hue * 6, sector = Int(h) % 6, f = h - Double(Int(h))
        let p = value * (1 - saturation), q = value * (1 - saturation * f), t = value * (1 - saturation * (1 - f))
        let (r, g, b): (Double, Double, Double) = [(value, t, p), (q, value, p), (p, value, t),
                                                   (p, q, value), (t, p, value), (value, p, q)][sector]
        func level(_ v: Double) -> UInt8 { UInt8((v * 255).rounded()) }
        return Color(r: level(r), g: level(g), b: level(b))
    }
}

private extension Int {
    /// `self + other`, clamped instead of overflowing (drawing with absurd coordinates must not trap).
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? Int.max : Int.min) : sum
    }
}
