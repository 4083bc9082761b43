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
/// An image made from a camera frame (``init(pixelBuffer:orientation:)``) keeps the frame as it came
/// (Y'CbCr or BGRA planes and an orientation) and converts pixels where they are read: the detector
/// converts only those its resampling reads, straight into the network input; ``pixels`` converts the
/// whole frame on first use and keeps the result.
///
/// Equality compares size, pixels and the decoder's metadata.
public struct Image: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Where the pixels live: RGB bytes, or a camera frame converted on demand.
    private var storage: Storage
    /// Width in pixels of the full-resolution upright original this image was decoded from.
    /// Equals `width` unless a JPEG was decoded at a reduced DCT scale (`ImageDecodingOptions.minimumSize`).
    public let sourceWidth: Int
    /// Height in pixels of the full-resolution upright original; see `sourceWidth`.
    public let sourceHeight: Int
    /// The EXIF orientation tag (1...8) found in the file or given with a camera frame, 1 when there was
    /// none or it was unreadable. When it was applied (`ImageDecodingOptions.applyOrientation`, and always
    /// for camera frames), the image is already upright.
    public internal(set) var orientation: Int = 1
    /// Non-fatal problems the decoder reported, one line each (for example "premature end of JPEG
    /// file": the image is partial, the missing part filled by the decoder). Empty for a clean file.
    public internal(set) var decodeWarnings: [String] = []

    /// The pixel memory of an image.
    enum Storage: Sendable {
        /// `width * height * 3` RGB bytes.
        case rgb([UInt8])
        /// A camera frame, converted where it is read.
        case camera(CameraPixels)
    }

    /// `width * height * 3` bytes. For an image made from a camera frame, reading this converts the
    /// whole frame to RGB once (the result is kept; later reads and copies of the image share it);
    /// setting it makes the image an RGB image.
    public var pixels: [UInt8] {
        get {
            switch storage {
            case .rgb(let bytes): bytes
            case .camera(let camera): camera.rgb
            }
        }
        set { storage = .rgb(newValue) }
        _modify {
            var bytes = pixels
            storage = .rgb([])  // so that `bytes` holds the only reference and mutates in place
            defer { storage = .rgb(bytes) }
            yield &bytes
        }
    }

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
        self.storage = .rgb(pixels)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
    }

    /// An image that converts the camera frame `camera` where it is read.
    init(camera: CameraPixels) {
        width = camera.width
        height = camera.height
        storage = .camera(camera)
        sourceWidth = width
        sourceHeight = height
        orientation = camera.orientation
    }

    /// Runs `body` with the upright pixels as a `RowSource`, which reads a camera frame's planes
    /// directly (converting only the pixels asked for).
    func withRows<Result>(_ body: (any RowSource) throws -> Result) rethrows -> Result {
        switch storage {
        case .rgb(let bytes):
            return try bytes.withUnsafeBufferPointer { p in
                let sampler = PackedRGBSampler(base: p.baseAddress!, bytesPerRow: width * 3, bytesPerPixel: 3, offsets: (0, 1, 2))
                return try body(OrientedRows(sampler: sampler, storedWidth: width, storedHeight: height, orientation: 1))
            }
        case .camera(let camera):
            return try camera.withRows(body)
        }
    }

    /// The camera frame behind this image, when it was made from one and `pixels` was not set since.
    var cameraPixels: CameraPixels? {
        if case .camera(let camera) = storage { return camera }
        return nil
    }

    /// Equal size, metadata and pixels (an image made from a camera frame compares by its converted pixels).
    public static func == (a: Image, b: Image) -> Bool {
        guard a.width == b.width, a.height == b.height, a.sourceWidth == b.sourceWidth, a.sourceHeight == b.sourceHeight,
              a.orientation == b.orientation, a.decodeWarnings == b.decodeWarnings else { return false }
        if let x = a.cameraPixels, let y = b.cameraPixels, x === y { return true }
        return a.pixels == b.pixels
    }

    /// The (r, g, b) of pixel (x, y).
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        if let camera = cameraPixels { return camera.pixel(x, y) }
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}

extension Image: CustomStringConvertible, CustomReflectable {
    /// A one-line summary (size, and where it differs the original's size and the EXIF orientation),
    /// never the pixels: `print(image)` in an app's log stays one line.
    public var description: String {
        var text = "Image(\(width)x\(height) " + (cameraPixels.map { "from \($0.buffer)" } ?? "RGB")
        if sourceWidth != width || sourceHeight != height { text += ", decoded from \(sourceWidth)x\(sourceHeight)" }
        if orientation != 1 { text += ", EXIF orientation \(orientation)" }
        if !decodeWarnings.isEmpty { text += ", \(decodeWarnings.count) decoder warning(s)" }
        return text + ")"
    }

    /// What `dump` and debuggers show: the summary fields, and the pixel count instead of the pixels
    /// (a camera frame is not converted to show it).
    public var customMirror: Mirror {
        Mirror(self, children: ["width": width, "height": height, "sourceWidth": sourceWidth, "sourceHeight": sourceHeight,
                                "orientation": orientation, "decodeWarnings": decodeWarnings, "pixelBytes": width * height * 3],
               displayStyle: .struct)
    }
}
