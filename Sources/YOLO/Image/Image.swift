/// An upright 8-bit RGB image: the engine's one image type.
///
/// Pixels are interleaved R, G, B, row-major, top row first, no padding:
/// pixel (x, y) starts at `(y * width + x) * 3`.
///
/// Decoded images also carry what the decoder learned about the file: the upright size of the
/// full-resolution original (`sourceWidth` x `sourceHeight`, larger than `width` x `height` only
/// when a JPEG was decoded at a reduced DCT scale), the EXIF orientation found, and any warnings
/// (for example a truncated JPEG whose missing rows were filled in by the decoder).
///
/// Equality compares size, pixels and the decoder's metadata.
public struct Image: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]
    /// Width in pixels of the full-resolution upright original this image was decoded from.
    /// Equals `width` unless a JPEG was decoded at a reduced DCT scale (`ImageDecodingOptions.minimumSize`).
    public let sourceWidth: Int
    /// Height in pixels of the full-resolution upright original; see `sourceWidth`.
    public let sourceHeight: Int
    /// The EXIF orientation tag (1...8) found in the file, 1 when there was none or it was unreadable.
    /// When it was applied (`ImageDecodingOptions.applyOrientation`), `pixels` are already upright.
    public internal(set) var orientation: Int = 1
    /// Non-fatal problems the decoder reported, one line each (for example "premature end of JPEG
    /// file": the image is partial, the missing part filled by the decoder). Empty for a clean file.
    public internal(set) var decodeWarnings: [String] = []

    /// Wraps RGB pixels. - Precondition: `pixels.count == width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        self.init(width: width, height: height, pixels: pixels, sourceWidth: width, sourceHeight: height)
    }

    /// Wraps RGB pixels that were decoded at reduced scale from an original of `sourceWidth` x
    /// `sourceHeight` upright pixels.
    /// - Precondition: `pixels.count == width * height * 3`, source size at least the image size.
    @_spi(Engine) public init(width: Int, height: Int, pixels: [UInt8], sourceWidth: Int, sourceHeight: Int) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3,
                     "Image: \(pixels.count) bytes for \(width)x\(height) RGB")
        precondition(sourceWidth >= width && sourceHeight >= height,
                     "Image: source size \(sourceWidth)x\(sourceHeight) smaller than \(width)x\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
    }

    /// The (r, g, b) of pixel (x, y).
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}

extension Image: CustomStringConvertible, CustomReflectable {
    /// A one-line summary (size, and where it differs the original's size and the EXIF orientation),
    /// never the pixels: `print(image)` in an app's log stays one line.
    public var description: String {
        var text = "Image(\(width)x\(height) RGB"
        if sourceWidth != width || sourceHeight != height { text += ", decoded from \(sourceWidth)x\(sourceHeight)" }
        if orientation != 1 { text += ", EXIF orientation \(orientation)" }
        if !decodeWarnings.isEmpty { text += ", \(decodeWarnings.count) decoder warning(s)" }
        return text + ")"
    }

    /// What `dump` and debuggers show: the summary fields, and the pixel count instead of the pixels.
    public var customMirror: Mirror {
        Mirror(self, children: ["width": width, "height": height, "sourceWidth": sourceWidth, "sourceHeight": sourceHeight,
                                "orientation": orientation, "decodeWarnings": decodeWarnings, "pixelBytes": pixels.count],
               displayStyle: .struct)
    }
}
