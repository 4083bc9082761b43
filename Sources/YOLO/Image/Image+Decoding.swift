import Foundation

// MARK: - Decoding files and bytes

extension Image {
    /// The file formats `Image` decodes, recognised by their first bytes (never by file name).
    @_spi(Engine) public enum FileFormat: String, Sendable {
        /// JPEG: starts with FF D8 FF.
        case jpeg
        /// PNG: starts with the 8-byte PNG signature.
        case png

        /// The format whose signature `bytes` start with, or `nil`.
        public static func detect(_ bytes: UnsafeRawBufferPointer) -> FileFormat? {
            if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
            if bytes.count >= 8, zip(bytes, PNGChunks.signature).allSatisfy({ $0 == $1 }) { return .png }
            return nil
        }
    }

    /// Decodes the JPEG or PNG file at `path` into upright RGB (see `ImageDecodingOptions`).
    /// - Throws: `YOLOError.fileNotFound`, `.unreadableFile`, or `.invalidImage` naming the file
    ///   (empty file, not a JPEG or PNG, damaged, too large). A partially decodable JPEG is
    ///   returned with `decodeWarnings` set instead.
    public init(contentsOf path: String, options: ImageDecodingOptions = ImageDecodingOptions()) throws {
        let data = try FileIO.read(path)
        try self.init(data: data, name: path, options: options)
    }

    /// Decodes JPEG or PNG bytes; `name` is used in error messages.
    /// - Throws: `YOLOError.invalidImage(path: name, ...)`.
    public init(data: Data, name: String = "<image data>",
                options: ImageDecodingOptions = ImageDecodingOptions()) throws {
        self = try data.withUnsafeBytes { bytes in
            guard !bytes.isEmpty else {
                throw YOLOError.invalidImage(path: name, message: "file is empty")
            }
            switch FileFormat.detect(bytes) {
            case .jpeg: return try JPEGDecoder.decode(bytes, name: name, options: options)
            case .png: return try PNGDecoder.decode(bytes, name: name, options: options)
            case nil: throw YOLOError.invalidImage(path: name, message: "not a JPEG or PNG image")
            }
        }
    }
}
