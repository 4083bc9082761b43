/// How `Image(contentsOf:options:)` and `Image(data:name:options:)` decode a file.
public struct ImageDecodingOptions: Sendable {
    /// Rotate/flip the pixels by the JPEG's EXIF orientation tag so they come out upright.
    /// Default `true`. When `false` the stored pixel grid is returned as is (what darknet does);
    /// `Image.orientation` still records the tag.
    public var applyOrientation: Bool = true
    /// Refuse images with more than this many pixels (width x height of the file, before any
    /// DCT scaling), checked from the header before the pixel buffer is allocated.
    public var maxPixels: Int = 100_000_000
    /// Refuse images whose decoding would hold more than this many bytes at once: the decoder's
    /// output and intermediate pixel buffers and, for a progressive JPEG, its DCT coefficients,
    /// computed from the header before any is allocated (a 16-bit PNG takes 7 to 11 bytes a pixel
    /// where an 8-bit RGB one takes 3), or the decoded image (3 bytes a pixel) with what the caller
    /// will hold beside it (`extraBytesPerPixel`, `extraBytesPerRow`), whichever is more.
    /// Default `Int.max`: only `maxPixels` applies.
    public var maxDecodedBytes: Int = .max
    /// Bytes per decoded pixel that the caller will hold beside the image once it is decoded, such
    /// as a float copy for resampling; counted in `maxDecodedBytes`. Default 0.
    public var extraBytesPerPixel: Int = 0
    /// Bytes per decoded row that the caller will hold beside the image once it is decoded, such as
    /// a resampler's horizontal pass; counted in `maxDecodedBytes`. Default 0.
    public var extraBytesPerRow: Int = 0
    /// When set, a JPEG is decoded at the smallest DCT scale (1/2, 1/4 or 1/8) whose upright
    /// size is still at least this size in both axes; `Image.sourceWidth`/`sourceHeight` keep the
    /// full upright size. `nil` (the default) decodes at full size. PNGs are always full size.
    public var minimumSize: (width: Int, height: Int)? = nil

    /// Options with the defaults above.
    public init(applyOrientation: Bool = true, maxPixels: Int = 100_000_000,
                minimumSize: (width: Int, height: Int)? = nil, maxDecodedBytes: Int = .max,
                extraBytesPerPixel: Int = 0, extraBytesPerRow: Int = 0) {
        self.applyOrientation = applyOrientation
        self.maxPixels = maxPixels
        self.minimumSize = minimumSize
        self.maxDecodedBytes = maxDecodedBytes
        self.extraBytesPerPixel = extraBytesPerPixel
        self.extraBytesPerRow = extraBytesPerRow
    }
}
