import Foundation
import Testing
@testable import YOLO

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
          .enabled(if: ImageTestSupport.hasEdge, "needs /work/shared/data/edge (../shared from the package root)"))
    func edgeFiles() throws {
        let table = try Support.table("edge.json")
        #expect(table.count == 38)
        for (name, expected) in table.sorted(by: { $0.key < $1.key }) {
            let failure = Self.check(Support.edge.appendingPathComponent(name).path, expected)
            #expect(failure == nil, "\(failure ?? "")")
        }
    }
}
