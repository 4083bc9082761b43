/// The size checks every decoder makes from the file header, before allocating pixels.
enum ImageLimits {
    /// Throws when the size is zero or has more than `options.maxPixels` pixels.
    static func check(width: Int, height: Int, options: ImageDecodingOptions, name: String) throws {
        guard width > 0, height > 0 else {
            throw YOLOError.invalidImage(path: name, message: "image has zero size (\(width)x\(height))")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= options.maxPixels else {
            throw YOLOError.invalidImage(path: name, message:
                "image is \(width)x\(height) pixels, more than the limit of \(options.maxPixels)")
        }
    }

    /// Throws when a `width` x `height` image (as stored) would need more than `options.maxDecodedBytes`
    /// bytes at once: while decoding, `perPixel` bytes for each of its `pixels` decoded pixels plus `fixed`;
    /// once decoded, its 3 bytes a pixel with `options.extraBytesPerPixel` and `options.extraBytesPerRow`
    /// for each of its `rows` decoded rows.
    static func check(pixels: Int, rows: Int, perPixel: Int, fixed: Int = 0, width: Int, height: Int,
                      options: ImageDecodingOptions, name: String) throws {
        let decoding = sum(product(pixels, perPixel), fixed)
        let holding = sum(product(pixels, 3 + max(0, options.extraBytesPerPixel)), product(rows, max(0, options.extraBytesPerRow)))
        let bytes = max(decoding, holding)
        guard bytes > options.maxDecodedBytes else { return }
        throw YOLOError.invalidImage(path: name, message: "the \(width)x\(height) image needs "
            + "\(bytes == .max ? "more than \(Int.max)" : String(bytes)) bytes of memory, more than the limit of \(options.maxDecodedBytes)")
    }

    /// `a * b`, or `Int.max` when that overflows.
    private static func product(_ a: Int, _ b: Int) -> Int {
        let (value, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : value
    }

    /// `a + b`, or `Int.max` when that overflows.
    private static func sum(_ a: Int, _ b: Int) -> Int {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : value
    }
}
