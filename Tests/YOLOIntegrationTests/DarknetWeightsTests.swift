import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Reading darknet's real yolov3-tiny weights (the reader's cases: the unit tests' DarknetWeightsTests.swift).
@Suite struct DarknetWeightsTests {
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
    func yolov3TinyUsesEveryFloat() throws {
        let d = try ModelDescription(cfgPath: TestPaths.cfg)
        let count = DarknetWeights.floatCount(for: d, geometry: try d.geometry(width: 416, height: 416))
        #expect(count == 8_858_734)
        let model = try #require(TinyYOLO.model)
        #expect(model.labels.count == 80 && model.labels[16] == "dog")
    }
}
