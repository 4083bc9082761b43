import CPNG

/// Decodes PNG bytes with libpng's simplified API (`png_image_*`), which reports errors through
/// a status and message instead of longjmp.
///
/// Pixels match OpenCV's `imread(IMREAD_COLOR)` exactly:
/// - No colour management: gAMA, sRGB, iCCP and cHRM chunks are removed from the byte stream
///   before libpng sees it (OpenCV ignores them too; the simplified API would otherwise convert
///   the samples to sRGB).
/// - 16-bit samples keep their high byte (`value >> 8`), as OpenCV does, exactly for images
///   without alpha; for 16-bit images with alpha see `read` (at most one level off).
/// - Alpha is dropped, not composited; gray is replicated to R, G, B; palettes are expanded.
enum PNGDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, name: String,
                       options: ImageDecodingOptions) throws -> Image {
        let chunks = PNGChunks(bytes)
        guard let header = chunks.header else {
            throw YOLOError.invalidImage(path: name, message: "invalid PNG: missing or damaged IHDR header")
        }
        try ImageLimits.check(width: header.width, height: header.height, options: options, name: name)
        guard chunks.hasColorManagement else { return try read(bytes, header: header, options: options, name: name) }
        let stream = chunks.withoutColorManagement()
        return try stream.withUnsafeBytes { try read($0, header: header, options: options, name: name) }
    }

    // MARK: libpng

    private static func read(_ bytes: UnsafeRawBufferPointer, header: PNGChunks.Header,
                             options: ImageDecodingOptions, name: String) throws -> Image {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            throw YOLOError.invalidImage(path: name, message: "invalid PNG: \(message(&image))")
        }
        let width = Int(image.width), height = Int(image.height), count = width * height
        let hasAlpha = image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
        let channels = hasAlpha ? 4 : 3
        // 16-bit samples: read libpng's 16-bit linear output (the file's samples unchanged, as no
        // gamma chunk is left) and keep the high byte, exactly as OpenCV. With alpha that output
        // is premultiplied, which loses the colour of transparent pixels; so non-interlaced 16-bit
        // images with alpha are read as straight 8-bit instead (libpng rounds v/257, at most one
        // level from v >> 8). libpng 1.6.39 garbles that 8-bit path for interlaced 16-bit images,
        // so those keep the premultiplied read, divided back out (exact where opaque).
        let linear = header.bitDepth == 16 && (!hasAlpha || header.interlaced)
        if header.bitDepth == 16 && !linear { image.flags = UInt32(PNG_IMAGE_FLAG_16BIT_sRGB) }
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR) | (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
            | (linear ? UInt32(PNG_FORMAT_FLAG_LINEAR) : 0)
        // Held at once: the RGB result (3 bytes a pixel) and, unless libpng writes that directly, its
        // output: 16-bit samples (3 or 4 of 2 bytes) or 8-bit RGBA (4).
        try ImageLimits.check(pixels: count, rows: height, perPixel: 3 + (linear ? 2 * channels : hasAlpha ? 4 : 0),
                              width: width, height: height, options: options, name: name)
        var rgb = [UInt8](repeating: 0, count: count * 3)
        if linear {
            var buffer = [UInt16](repeating: 0, count: count * channels)
            try finish(&image, into: &buffer, name: name)
            for i in 0..<count {
                let alpha = hasAlpha ? Int(buffer[i * 4 + 3]) : 65535
                for c in 0..<3 {
                    rgb[i * 3 + c] = UInt8(unpremultiply(Int(buffer[i * channels + c]), alpha: alpha) >> 8)
                }
            }
        } else if hasAlpha {
            var buffer = [UInt8](repeating: 0, count: count * 4)
            try finish(&image, into: &buffer, name: name)
            for i in 0..<count {
                rgb[i * 3] = buffer[i * 4]; rgb[i * 3 + 1] = buffer[i * 4 + 1]; rgb[i * 3 + 2] = buffer[i * 4 + 2]
            }
        } else {
            try finish(&image, into: &rgb, name: name)
        }
        var result = Image(width: width, height: height, pixels: rgb)
        if image.warning_or_error & 0x03 == UInt32(PNG_IMAGE_WARNING) {
            result.decodeWarnings = [message(&image)]
        }
        return result
    }

    private static func finish<T>(_ image: inout png_image, into buffer: inout [T], name: String) throws {
        let ok = buffer.withUnsafeMutableBytes { out in
            png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
        }
        guard ok != 0 else {
            throw YOLOError.invalidImage(path: name, message: "invalid PNG: \(message(&image))")
        }
    }

    /// The straight-alpha 16-bit sample of a premultiplied one (rounded), 0 where alpha is 0.
    private static func unpremultiply(_ value: Int, alpha: Int) -> Int {
        if alpha == 65535 { return value }
        if alpha == 0 { return 0 }
        return min(65535, (value * 65535 + alpha / 2) / alpha)
    }

    private static func message(_ image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            let text = raw.prefix { $0 != 0 }
            return text.isEmpty ? "unknown libpng error" : String(decoding: text, as: UTF8.self)
        }
    }
}
