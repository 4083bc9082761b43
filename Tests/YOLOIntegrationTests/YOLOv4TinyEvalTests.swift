import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `yolo eval` of the float yolov4-tiny on coco-val2017-dev in both of darknet's modes, against the OpenCV DNN
/// figures (Fixtures/eval/yolov4-tiny.<mode>.metrics.json, scripts/make-yolov4-tiny-fixtures.sh): mAP@[.5:.95]
/// and mAP@.5 within 0.003, issue 13's bar (measured: equal to 4 decimals).
@Suite(.serialized) struct YOLOv4TinyEvalTests {
    static var ready: Bool { TestPaths.hasV4Weights && EvalFixtures.hasShared }

    @Test(.enabled(if: ready, "needs Weights/yolov4-tiny.weights and ../shared"), arguments: [("stretch", "stretch_dn"), ("fit", "letterbox_dn")])
    func mapMatchesOpenCV(scale: String, mode: String) throws {
        struct Metrics: Decodable { var mAP: Double; var mAP50: Double }
        struct Output: Decodable { var stats: [Double] }
        let reference = try JSONDecoder().decode(Metrics.self, from: Data(contentsOf: URL(fileURLWithPath:
            TestPaths.fixtures + "/eval/yolov4-tiny.\(mode).metrics.json")))
        let results = TestPaths.temporaryFolder() + "/results.json"
        let run = try runYOLO(["eval", "--cfg", TestPaths.v4Cfg, "--weights", TestPaths.v4Weights, "--names", TestPaths.names,
                               "--images", EvalFixtures.sharedSet + "/images", "--annotations", EvalFixtures.sharedSet + "/annotations.json",
                               "--results", results, "--scale", scale, "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try JSONDecoder().decode(Output.self, from: Data(run.stdout.utf8)).stats
        print("yolov4-tiny \(mode): mAP \(stats[0]) / \(stats[1]), OpenCV \(reference.mAP) / \(reference.mAP50)")
        #expect(abs(stats[0] - reference.mAP) <= 0.003 && abs(stats[1] - reference.mAP50) <= 0.003)
    }
}
