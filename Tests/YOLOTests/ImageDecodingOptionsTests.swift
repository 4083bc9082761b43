import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// The size limit and DCT-scaled decoding.
struct ImageDecodingOptionsTests {
    static func fixture(_ name: String) -> String { ImageTestSupport.fixtures.appendingPathComponent(name).path }

    @Test("Images over maxPixels are refused from the header; at the limit they decode")
    func maxPixels() throws {
        for name in ["jpeg_128x96.jpg", "png_rgb16.png"] {
            let path = Self.fixture(name)
            let full = try Image(contentsOf: path)
            let limit = full.width * full.height
            #expect(try Image(contentsOf: path, options: ImageDecodingOptions(maxPixels: limit)).width == full.width)
            #expect(throws: YOLOError.invalidImage(path: path, message:
                "image is \(full.width)x\(full.height) pixels, more than the limit of \(limit - 1)")) {
                try Image(contentsOf: path, options: ImageDecodingOptions(maxPixels: limit - 1))
            }
        }
    }

    /// What each decoder holds at once, in bytes (7 x 5 PNGs, 32 x 24 JPEGs unless named): the RGB result
    /// and libpng's own output (16-bit: 2 bytes a sample; 8-bit with alpha or tRNS: 4 a pixel), TurboJPEG's
    /// output with the RGB of a CMYK file or the upright copy, a progressive JPEG's coefficients (4:2:0:
    /// 3 bytes a pixel); or the decoded image with what the caller will hold beside it, if more.
    @Test("Images needing more than maxDecodedBytes are refused from the header; at the limit they decode",
          arguments: [("png_rgb8.png", 0, 0, 105), ("png_rgba8.png", 0, 0, 245), ("png_palette8_trns.png", 0, 0, 245),
                      ("png_rgb16.png", 0, 0, 315), ("png_rgba16.png", 0, 0, 245), ("png_rgba16_gamma_interlaced.png", 0, 0, 385),
                      ("png_rgb8.png", 12, 0, 525), ("png_rgb8.png", 12, 100, 1025), ("png_rgba16.png", 1, 0, 245),
                      ("jpeg_128x96.jpg", 0, 0, 36_864), ("jpeg_gray.jpg", 0, 0, 2304), ("jpeg_orientation_6.jpg", 0, 0, 4608),
                      ("jpeg_orientation_6.jpg", 0, 1000, 26_304), ("jpeg_cmyk_adobe.jpg", 0, 0, 5376), ("jpeg_progressive.jpg", 0, 0, 4608)])
    func maxDecodedBytes(name: String, perPixel: Int, perRow: Int, bytes: Int) throws {
        let path = Self.fixture(name)
        var options = ImageDecodingOptions(maxDecodedBytes: bytes, extraBytesPerPixel: perPixel, extraBytesPerRow: perRow)
        let image = try Image(contentsOf: path, options: options)
        #expect(image.pixels == (try Image(contentsOf: path)).pixels)
        options.maxDecodedBytes = bytes - 1
        #expect {
            try Image(contentsOf: path, options: options)
        } throws: { error in
            "\(error)".contains("needs \(bytes) bytes of memory, more than the limit of \(bytes - 1)")
        }
    }

    @Test("A JPEG decoded at a DCT scale needs the memory of the scaled size")
    func maxDecodedBytesScaled() throws {
        let options = ImageDecodingOptions(minimumSize: (width: 30, height: 20), maxDecodedBytes: 32 * 24 * 3)
        let image = try Image(contentsOf: Self.fixture("jpeg_128x96.jpg"), options: options)
        #expect(image.width == 32 && image.height == 24)
    }

    @Test("A PNG header claiming 0 or 2^31 pixels wide is refused before decoding")
    func absurdSizes() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture("png_rgb8.png"))))
        for width: UInt32 in [0, 0x7FFF_FFFF] {
            bytes[16] = UInt8(width >> 24); bytes[17] = UInt8((width >> 16) & 0xFF)
            bytes[18] = UInt8((width >> 8) & 0xFF); bytes[19] = UInt8(width & 0xFF)
            #expect(throws: YOLOError.self) { try Image(data: Data(bytes), name: "big.png") }
        }
    }

    @Test("minimumSize picks the smallest DCT scale still at least that large",
          arguments: [((30, 20), 32, 24), ((33, 20), 64, 48), ((64, 48), 64, 48), ((65, 1), 128, 96),
                      ((1, 1), 16, 12), ((500, 500), 128, 96)])
    func scaled(minimum: (Int, Int), width: Int, height: Int) throws {
        let path = Self.fixture("jpeg_128x96.jpg")
        let options = ImageDecodingOptions(minimumSize: (width: minimum.0, height: minimum.1))
        let image = try Image(contentsOf: path, options: options)
        #expect(image.width == width && image.height == height)
        #expect(image.sourceWidth == 128 && image.sourceHeight == 96)
        // Same picture: compare with a box-averaged full decode. The fixture is a 4x-upscaled
        // (blocky) pattern, so the scaled IDCT differs only near block edges: bound the mean.
        let full = try Image(contentsOf: path)
        let factor = 128 / width
        var total = 0
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 {
                    var sum = 0
                    for dy in 0..<factor { for dx in 0..<factor { sum += Int(full.pixels[((y * factor + dy) * 128 + x * factor + dx) * 3 + c]) } }
                    total += abs(sum / (factor * factor) - Int(image.pixels[(y * width + x) * 3 + c]))
                }
            }
        }
        #expect(Double(total) / Double(width * height * 3) <= 4.0)
    }

    @Test("DCT scaling uses the upright size for rotated images, and leaves PNGs alone")
    func scaledUpright() throws {
        let rotated = Self.fixture("jpeg_orientation_6.jpg")  // stored 24x32, upright 32x24
        let half = try Image(contentsOf: rotated, options: ImageDecodingOptions(minimumSize: (width: 16, height: 12)))
        #expect(half.width == 16 && half.height == 12 && half.sourceWidth == 32 && half.sourceHeight == 24)
        let full = try Image(contentsOf: rotated, options: ImageDecodingOptions(minimumSize: (width: 17, height: 12)))
        #expect(full.width == 32 && full.height == 24)
        let png = try Image(contentsOf: Self.fixture("png_rgb8.png"), options: ImageDecodingOptions(minimumSize: (width: 1, height: 1)))
        #expect(png.width == 7 && png.sourceWidth == 7)
    }
}
