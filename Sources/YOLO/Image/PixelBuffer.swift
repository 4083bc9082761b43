/// A camera frame as a capture API hands it over, in the camera's own format: the counterpart of
/// Core Video's `CVPixelBuffer`, which Vision takes as `VNImageRequestHandler(cvPixelBuffer:orientation:)`.
///
/// An ``Image`` made from it with ``Image/init(pixelBuffer:orientation:)`` is not converted to RGB
/// up front: the detector reads the few pixels its resampling needs straight from the planes and
/// converts them on the way into the network input. ``Image/pixels`` converts the whole frame once,
/// on first use, for code that wants RGB bytes (drawing, saving).
///
/// ## Formats and planes
///
/// | format | planes | bytes of a row | rows | size |
/// |---|---|---|---|---|
/// | ``Format/nv12``, ``Format/nv21`` | Y; interleaved Cb Cr (NV12) or Cr Cb (NV21) | `width`; `width` | `height`; `height / 2` | even width and height |
/// | ``Format/i420`` | Y; Cb; Cr | `width`; `width / 2`; `width / 2` | `height`; `height / 2`; `height / 2` | even width and height |
/// | ``Format/yuyv``, ``Format/uyvy`` | Y0 Cb Y1 Cr (YUYV) or Cb Y0 Cr Y1 (UYVY) per two pixels | `2 · width` | `height` | even width |
/// | ``Format/bgra``, ``Format/rgba`` | one, 4 bytes a pixel, alpha ignored | `4 · width` | `height` | any |
///
/// Each plane has its own row stride (`bytesPerRow`, at least the row's bytes); its last row's
/// padding may be missing. Rows run top to bottom as stored; the orientation is given to the image.
///
/// ## Memory and lifetime
///
/// ``init(copying:width:height:format:matrix:range:chromaLocation:)`` copies the planes (1.5 bytes
/// a pixel for 4:2:0): the caller may reuse its buffer as soon as it returns.
/// ``init(unsafeNoCopy:width:height:format:matrix:range:chromaLocation:deallocator:)`` keeps
/// pointers to the caller's memory instead. That memory must stay valid and unchanged for as long as
/// this value, a copy of it, or an ``Image`` made from it exists: those share one reference to it,
/// and when the last of them is gone the `deallocator` runs (once, on whichever thread released the
/// last reference), e.g. to hand a V4L2 buffer back to the driver. Without a deallocator the caller
/// keeps the memory alive by its own means, e.g. for the duration of one `detect` call.
public struct PixelBuffer: @unchecked Sendable {
    /// How a frame's bytes are laid out (see the table in ``PixelBuffer``).
    public enum Format: String, Sendable, CaseIterable {
        /// 4:2:0, a Y plane and one plane of interleaved Cb, Cr (`kCVPixelFormatType_420YpCbCr8BiPlanar…`, V4L2 `NV12`).
        case nv12
        /// 4:2:0, a Y plane and one plane of interleaved Cr, Cb (Android's camera default, V4L2 `NV21`).
        case nv21
        /// 4:2:0, three planes Y, Cb, Cr (`yuv420p`, V4L2 `YU12`).
        case i420
        /// 4:2:2 packed Y0 Cb Y1 Cr (`yuyv422`, V4L2 `YUYV`, most USB webcams).
        case yuyv
        /// 4:2:2 packed Cb Y0 Cr Y1 (`uyvy422`, `kCVPixelFormatType_422YpCbCr8`, capture cards).
        case uyvy
        /// B, G, R, A, 4 bytes a pixel (`kCVPixelFormatType_32BGRA`); alpha ignored.
        case bgra
        /// R, G, B, A, 4 bytes a pixel; alpha ignored.
        case rgba

        /// Whether the format holds Y'CbCr samples (its ``Matrix``, ``ColorRange`` and ``ChromaLocation`` apply).
        public var isYCbCr: Bool { self != .bgra && self != .rgba }
        /// How many planes the format has.
        public var planeCount: Int {
            switch self {
            case .nv12, .nv21: 2
            case .i420: 3
            case .yuyv, .uyvy, .bgra, .rgba: 1
            }
        }
    }

    /// The Y'CbCr → R'G'B' matrix (`kCVImageBufferYCbCrMatrixKey`; FFmpeg's `colorspace`).
    public enum Matrix: String, Sendable, CaseIterable {
        /// ITU-R BT.601: K_R = 0.299, K_B = 0.114 (standard definition, JPEG, most webcams).
        case bt601
        /// ITU-R BT.709: K_R = 0.2126, K_B = 0.0722 (HD video).
        case bt709
    }

    /// The range of the 8-bit samples (the `VideoRange` / `FullRange` of Core Video's format names).
    public enum ColorRange: String, Sendable, CaseIterable {
        /// Y in 16...235, Cb and Cr in 16...240 ("limited", "TV", MPEG): broadcast video, V4L2's default for Y'CbCr.
        case video
        /// Y, Cb and Cr in 0...255 ("PC", JPEG): MJPEG webcams, phone cameras' full-range formats.
        case full
    }

    /// Where a subsampled chroma sample sits relative to the luma samples it covers
    /// (`kCVImageBufferChromaLocationTopFieldKey`; FFmpeg's `chroma_location`). Between samples the
    /// chroma planes are interpolated linearly; at the edges the outermost chroma sample repeats.
    public enum ChromaLocation: String, Sendable, CaseIterable {
        /// Horizontally on the even luma columns, vertically midway between two luma rows: MPEG-2,
        /// H.264 and H.265's default for 4:2:0, and BT.601's for 4:2:2.
        case left
        /// Midway between luma samples in both directions: JPEG, MPEG-1.
        case center
        /// On the even luma columns and the even luma rows (H.265 `chroma_sample_loc_type` 2).
        case topLeft
    }

