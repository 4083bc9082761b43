import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Decoding every committed fixture and every file of /work/shared/data/edge, compared with
/// OpenCV's `imread(IMREAD_COLOR)` (EXIF orientation applied, BGR -> RGB) as recorded by
/// scripts/make-image-fixtures.py.
///
/// Every JPEG (gray, YCbCr, progressive, CMYK, truncated) and every PNG must match OpenCV byte
/// for byte (both run libjpeg-turbo's accurate integer IDCT with fancy upsampling, and libpng
/// without colour management), except 16-bit PNGs with alpha: libpng's simplified API cannot
/// hand out their raw samples, so each sample may be 1 level off OpenCV's high byte (and, when
/// interlaced, only pixels with alpha >= 4096/65535 are bounded; see PNGDecoder).
struct ImageDecodingTests {
    typealias Support = ImageTestSupport

    /// Compares a decode with the expected OpenCV decode; returns a failure description or nil.
    static func check(_ path: String, _ expected: Support.Expected) -> String? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let image: Image
        do {
            image = try Image(contentsOf: path)
        } catch let error as YOLOError {
            if expected.error == true {
                let text = error.description
                return text.hasPrefix(path + ": ") && !text.contains("\n") ? nil : "bad error text: \(text)"
            }
            return "\(name): unexpected error \(error)"
        } catch {
            return "\(name): non-YOLOError \(error)"
        }
        if expected.error == true { return "\(name): decoded but OpenCV could not" }
        guard image.width == expected.width, image.height == expected.height else {
            return "\(name): size \(image.width)x\(image.height), expected \(expected.width!)x\(expected.height!)"
        }
        if let header = Self.pngHeader(path), header.bitDepth == 16, header.colorType & 4 != 0 {
            return Self.checkWithinOneLevel(image, expected, interlaced: header.interlaced, name: name)
        }
        let hash = SHA256.hex(image.pixels)
        if hash != expected.sha256 {
            let means = Support.blockMeans(image)
            let worst = zip(means, expected.blockMeans!).map { abs($0 - $1) }.max()!
            return "\(name): pixels differ from OpenCV (block means up to \(worst))"
        }
        return nil
    }

    /// The IHDR of a PNG file, nil for other files.
    static func pngHeader(_ path: String) -> PNGChunks.Header? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return nil }
        return data.withUnsafeBytes { PNGChunks($0).header }
    }

    /// 16-bit PNGs with alpha: every channel within 1 level of OpenCV (interlaced: where alpha >= 4096).
    static func checkWithinOneLevel(_ image: Image, _ expected: Support.Expected, interlaced: Bool,
                                    name: String) -> String? {
        guard let rgb = expected.rgb, let alpha = expected.alpha16 else { return "\(name): no per-pixel reference" }
        var worst = 0, exact = 0
        for i in 0..<(image.width * image.height) where !interlaced || alpha[i] >= 4096 {
            for c in 0..<3 {
                let d = abs(Int(image.pixels[i * 3 + c]) - rgb[i * 3 + c])
                worst = max(worst, d); if d == 0 { exact += 1 }
            }
        }
        return worst <= 1 ? nil : "\(name): a sample differs from OpenCV by \(worst) levels"
    }

    @Test("Committed fixtures decode to OpenCV's pixels")
    func fixtures() throws {
        let table = try Support.table("fixtures.json")
        #expect(table.count == 26)
        for (name, expected) in table.sorted(by: { $0.key < $1.key }) {
            let failure = Self.check(Support.fixtures.appendingPathComponent(name).path, expected)
            #expect(failure == nil, "\(failure ?? "")")
        }
    }

    @Test("Every /work/shared/data/edge file decodes like OpenCV or fails with a one-line error",
          .enabled(if: ImageTestSupport.hasEdge, "\(ImageTestSupport.noEdge)"))
    func edgeFiles() throws {
        let table = try Support.table("edge.json")
        #expect(table.count == 38)
        for (name, expected) in table.sorted(by: { $0.key < $1.key }) {
            let failure = Self.check(Support.edge.appendingPathComponent(name).path, expected)
            #expect(failure == nil, "\(failure ?? "")")
        }
        // The truncated JPEGs decode partially, and say so.
        for name in ["derived/truncated_60pct.jpg", "real/pillow_truncated_jpeg.jpg"] {
            let image = try Image(contentsOf: Support.edge.appendingPathComponent(name).path)
            #expect(image.decodeWarnings == ["Premature end of JPEG file"])
        }
    }

    // MARK: Errors and warnings

    static func decodeError(_ bytes: [UInt8], name: String = "x.jpg") -> String? {
        do {
            _ = try Image(data: Data(bytes), name: name)
            return nil
        } catch {
            return (error as? YOLOError)?.description ?? "not a YOLOError: \(error)"
        }
    }

    @Test("Empty, foreign and header-only data fail with a one-line error naming the file")
    func badData() throws {
        #expect(Self.decodeError([]) == "x.jpg: file is empty")
        #expect(Self.decodeError(Array("hello, not an image".utf8)) == "x.jpg: not a JPEG or PNG image")
        #expect(Self.decodeError([0x47, 0x49, 0x46, 0x38, 0x39, 0x61]) == "x.jpg: not a JPEG or PNG image")  // GIF
        for bytes in [[0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xD9], PNGChunks.signature] as [[UInt8]] {
            let text = Self.decodeError(bytes)
            #expect(text?.hasPrefix("x.jpg: invalid ") == true && text?.contains("\n") == false, "\(text ?? "decoded")")
        }
        #expect(throws: YOLOError.fileNotFound(path: "/nonexistent/a.jpg")) {
            try Image(contentsOf: "/nonexistent/a.jpg")
        }
        #expect(throws: YOLOError.unreadableFile(path: "/tmp", reason: "is a directory")) {
            try Image(contentsOf: "/tmp")
        }
    }

    @Test("A truncated JPEG decodes with a warning; a clean one has none")
    func truncatedJPEGWarns() throws {
        let truncated = try Image(contentsOf: Support.fixtures.appendingPathComponent("jpeg_truncated.jpg").path)
        #expect(truncated.decodeWarnings == ["Premature end of JPEG file"])
        let clean = try Image(contentsOf: Support.fixtures.appendingPathComponent("jpeg_128x96.jpg").path)
        #expect(clean.decodeWarnings.isEmpty)
        #expect(truncated.width == clean.width && truncated.height == clean.height)
        // The decoded part (top rows) is the clean image's; the missing part is filled by libjpeg.
        #expect(Array(truncated.pixels.prefix(128 * 16 * 3)) == Array(clean.pixels.prefix(128 * 16 * 3)))
    }

    @Test("CMYK: Adobe files store inverted samples; without the APP14 marker samples are ink")
    func cmykInterpretation() throws {
        // Hand cases: no ink is white, full ink is black, either way the file stores it.
        #expect(JPEGDecoder.cmykToRGB([255, 255, 255, 255], inverted: true) == [255, 255, 255])
        #expect(JPEGDecoder.cmykToRGB([0, 0, 0, 0], inverted: false) == [255, 255, 255])
        #expect(JPEGDecoder.cmykToRGB([255, 255, 255, 255], inverted: false) == [0, 0, 0])
        #expect(JPEGDecoder.cmykToRGB([0, 255, 255, 255], inverted: true) == [1, 255, 255])  // OpenCV's rounding
        // The fixture without its APP14 segment decodes as the other interpretation.
        var bytes = [UInt8](try Data(contentsOf: Support.fixtures.appendingPathComponent("jpeg_cmyk_adobe.jpg")))
        let adobe = try Image(data: Data(bytes))
        let at = try #require((2..<(bytes.count - 9)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xEE })
        let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        bytes.removeSubrange(at..<(at + 2 + length))
        let plain = try Image(data: Data(bytes))
        #expect(Support.difference(plain, adobe).mean > 50)
    }

    /// Every prefix and many corrupted copies of small JPEG and PNG files: decoding must end in
    /// an image (JPEG: with a warning when cut inside the entropy data) or a YOLOError, never a crash.
    @Test("Truncated and corrupted files never crash", arguments: ["jpeg_128x96.jpg", "jpeg_progressive.jpg",
          "jpeg_cmyk_adobe.jpg", "png_rgb8_interlaced.png", "png_rgba16.png", "png_palette8_trns.png"])
    func damaged(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Support.fixtures.appendingPathComponent(name)))
        let full = try Image(data: Data(bytes))
        var generator = SplitMix64(seed: 42)
        var variants = (0..<bytes.count).map { Array(bytes.prefix($0)) }
        for _ in 0..<200 {
            var copy = bytes
            for _ in 0..<3 { copy[Int(generator.next() % UInt64(copy.count))] = UInt8(truncatingIfNeeded: generator.next()) }
            variants.append(copy)
        }
        for variant in variants {
            do {
                let image = try Image(data: Data(variant), name: name)
                if variant.count < bytes.count && name.hasSuffix(".jpg") {
                    #expect(!image.decodeWarnings.isEmpty, "\(name) cut at \(variant.count) decoded silently")
                }
                #expect(image.pixels.count == image.width * image.height * 3)
            } catch let error as YOLOError {
                guard case .invalidImage(let path, let message) = error else {
                    Issue.record("\(name): unexpected error \(error)"); continue
                }
                #expect(path == name && !message.isEmpty && !message.contains("\n"))
            }
        }
        _ = full
    }
}

/// A small deterministic random generator for the corruption test.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
