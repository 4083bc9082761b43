import Foundation
import Testing
@_spi(Engine) @testable import YOLO

/// `yolo bench` output contract (no timing assertions: speed is measured, never tested).
@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct BenchCommandTests {
    @Test func jsonHasTheFieldsAndStages() throws {
        let result = try runYOLOFloat(["bench", "--threads", "1", "--runs", "2", "--warmup", "0", "--layers", "--format", "json",
                                       "--image", TestPaths.root + "/Samples/coffee.png"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let first = try #require((json["results"] as? [[String: Any]])?.first)
        for key in ["threads", "median_ms", "min_ms", "max_ms", "p90_ms", "runs", "blas_core", "layers", "stages"] {
            #expect(first[key] != nil, "missing \(key)")
        }
        #expect((first["layers"] as? [Any])?.count == 24)
        let stages = try #require(first["stages"] as? [String: Any])
        #expect(stages["preprocess_ms"] != nil && stages["nms_ms"] != nil)
    }

    @Test func unreadableImageIsAnError() throws {
        let result = try runYOLOFloat(["bench", "--threads", "1", "--runs", "1", "--warmup", "0", "--layers",
                                       "--image", "/no/such/image.png"])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("/no/such/image.png: no such file"),
                "\(result.stderr)")
    }
}
