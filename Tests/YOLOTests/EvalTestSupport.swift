import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// Paths of the evaluation fixtures and of the shared reference data (`../shared` beside the package).
enum EvalFixtures {
    /// The package root, three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// Tests/YOLOTests/Fixtures/eval, made by scripts/make-eval-fixtures.py.
    static let folder = root + "/Tests/YOLOTests/Fixtures/eval"
    /// The coco-val2017-dev set in the shared data.
    static let sharedSet = root + "/../shared/data/coco-val2017-dev"
    /// The reference COCO results and metrics in the shared data.
    static let sharedMap = root + "/../shared/data/reference-outputs/coco-val2017-dev-map"
    /// Whether the shared reference data are present.
    static var hasShared: Bool {
        FileManager.default.fileExists(atPath: sharedSet + "/annotations.json")
            && FileManager.default.fileExists(atPath: sharedMap + "/stretch.results.json")
    }
    /// Why the shared-data tests skip.
    static let noShared: Comment = "../shared (the workplace's reference data) is absent"

    /// The synthetic cases scored by pycocotools.
    static let cases = ["crowd", "duplicates", "empty-images", "no-detections-for-category", "equal-scores",
                        "area-ranges", "max-dets", "gt-id-zero", "random-a", "random-b", "random-c"]

    /// What pycocotools computed for a case.
    struct Expected: Decodable {
        struct ClassAP: Decodable { var ap: Double; var ap50: Double }
        var stats: [Double]
        var perClass: [String: ClassAP]?
        var summary: String?
    }

    /// Reads `<name>.expected.json` (or any file holding a `stats` array).
    static func expected(_ file: String) throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + file)))
    }

    /// A fresh temporary folder, removed when the test process exits.
    static func temporaryFolder() -> String { TemporaryFolders.make(prefix: "yolo-eval-tests-") }
}
