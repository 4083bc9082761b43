// MARK: - Camera frames

extension Image {
    /// How a stored pixel grid must be turned to be upright: EXIF's eight orientations, named and
    /// numbered as Core Graphics' `CGImagePropertyOrientation`, which Vision takes.
    public enum Orientation: Int, Sendable, CaseIterable {
        /// 1: stored upright.
        case up = 1
        /// 2: stored mirrored left–right.
        case upMirrored = 2
        /// 3: stored rotated 180°.
        case down = 3
        /// 4: stored mirrored top–bottom.
        case downMirrored = 4
        /// 5: stored transposed (mirrored along the main diagonal).
        case leftMirrored = 5
        /// 6: stored rotated 90° counter-clockwise: shown turned 90° clockwise (a phone held upright,
        /// its sensor read in landscape).
        case right = 6
        /// 7: stored transversed (mirrored along the anti-diagonal).
        case rightMirrored = 7
        /// 8: stored rotated 90° clockwise: shown turned 90° counter-clockwise.
        case left = 8

        /// The orientation of EXIF tag value `exif` (1...8).
        /// - Throws: ``YOLOError/invalidArgument(_:)`` for any other value.
        public init(exif: Int) throws {
            guard let orientation = Orientation(rawValue: exif) else {
                throw YOLOError.invalidArgument("orientation \(exif) is not an EXIF orientation (1...8)")
            }
            self = orientation
        }
    }

    /// An upright image of a camera frame, converted where it is read (Vision's
    /// `VNImageRequestHandler(cvPixelBuffer:orientation:)`).
    ///
    /// Nothing is converted here: the image keeps `pixelBuffer` (which keeps its memory alive, see
    /// ``PixelBuffer``), and ``width`` and ``height`` are its upright size (swapped for orientations
    /// 5...8). `Detector.detect` samples the planes inside its resampling and converts only the
    /// pixels it reads, straight into the network's float input; ``pixels`` converts the whole frame
    /// on first use (``PixelBuffer/Matrix``, ``PixelBuffer/ColorRange``, linear chroma interpolation at
    /// the buffer's ``PixelBuffer/ChromaLocation``) and keeps the RGB bytes. Either way the R, G, B of a
    /// pixel are the same, so detections equal those on `Image(width:height:pixels:)` of `pixels`.
    /// ``orientation`` records the orientation's EXIF value; boxes come back in upright coordinates.
    /// - Parameters:
    ///   - pixelBuffer: the frame as stored.
    ///   - orientation: how to turn it upright; default ``Orientation/up``.
    public init(pixelBuffer: PixelBuffer, orientation: Orientation = .up) {
        self.init(camera: CameraPixels(buffer: pixelBuffer, orientation: orientation.rawValue))
    }
}
