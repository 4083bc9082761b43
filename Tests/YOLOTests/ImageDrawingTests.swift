import Testing
@_spi(Engine) @testable import YOLO

/// Rectangles, text, labelled boxes and class colours, checked pixel by pixel.
struct ImageDrawingTests {
    static let red = Image.Color(r: 255, g: 0, b: 0)

    static func blank(_ w: Int, _ h: Int, _ level: UInt8 = 0) -> Image {
        Image(width: w, height: h, pixels: [UInt8](repeating: level, count: w * h * 3))
    }

    /// The set of (x, y) whose pixel is `color`.
    static func points(_ image: Image, _ color: Image.Color) -> Set<[Int]> {
        var out = Set<[Int]>()
        for y in 0..<image.height {
            for x in 0..<image.width where image[x, y] == (color.r, color.g, color.b) { out.insert([x, y]) }
        }
        return out
    }

    /// The points of an outline computed directly from its definition, clipped to w x h.
    static func outline(x: Int, y: Int, width: Int, height: Int, t: Int, w: Int, h: Int) -> Set<[Int]> {
        var out = Set<[Int]>()
        for py in y..<(y + height) {
            for px in x..<(x + width) where (0..<w).contains(px) && (0..<h).contains(py) {
                let inner = px >= x + t && px < x + width - t && py >= y + t && py < y + height - t
                if !inner { out.insert([px, py]) }
            }
        }
        return out
    }

    @Test("Rectangle outlines grow inward and are clipped at every edge",
          arguments: [(5, 5, 8, 6, 2), (-3, 15, 10, 10, 1), (12, -4, 20, 9, 3), (-5, -5, 40, 40, 2), (2, 3, 4, 4, 9),
                      (30, 30, 5, 5, 1)])
    func rectangles(x: Int, y: Int, width: Int, height: Int, t: Int) {
        var image = Self.blank(20, 18)
        image.drawRectangle(x: x, y: y, width: width, height: height, color: Self.red, thickness: t)
        let expected = Self.outline(x: x, y: y, width: width, height: height, t: t, w: 20, h: 18)
        #expect(Self.points(image, Self.red) == expected)
        // Everything else untouched.
        #expect(image.pixels.filter { $0 != 0 }.count == expected.count)
    }

    @Test("Filled rectangles are clipped; absurd coordinates do nothing")
    func fills() {
        var image = Self.blank(10, 10)
        image.fillRectangle(x: 7, y: -2, width: 10, height: 5, color: Self.red)
        #expect(Self.points(image, Self.red) == Set((7..<10).flatMap { x in (0..<3).map { [x, $0] } }))
        var other = Self.blank(10, 10)
        other.fillRectangle(x: Int.max - 1, y: Int.min, width: Int.max, height: Int.max, color: Self.red)
        other.drawRectangle(x: Int.min, y: Int.max, width: Int.max, height: Int.max, color: Self.red, thickness: Int.max)
        other.labelBox(x: .nan, y: 1, width: 3, height: 3, label: "x", color: Self.red)
        other.labelBox(x: -1e300, y: 1e300, width: .infinity, height: 3, label: "x", color: Self.red)
        #expect(other.pixels.allSatisfy { $0 == 0 })
    }

    @Test("Text draws each glyph's ink, scaled; unknown characters draw as ?")
    func text() {
        let ink = { (glyph: ArraySlice<UInt8>) in glyph.reduce(0) { $0 + $1.nonzeroBitCount } }
        for scale in 1...3 {
            var image = Self.blank(40, 30)
            image.drawText("A7", x: 2, y: 3, color: .white, scale: scale)
            let lit = Self.points(image, .white)
            #expect(lit.count == (ink(BitmapFont.glyph("A")) + ink(BitmapFont.glyph("7"))) * scale * scale)
            let size = Image.textSize("A7", scale: scale)
            #expect(size.width == 11 * scale && size.height == 7 * scale)
            #expect(lit.allSatisfy { $0[0] >= 2 && $0[0] < 2 + size.width && $0[1] >= 3 && $0[1] < 3 + size.height })
        }
        // "A" row 3 is the bar: all five columns inked.
        #expect(BitmapFont.glyph("A")[BitmapFont.glyph("A").startIndex + 3] == 0b11111)
        #expect(BitmapFont.glyph("é") == BitmapFont.glyph("?"))
        #expect(BitmapFont.rows.count == 95 * 7)
        #expect(Set((32...126).map { BitmapFont.glyph(Character(UnicodeScalar(UInt8($0)))) }).count == 95)  // all distinct
    }

    @Test("labelBox: tag above the box, inside it at the top edge, shifted in at the right edge")
    func labels() {
        let green = Image.Color(r: 0, g: 200, b: 0)  // luma 117 of 255: white text
        // Room above: the tag's bottom row touches the box's top edge.
        var image = Self.blank(100, 60, 128)
        image.labelBox(x: 10, y: 30, width: 40, height: 20, label: "dog 87%", color: green, thickness: 1, textScale: 1)
        let tagH = 7 + 2, tagW = Image.textSize("dog 87%").width + 2
        #expect(image[10, 30 - tagH] == (0, 200, 0) && image[10 + tagW - 1, 29] == (0, 200, 0))
        #expect(image[10, 30 - tagH - 1] == (128, 128, 128))
        let textPixels = (30 - tagH..<30).flatMap { y in (10..<(10 + tagW)).map { (x: $0, y: y) } }
            .filter { image[$0.x, $0.y] == (255, 255, 255) }
        #expect(textPixels.count > 20)
        // No room above: the tag goes inside the box, from its top edge.
        var top = Self.blank(100, 60, 128)
        top.labelBox(x: 10, y: 2, width: 40, height: 20, label: "cat", color: .black, thickness: 1, textScale: 1)
        #expect(top[10, 2] == (0, 0, 0) && top[10, 2 + tagH - 1] == (0, 0, 0))
        #expect(Self.points(top, .white).count > 10)  // white text on the black tag
        // At the right edge the tag is shifted left to stay inside the image.
        var right = Self.blank(100, 60, 128)
        right.labelBox(x: 90, y: 30, width: 9, height: 20, label: "dog 87%", color: green, thickness: 1, textScale: 2)
        let wide = Image.textSize("dog 87%", scale: 2).width + 4  // 86 of 100 pixels
        #expect(right[99, 29] == (0, 200, 0) && right[100 - wide, 29] == (0, 200, 0) && right[99 - wide, 29] == (128, 128, 128))
    }

    @Test("Class colours are deterministic and distinct; neighbours differ strongly")
    func classColors() {
        for count in [1, 2, 3, 20, 80] {
            let colors = (0..<count).map { Image.classColor(index: $0, count: count) }
            #expect(Set(colors).count == count)
            #expect(colors == (0..<count).map { Image.classColor(index: $0, count: count) })
            for i in 1..<max(1, count) {
                let a = colors[i - 1], b = colors[i]
                let distance = abs(Int(a.r) - Int(b.r)) + abs(Int(a.g) - Int(b.g)) + abs(Int(a.b) - Int(b.b))
                #expect(distance >= 100, "classes \(i - 1) and \(i) of \(count): \(a) vs \(b)")
            }
        }
        #expect(Image.Color.white.contrasting == .black && Image.Color.black.contrasting == .white)
    }

    @Test("annotationScale grows with the image")
    func scales() {
        #expect(Self.blank(300, 200).annotationScale == (1, 1))
        #expect(Self.blank(640, 480).annotationScale == (2, 2))
        #expect(Self.blank(4000, 3000).annotationScale == (10, 10))
    }
}
