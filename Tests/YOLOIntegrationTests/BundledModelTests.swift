import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOModels
import YOLOTestSupport

/// The models bundled in the YOLOModels product: the files listed in its PROVENANCE.md (sha256), loadable
/// (the loader verifies each file's checksum), with the scaling their darknet expects, and a conversion of the
/// darknet weights: on the shipped samples they detect what the float model detects.
@Suite struct BundledModelTests {
    static let provenance = TestPaths.root + "/Sources/YOLOModels/PROVENANCE.md"

    @Test(arguments: ModelName.allCases)
    func bundledFileIsTheListedOne(name: ModelName) throws {
        let path = try #require(BundledModels.path(name), "no bundled \(name.fileName)")
        let listed = try String(contentsOfFile: Self.provenance, encoding: .utf8)
            .split(separator: "\n").first { $0.contains("`Resources/\(name.fileName)`") }
        let row = try #require(listed, "PROVENANCE.md lists no \(name.fileName)")
        let digest = SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(row.contains(digest), "\(name.fileName) has sha256 \(digest), not the one PROVENANCE.md lists")
        let model = try BundledModels.model(name)
        #expect(model.labels.count == 80)
        #expect(model.preferredScaling == (name == .yolov4Tiny ? .scaleFill : .scaleFit))
    }

    /// Every float detection on the four samples has a bundled-model detection of the same class at IoU >= 0.9.
    @Test(.enabled(if: TestPaths.hasWeights && TestPaths.hasV4Weights, "\(Skip.noV4Weights)"), arguments: ModelName.allCases)
    func bundledModelDetectsWhatTheFloatModelDetects(name: ModelName) throws {
        let float = try #require(name == .yolov4Tiny ? TinyYOLO.v4 : TinyYOLO.model)
        let (reference, candidate) = (try Detector(model: float), try Detector(bundled: name))
        var matched = 0, total = 0
        for sample in ["astronaut", "camera", "chelsea", "coffee"] {
            let image = try Image(contentsOf: TestPaths.root + "/Samples/\(sample).png")
            let ours = try candidate.detect(image)
            for d in try reference.detect(image) {
                total += 1
                if ours.contains(where: { $0.classIndex == d.classIndex && $0.box.iou(d.box) >= 0.9 }) { matched += 1 }
            }
        }
        print("\(name.rawValue) bundled: \(matched)/\(total) float detections matched at IoU >= 0.9")
        #expect(total > 0 && matched == total)
    }

    /// `Detector(named:)` finds the bundled file when Weights/ has none (the test runner links YOLOModels).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL_DIR"] == nil,
                   "SWIFTYOLO_MODEL_DIR is set, which overrides the search"))
    func namedModelFallsBackToTheBundle() throws {
        let path = try #require(ModelName.yolov4Tiny.path(searching: [TestPaths.temporaryFolder()]))
        #expect(path.hasSuffix("_YOLOModels.resources/yolov4-tiny-lut8.yolo"), "\(path)")
    }
}