    /// One plane of a caller's frame: its bytes and row stride.
    public struct Plane: @unchecked Sendable {
        /// The plane's bytes, its top row first.
        public var bytes: UnsafeRawBufferPointer
        /// Bytes from the start of one row to the start of the next.
        public var bytesPerRow: Int

        /// A plane of `bytes` whose rows start every `bytesPerRow` bytes.
        public init(_ bytes: UnsafeRawBufferPointer, bytesPerRow: Int) {
            self.bytes = bytes
            self.bytesPerRow = bytesPerRow
        }
    }

    /// Width of the frame in pixels, as stored (before any orientation).
    public let width: Int
    /// Height of the frame in pixels, as stored.
    public let height: Int
    /// The layout of the bytes.
    public let format: Format
    /// The Y'CbCr matrix (ignored for ``Format/bgra`` and ``Format/rgba``).
    public let matrix: Matrix
    /// The sample range (ignored for ``Format/bgra`` and ``Format/rgba``).
    public let range: ColorRange
    /// Where the chroma samples sit (ignored for the RGB formats; only the horizontal part applies to 4:2:2).
    public let chromaLocation: ChromaLocation
    /// The checked planes and the reference that keeps their memory alive.
    let storage: PixelMemory

    /// Copies a caller's frame: the rows of every plane, without their padding.
    ///
    /// - Parameters:
    ///   - planes: ``Format/planeCount`` planes in the order of the table in ``PixelBuffer``.
    ///   - width: the frame width in pixels.
    ///   - height: the frame height in pixels.
    ///   - format: the layout of the bytes.
    ///   - matrix: the Y'CbCr matrix; default BT.601.
    ///   - range: the sample range; default video range.
    ///   - chromaLocation: where chroma samples sit; default ``ChromaLocation/left``.
    /// - Throws: ``YOLOError/invalidArgument(_:)`` naming what does not fit: an empty or odd size the
    ///   format cannot hold, the wrong number of planes, a stride shorter than a row, a plane too small.
    public init(copying planes: [Plane], width: Int, height: Int, format: Format, matrix: Matrix = .bt601,
                range: ColorRange = .video, chromaLocation: ChromaLocation = .left) throws {
        let layout = try PixelLayout(planes: planes, width: width, height: height, format: format)
        self.init(width: width, height: height, format: format, matrix: matrix, range: range, chromaLocation: chromaLocation,
                  storage: PixelMemory(copying: planes, layout: layout))
    }

    /// Wraps a caller's frame without copying it.
    ///
    /// The memory behind `planes` must stay valid and must not change until `deallocator` runs,
    /// which happens when this value, its copies and every ``Image`` made from them are gone (see
    /// "Memory and lifetime" above). With `deallocator` `nil` the caller keeps it valid for as long as
    /// they may be used.
    /// - Parameters: as ``init(copying:width:height:format:matrix:range:chromaLocation:)``, and
    ///   `deallocator`, run once when the last reference to the wrapped memory is released.
    /// - Throws: ``YOLOError/invalidArgument(_:)`` as the copying initializer; the deallocator is not
    ///   run when it throws (the caller still owns the memory).
    public init(unsafeNoCopy planes: [Plane], width: Int, height: Int, format: Format, matrix: Matrix = .bt601,
                range: ColorRange = .video, chromaLocation: ChromaLocation = .left,
                deallocator: (@Sendable () -> Void)? = nil) throws {
        let layout = try PixelLayout(planes: planes, width: width, height: height, format: format)
        self.init(width: width, height: height, format: format, matrix: matrix, range: range, chromaLocation: chromaLocation,
                  storage: PixelMemory(wrapping: planes, layout: layout, deallocator: deallocator))
    }

    /// Copies a frame whose planes follow each other in one buffer, as V4L2's single-planar formats and
    /// FFmpeg's `rawvideo` files store them: the luma (or only) plane with `bytesPerRow`, then for NV12
    /// and NV21 the chroma plane with the same stride, for I420 the Cb and Cr planes with `bytesPerRow / 2`.
    /// - Throws: ``YOLOError/invalidArgument(_:)`` as the other initializers, and when `bytes` is shorter
    ///   than the planes need.
    public init(copying bytes: [UInt8], width: Int, height: Int, bytesPerRow: Int, format: Format,
                matrix: Matrix = .bt601, range: ColorRange = .video, chromaLocation: ChromaLocation = .left) throws {
        self = try bytes.withUnsafeBytes { raw in
            let planes = try PixelLayout.contiguousPlanes(raw, height: height, bytesPerRow: bytesPerRow, format: format)
            return try PixelBuffer(copying: planes, width: width, height: height, format: format, matrix: matrix,
                                   range: range, chromaLocation: chromaLocation)
        }
    }

    private init(width: Int, height: Int, format: Format, matrix: Matrix, range: ColorRange,
                 chromaLocation: ChromaLocation, storage: PixelMemory) {
        self.width = width
        self.height = height
        self.format = format
        self.matrix = matrix
        self.range = range
        self.chromaLocation = chromaLocation
        self.storage = storage
    }
}

extension PixelBuffer: CustomStringConvertible {
    /// One line: size, format and, for Y'CbCr, matrix, range and chroma location.
    public var description: String {
        let color = format.isYCbCr ? " \(matrix.rawValue) \(range.rawValue) range, chroma \(chromaLocation.rawValue)" : ""
        return "PixelBuffer(\(width)x\(height) \(format.rawValue)\(color))"
    }
}
