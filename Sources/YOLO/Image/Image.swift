/// An upright 8-bit RGB image: the engine's one image type.
///
/// Pixels are interleaved R, G, B, row-major, top row first, no padding:
/// pixel (x, y) starts at `(y * width + x) * 3`.
public struct Image: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    /// Wraps RGB pixels. - Precondition: `pixels.count == width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3,
                     "Image: \(pixels.count) bytes for \(width)x\(height) RGB")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The (r, g, b) of pixel (x, y).
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}
