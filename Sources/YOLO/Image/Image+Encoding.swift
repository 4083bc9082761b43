import CTurboJPEG
import Foundation

// MARK: - Encoding to PNG and JPEG

extension Image {
    /// The image as a PNG file: 8-bit RGB, lossless, tagged sRGB.
    ///
    /// Compressed on several threads at zlib's fastest level (`PNGWriter`), so that saving an annotated
    /// photo costs less than detecting in it.
    /// - Throws: `YOLOError.invalidArgument` if zlib reports an error (it should not for a valid image).
    public func pngData() throws -> Data {
        try pixels.withUnsafeBufferPointer { try PNGWriter.encode($0, width: width, height: height) }
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
