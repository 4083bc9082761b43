import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The awkward variants of one COCO photo in ../shared/data/edge/derived (rotated by EXIF, gray, CMYK,
/// progressive, 16-bit, palette, RGBA) decode upright and give the detections of the plain rgb.png.
@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"),
       .enabled(if: TestPaths.hasShared, "\(Skip.noShared)"))
struct EdgeImageDetectionTests {
    static let folder = TestPaths.shared + "/data/edge/derived/"

    /// How closely a variant must reproduce rgb.png's detections, and why.
    struct Tier: Sendable, CustomTestStringConvertible {
        var file: String
        /// rgb.png detections at or above this confidence must be found in the variant...
        var minimumConfidence: Float
        /// ...with the same class and at least this IoU.
        var minimumIoU: Double
        var testDescription: String { file }
    }

    static let tiers: [Tier] = [
        // The same 8-bit pixels (alpha dropped): identical detections are required (checked separately).
        Tier(file: "rgba.png", minimumConfidence: 0, minimumIoU: 1),
        // 16-bit and palette PNGs and re-encoded JPEGs change pixels by a few levels (quantization,
        // JPEG loss): confident detections (≥ 0.35, well above the 0.25 threshold) must stay, IoU ≥ 0.8.
        Tier(file: "rgb16.png", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "palette.png", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "progressive.jpg", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "cmyk.jpg", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "exif_orientation_3.jpg", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "exif_orientation_6.jpg", minimumConfidence: 0.35, minimumIoU: 0.8),
        Tier(file: "exif_orientation_8.jpg", minimumConfidence: 0.35, minimumIoU: 0.8),
        // Gray removes colour, which the network uses: the clearly confident objects (≥ 0.5) must still be
        // found, each overlapping its rgb.png box by half or more.
        Tier(file: "gray.jpg", minimumConfidence: 0.5, minimumIoU: 0.5),
    ]

    @Test(arguments: tiers)
    func variantFindsTheSameObjects(tier: Tier) throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        let reference = try Image(contentsOf: Self.folder + "rgb.png")
        let variant = try Image(contentsOf: Self.folder + tier.file)
        #expect(variant.width == 640 && variant.height == 480, "upright size of \(tier.file)")
        let expected = try detector.detect(reference)
        let found = try detector.detect(variant)
        #expect(!expected.isEmpty)
        if tier.minimumIoU == 1 {
            #expect(variant.pixels == reference.pixels)
            #expect(found == expected)
            return
        }
        for e in expected where e.confidence >= tier.minimumConfidence {
            // Any of the variant's labels counts: a box may carry car 33% and truck 34%.
            let best = found.filter { $0.labels.contains { $0.label == e.label } }.map { $0.box.iou(e.box) }.max() ?? 0
            #expect(best >= tier.minimumIoU, "\(tier.file): \(e.label) \(e.confidence) at \(e.pixelRect(width: 640, height: 480)): best IoU \(best)")
        }
    }

    /// Files that are not images, or are empty, fail with one clear error; a truncated JPEG decodes
    /// what it can and says so.
    @Test func brokenFilesFailClearlyOrWarn() throws {
        for (file, fragment) in [("not_an_image.jpg", "not a JPEG or PNG image"), ("zero_bytes.jpg", "empty")] {
            do {
                _ = try Image(contentsOf: Self.folder + file)
                Issue.record("\(file) decoded")
            } catch let error as YOLOError {
                #expect("\(error)".contains(fragment) && "\(error)".contains(file), "\(error)")
            }
        }
        let truncated = try Image(contentsOf: Self.folder + "truncated_60pct.jpg")
        #expect(!truncated.decodeWarnings.isEmpty)
    }
}
