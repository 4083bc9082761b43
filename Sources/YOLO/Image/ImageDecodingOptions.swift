/// How `Image(contentsOf:options:)` and `Image(data:name:options:)` decode a file.
public struct ImageDecodingOptions: Sendable {
    /// Rotate/flip the pixels by the JPEG's EXIF orientation tag so they come out upright.
    /// Default `true`. When `false` the stored pixel grid is returned as is (what darknet does);
    /// `Image.orientation` still records the tag.
    public var applyOrientation: Bool = true
    /// Refuse images with more than this many pixels (width x height of the file, before any
    /// DCT scaling), checked from the header before the pixel buffer is allocated.
    public var maxPixels: Int = 100_000_000
    /// When set, a JPEG is decoded at the smallest DCT scale (1/2, 1/4 or 1/8) whose upright
    /// size is still at least this size in both axes; `Image.sourceWidth`/`sourceHeight` keep the
    /// full upright size. `nil` (the default) decodes at full size. PNGs are always full size.
    public var minimumSize: (width: Int, height: Int)? = nil

    /// Options with the defaults above.
    public init(applyOrientation: Bool = true, maxPixels: Int = 100_000_000,
                minimumSize: (width: Int, height: Int)? = nil) {
        self.applyOrientation = applyOrientation
        self.maxPixels = maxPixels
        self.minimumSize = minimumSize
    }
}
