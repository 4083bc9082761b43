import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `yolo convert` with no model named starts from darknet's float weights even when the converted default
/// model exists: converting twice must not quantize already-quantized weights.
@Suite(.enabled(if: TestPaths.hasV4Weights, "\(Skip.noV4Weights)"))
struct ConvertDefaultSourceTests {
    @Test func convertReadsTheDarknetWeights() throws {
        let folder = TestPaths.temporaryFolder()
        let lut8 = folder + "/lut8.yolo", float = folder + "/float.yolo"
        #expect(try runYOLO(["convert", "-o", lut8]).status == 0)
        let result = try runYOLO(["convert", "-o", float, "--quantize", "none"],
                                 environment: ["SWIFTYOLO_MODEL": lut8])
        #expect(result.status == 0, "\(result.stderr)")
        let converted = try Model(contentsOf: float)
        let darknet = try #require(TinyYOLO.v4)
        #expect(converted.convolutions[12]?.weights.array == darknet.convolutions[12]?.weights.array)
    }
}
