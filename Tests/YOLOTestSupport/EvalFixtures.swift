import Foundation

/// Paths of the evaluation fixtures and of the shared reference data (`TestPaths.shared`).
package enum EvalFixtures {
    /// Tests/YOLOTests/Fixtures/eval, made by scripts/make-eval-fixtures.py.
    package static let folder = TestPaths.fixtures + "/eval"
    /// The coco-val2017-dev set in the shared data.
    package static let sharedSet = TestPaths.shared + "/data/coco-val2017-dev"
    /// The reference COCO results and metrics in the shared data.
    package static let sharedMap = TestPaths.shared + "/data/reference-outputs/coco-val2017-dev-map"
    /// Whether the shared reference data are present.
    package static var hasShared: Bool {
        FileManager.default.fileExists(atPath: sharedSet + "/annotations.json")
            && FileManager.default.fileExists(atPath: sharedMap + "/stretch.results.json")
    }

    /// The synthetic cases scored by pycocotools.
    package static let cases = ["crowd", "duplicates", "empty-images", "no-detections-for-category", "equal-scores",
                                "area-ranges", "max-dets", "gt-id-zero", "random-a", "random-b", "random-c"]

    /// What pycocotools computed for a case.
    package struct Expected: Decodable {
        package struct ClassAP: Decodable { package var ap: Double; package var ap50: Double }
        package var stats: [Double]
        package var perClass: [String: ClassAP]?
        package var summary: String?
    }

    /// Reads `<name>.expected.json` (or any file holding a `stats` array).
    package static func expected(_ file: String) throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + file)))
    }

    /// A fresh temporary folder, removed when the test process exits.
    package static func temporaryFolder() -> String { TemporaryFolders.make(prefix: "yolo-eval-tests-") }
}
