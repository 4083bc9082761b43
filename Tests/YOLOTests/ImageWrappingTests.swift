import Testing
@_spi(Engine) @testable import YOLO

/// Copying caller pixel buffers (RGB, RGBA, BGRA, padded rows) into RGB images.
struct ImageWrappingTests {
    /// A 3x2 buffer in `format` with `padding` junk bytes after each row; pixel i has R = 10 i + 1,
    /// G = 10 i + 2, B = 10 i + 3 and alpha 99.
    static func buffer(_ format: Image.PixelFormat, padding: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<2 {
            for x in 0..<3 {
                let i = UInt8(y * 3 + x) * 10
                switch format {
                case .rgb8: bytes += [i + 1, i + 2, i + 3]
                case .rgba8: bytes += [i + 1, i + 2, i + 3, 99]
                case .bgra8: bytes += [i + 3, i + 2, i + 1, 99]
                }
            }
            bytes += [UInt8](repeating: 0xEE, count: padding)
        }
        return bytes
    }

    static let expected: [UInt8] = [1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43, 51, 52, 53]

    @Test("Each format, packed and padded, gives the same RGB", arguments: Image.PixelFormat.allCases)
    func formats(format: Image.PixelFormat) throws {
        for padding in [0, 5] {
            let bytes = Self.buffer(format, padding: padding)
            let stride = 3 * format.bytesPerPixel + padding
            let image = try Image(wrapping: bytes, width: 3, height: 2, bytesPerRow: stride, format: format)
            #expect(image.pixels == Self.expected)
            // The last row's padding is not required.
            let trimmed = Array(bytes.dropLast(padding))
            #expect(try Image(wrapping: trimmed, width: 3, height: 2, bytesPerRow: stride, format: format).pixels == Self.expected)
        }
    }

    @Test("Sizes that do not fit are errors, not crashes")
    func invalid() {
        let bytes = Self.buffer(.rgba8, padding: 0)
        for (w, h, stride) in [(0, 2, 12), (3, -1, 12), (3, 2, 11), (3, 3, 12), (4, 2, 16), (Int.max / 2, 2, Int.max)] {
            #expect(throws: YOLOError.self) {
                try Image(wrapping: bytes, width: w, height: h, bytesPerRow: stride, format: .rgba8)
            }
        }
    }
}
