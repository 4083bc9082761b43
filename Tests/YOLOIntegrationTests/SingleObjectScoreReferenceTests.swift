import Foundation
import Testing
import YOLO
import YOLOEvaluation
import YOLOTestSupport

/// `SingleObjectScore` against `../shared/reference/sot_reference.py score` on committed results files (the
/// ground truth is in ../shared, which the unit tests may not read).
@Suite struct SingleObjectScoreReferenceTests {
    /// Our scores of a results file equal those of `../shared/reference/sot_reference.py score` (Fixtures/sot).
    @Test(.enabled(if: TestPaths.hasTrackingData, "\(Skip.noTrackingData)"), arguments: ["Crossing", "bag"])
    func agreesWithTheReferenceScorer(sequence: String) throws {
        let fixtures = TestPaths.fixtures + "/sot/"
        let boxes = try SingleObjectScore.readBoxes(fixtures + sequence + "-fast.txt")
        let truth = try SingleObjectScore.readBoxes(TestPaths.trackingData + "/\(sequence)/groundtruth.txt")
        let score = SingleObjectScore(boxes: boxes, truth: truth)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixtures + sequence + "-fast.score.json"))
        let expected = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        #expect(score.frames == expected["frames"] as! Int)
        #expect(abs(score.successAUC - (expected["auc"] as! Double)) <= 0.00005 + 1e-12)
        #expect(abs(score.precision20 - (expected["precision20"] as! Double)) <= 0.00005 + 1e-12)
        #expect(abs(score.meanIoU - (expected["mean_iou"] as! Double)) <= 0.00005 + 1e-12)
    }
}
