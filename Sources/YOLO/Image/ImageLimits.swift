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
}
