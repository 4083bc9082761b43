import CPNG
import CTurboJPEG
import Foundation

// MARK: - Encoding to PNG and JPEG

extension Image {
    /// The image as a PNG file: 8-bit RGB, lossless, tagged sRGB (libpng's simplified writer).
    ///
    /// Written in one pass into a buffer of libpng's documented worst-case size (`PNG_IMAGE_PNG_SIZE_MAX`),
    /// with libpng's speed setting (`PNG_IMAGE_FLAG_FAST`: a fast zlib level and filter choice), so that
    /// saving an annotated photo costs less than detecting in it.
    /// - Throws: `YOLOError.invalidArgument` if libpng reports an error (it should not for a valid image).
    public func pngData() throws -> Data {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR)
        image.flags = UInt32(PNG_IMAGE_FLAG_FAST)
        defer { png_image_free(&image) }
        // PNG_IMAGE_PNG_SIZE_MAX: the filtered rows, zlib's bound on them, the chunks around them; plus slack
        // for the sRGB chunk. Should libpng still need more, it says how much and the second pass uses that.
        let raw = (width * 3 + 1) * height
        let compressed = raw + (raw + 7) / 8 + (raw + 63) / 64 + 11
        var capacity = 8 + 25 + 16 + 44 + 12 + 12 + 12 * (compressed / 8192) + compressed + 1024
        for _ in 0..<2 {
            var output = Data(count: capacity)
            var size = capacity
            let written = output.withUnsafeMutableBytes { target in
                pixels.withUnsafeBytes { source in
                    png_image_write_to_memory(&image, target.baseAddress, &size, 0, source.baseAddress, 0, nil) != 0
                }
            }
            if written { return output.prefix(size) }
            guard size > capacity else { break }
            capacity = size
            image.warning_or_error = 0
        }
        let text = withUnsafeBytes(of: &image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        throw YOLOError.invalidArgument("PNG encoding failed: \(text)")
    }

    /// The image as a baseline JPEG file: no chroma subsampling (4:4:4, so thin coloured box
    /// lines and label text stay sharp), accurate integer DCT.
    /// - Parameter quality: 1 (smallest) ... 100 (best); 90 by default.
    /// - Throws: `YOLOError.invalidArgument` for a quality outside 1...100 or an encoder failure.
    public func jpegData(quality: Int = 90) throws -> Data {
        guard (1...100).contains(quality) else {
            throw YOLOError.invalidArgument("JPEG quality \(quality) is outside 1...100")
        }
        guard let handle = tjInitCompress() else {
            throw YOLOError.invalidArgument("JPEG encoding failed: cannot start the encoder")
        }
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { tjFree(buffer) }
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(handle, source.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue),
                        &buffer, &size, Int32(TJSAMP_444.rawValue), Int32(quality), TJFLAG_ACCURATEDCT)
        }
        guard status == 0, let buffer else {
            let text = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
            throw YOLOError.invalidArgument("JPEG encoding failed: \(text)")
        }
        return Data(bytes: buffer, count: Int(size))
    }

    /// Writes the image to `path` as PNG (`.png`) or JPEG (`.jpg`, `.jpeg`, quality `jpegQuality`),
    /// chosen by the extension (any case), atomically: a failure leaves no partial file.
    /// - Throws: `YOLOError.invalidArgument` for another extension; `.unreadableFile` when the
    ///   file cannot be written.
    public func write(to path: String, jpegQuality: Int = 90) throws {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        let data: Data
        switch ext {
        case "png": data = try pngData()
        case "jpg", "jpeg": data = try jpegData(quality: jpegQuality)
        default:
            throw YOLOError.invalidArgument("\(path): cannot tell the image format from the extension; use .png, .jpg or .jpeg")
        }
        try FileIO.writeAtomically(data, to: path)
    }
}
