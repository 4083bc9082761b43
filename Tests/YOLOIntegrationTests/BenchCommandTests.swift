import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

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

    /// One convolution cut out of a model (as `scripts/compare-layers.py` writes them) has no YOLO layer: its
    /// layers are timed and the detection stages are left out, where `--layers` used to fail on them.
    @Test func layersOfANetworkWithoutHeads() throws {
        let folder = TestPaths.temporaryFolder()
        let cfg = "[net]\nwidth=26\nheight=26\nchannels=16\n\n[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=leaky\n"
        try cfg.write(toFile: folder + "/conv.cfg", atomically: true, encoding: .utf8)
        let weights = try writeWeights(for: parse(cfg), in: folder).path
        let result = try runYOLO(["bench", "--cfg", folder + "/conv.cfg", "--weights", weights, "--threads", "1", "--runs", "2",
                                  "--warmup", "0", "--layers", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let first = try #require((json["results"] as? [[String: Any]])?.first)
        #expect((first["layers"] as? [Any])?.count == 1)
        #expect(first["stages"] == nil)
    }

    @Test func unreadableImageIsAnError() throws {
        let result = try runYOLOFloat(["bench", "--threads", "1", "--runs", "1", "--warmup", "0", "--layers",
                                       "--image", "/no/such/image.png"])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("/no/such/image.png: no such file"),
                "\(result.stderr)")
    }
}
