import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// EXIF orientation: the transform table itself (against the EXIF definition, by hand), and
/// whole files: every orientation of the same picture decodes to the same upright image.
struct ImageOrientationTests {
    typealias Support = ImageTestSupport

    /// A 3x2 grid whose pixels are labelled a...f (one channel), row by row.
    static let grid: [UInt8] = Array("abcdef".utf8)

    @Test("Each orientation turns the stored grid upright as the EXIF definition says",
          arguments: [
            (1, "abc" + "def", 3), (2, "cba" + "fed", 3), (3, "fed" + "cba", 3), (4, "def" + "abc", 3),
            (5, "ad" + "be" + "cf", 2), (6, "da" + "eb" + "fc", 2), (7, "fc" + "eb" + "da", 2),
            (8, "cf" + "be" + "ad", 2),
          ])
    func table(orientation: Int, upright: String, width: Int) {
        let result = ImageOrientation.upright(Self.grid, width: 3, height: 2, channels: 1, orientation: orientation)
        #expect(String(decoding: result.pixels, as: UTF8.self) == upright)
        #expect(result.width == width && result.height == 6 / width)
    }

    /// The 8 fixtures store the same 32x24 picture pre-transformed (numpy) for each tag, JPEG
    /// quality 95, 4:4:4. Re-encoding a transposed grid changes JPEG rounding, measured at most 3
    /// levels (mean 0.31); a wrong transform would differ by ~100 levels on this pattern.
    @Test("Fixtures with EXIF orientations 1...8 decode to the same upright image")
    func fixtures() throws {
        let reference = try Image(contentsOf: Support.fixtures.appendingPathComponent("jpeg_orientation_1.jpg").path)
        for k in 1...8 {
            let image = try Image(contentsOf: Support.fixtures.appendingPathComponent("jpeg_orientation_\(k).jpg").path)
            #expect(image.orientation == k)
            #expect(image.width == 32 && image.height == 24 && image.sourceWidth == 32 && image.sourceHeight == 24)
            let d = Support.difference(image, reference)
            #expect(d.max <= 3 && d.mean <= 0.5, "orientation \(k): \(d)")
        }
    }

    @Test("applyOrientation false keeps the stored grid and still records the tag")
    func notApplied() throws {
        let path = Support.fixtures.appendingPathComponent("jpeg_orientation_6.jpg").path
        let image = try Image(contentsOf: path, options: ImageDecodingOptions(applyOrientation: false))
        #expect(image.orientation == 6)
        #expect(image.width == 24 && image.height == 32 && image.sourceWidth == 24 && image.sourceHeight == 32)
        let upright = try Image(contentsOf: path)
        let turned = ImageOrientation.upright(image.pixels, width: 24, height: 32, channels: 3, orientation: 6)
        #expect(turned.pixels == upright.pixels)
    }

    /// derived/exif_orientation_N.jpg are Pillow re-encodes of the picture in derived/rgb.png:
    /// upright they differ from it by JPEG loss only (mean 2.5–2.6 levels, the same as
    /// derived/progressive.jpg), where the stored, unturned grid is far off.
    @Test("Shared EXIF-rotated files decode upright",
          .enabled(if: ImageTestSupport.hasEdge, "\(ImageTestSupport.noEdge)"))
    func shared() throws {
        let source = try Image(contentsOf: Support.edge.appendingPathComponent("derived/rgb.png").path)
        for k in [3, 6, 8] {
            let image = try Image(contentsOf: Support.edge.appendingPathComponent("derived/exif_orientation_\(k).jpg").path)
            #expect(image.orientation == k)
            let d = Support.difference(image, source)
            #expect(d.mean <= 3.0, "derived orientation \(k): \(d)")
        }
        // Pillow's hopper_orientation_N: compare with the same portrait stored upright
        // (hopper_16bit_qtables.jpg, other quantisation): measured mean 10.3–11.2 levels when
        // turned, 74–82 when not.
        let hopper = try Image(contentsOf: Support.edge.appendingPathComponent("real/pillow_hopper_16bit_qtables.jpg").path)
        for k in [3, 6, 8] {
            let path = Support.edge.appendingPathComponent("real/pillow_hopper_orientation_\(k).jpg").path
            let image = try Image(contentsOf: path)
            #expect(image.orientation == k)
            #expect(Support.difference(image, hopper).mean <= 15)
            let stored = try Image(contentsOf: path, options: ImageDecodingOptions(applyOrientation: false))
            #expect(Support.difference(stored, hopper).mean >= 50)
        }
    }
}
