// MARK: - Wrapping caller pixel buffers

extension Image {
    /// The layout of a caller's pixel buffer: bytes per pixel and where R, G, B sit.
    public enum PixelFormat: String, Sendable, CaseIterable {
        /// R, G, B: 3 bytes per pixel.
        case rgb8
        /// R, G, B, A: 4 bytes per pixel; alpha is ignored.
        case rgba8
        /// B, G, R, A: 4 bytes per pixel (the usual little-endian "ARGB32" of camera and GUI
        /// frameworks); alpha is ignored.
        case bgra8

        /// Bytes per pixel.
        public var bytesPerPixel: Int { self == .rgb8 ? 3 : 4 }
        /// Offsets of R, G and B within a pixel.
        var offsets: (r: Int, g: Int, b: Int) { self == .bgra8 ? (2, 1, 0) : (0, 1, 2) }
    }

    /// Copies a caller's pixel buffer into a new RGB image (alpha dropped, not composited).
    ///
    /// - Parameters:
    ///   - buffer: the pixels, top row first; row `y` starts at byte `y * bytesPerRow`. Only
    ///     `bytesPerRow * (height - 1) + width * format.bytesPerPixel` bytes are needed (the last
    ///     row's padding may be missing).
    ///   - width: the image width in pixels.
    ///   - height: the image height in pixels.
    ///   - bytesPerRow: the row stride in bytes, at least `width * format.bytesPerPixel`.
    ///   - format: how each pixel's bytes are laid out.
    /// - Throws: `YOLOError.invalidArgument` when the size, stride or buffer length do not fit.
    public init(wrapping buffer: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerRow: Int,
                format: PixelFormat) throws {
        let pixelBytes = format.bytesPerPixel
        guard width > 0, height > 0 else {
            throw YOLOError.invalidArgument("pixel buffer: size \(width)x\(height) is empty or negative")
        }
        let (rowBytes, o1) = width.multipliedReportingOverflow(by: pixelBytes)
        guard !o1, bytesPerRow >= rowBytes else {
            throw YOLOError.invalidArgument(
                "pixel buffer: bytesPerRow \(bytesPerRow) is less than width \(width) x \(pixelBytes) bytes")
        }
        let (body, o2) = bytesPerRow.multipliedReportingOverflow(by: height - 1)
        let (needed, o3) = body.addingReportingOverflow(rowBytes)
        guard !o2, !o3, buffer.count >= needed, needed / 3 <= Int.max / 4 else {
            throw YOLOError.invalidArgument(
                "pixel buffer: \(buffer.count) bytes, \(width)x\(height) \(format.rawValue) with bytesPerRow \(bytesPerRow) needs \(needed)")
        }
        let (r, g, b) = format.offsets
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        rgb.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                var source = y * bytesPerRow, target = y * width * 3
                for _ in 0..<width {
                    out[target] = buffer[source + r]
                    out[target + 1] = buffer[source + g]
                    out[target + 2] = buffer[source + b]
                    source += pixelBytes
                    target += 3
                }
            }
        }
        self.init(width: width, height: height, pixels: rgb)
    }

    /// Copies a caller's pixel array into a new RGB image; see `init(wrapping:width:height:bytesPerRow:format:)`.
    public init(wrapping bytes: [UInt8], width: Int, height: Int, bytesPerRow: Int, format: PixelFormat) throws {
        self = try bytes.withUnsafeBytes {
            try Image(wrapping: $0, width: width, height: height, bytesPerRow: bytesPerRow, format: format)
        }
    }
}
