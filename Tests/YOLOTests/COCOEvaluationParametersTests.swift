import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation
import YOLOTestSupport

/// The thresholds and numpy-order arithmetic, against values numpy itself produced (params.json, made by
/// scripts/make-eval-fixtures.py).
@Suite struct COCOEvaluationParametersTests {
    struct Params: Decodable {
        struct MeanCheck: Decodable { var numpyMean: Double; var plainMean: Double }
        var iouThrs: [Double]
        var recThrs: [Double]
        var meanCheck: MeanCheck
    }

    static func params() throws -> Params {
        try JSONDecoder().decode(Params.self, from: Data(contentsOf: URL(fileURLWithPath: EvalFixtures.folder + "/params.json")))
    }

    @Test func thresholdsAreNumpyLinspaceBitForBit() throws {
        let params = try Self.params()
        let ours = COCOEvaluationParameters()
        #expect(ours.iouThresholds == params.iouThrs)
        #expect(ours.recallThresholds == params.recThrs)
        #expect(ours.iouThresholds.contains(0.5) && ours.iouThresholds.contains(0.75))
    }

    @Test func meanSumsPairwiseLikeNumpy() throws {
        let check = try Self.params().meanCheck
        let values = (0..<1003).map { Double($0) / 7.0 + 1e-3 }
        #expect(check.numpyMean != check.plainMean)  // the check can tell the two orders apart
        #expect(NumPyMath.mean(values) == check.numpyMean)
    }

    @Test func searchSortedLeftCountsSmallerValues() {
        let sorted = [0.1, 0.2, 0.2, 0.5]
        #expect(NumPyMath.searchSortedLeft(sorted, 0) == 0)
        #expect(NumPyMath.searchSortedLeft(sorted, 0.2) == 1)
        #expect(NumPyMath.searchSortedLeft(sorted, 0.3) == 3)
        #expect(NumPyMath.searchSortedLeft(sorted, 0.6) == 4)
        #expect(NumPyMath.searchSortedLeft([], 0.5) == 0)
    }

    @Test func areaRangesIncludeBothEnds() {
        let ranges = COCOEvaluationParameters().areaRanges
        #expect(ranges.map(\.label) == ["all", "small", "medium", "large"])
        #expect(ranges[1].contains(1024) && ranges[2].contains(1024))
        #expect(ranges[2].contains(9216) && ranges[3].contains(9216))
        #expect(!ranges[1].contains(1024.0001))
    }
}
