import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct ForwardCommandTests {
    /// Given an image, `yolo forward` feeds exactly darknet's letterbox blob (OpenCV's reference input for the
    /// same PNG) and its heads agree with OpenCV's within the whole-network bar.
    @Test func imageInputIsDarknetsLetterbox() throws {
        let out = TestPaths.temporaryFolder()
        let result = try runYOLOFloat(["forward", "--input", TestPaths.root + "/Samples/coffee.png", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let reference = TestPaths.fixtures + "/reference-heads/skimage_coffee."
        #expect(try Tensor.readNumPy(out + "/input.npy") == Tensor.readNumPy(reference + "input.npy"))
        #expect(try Tensor.readNumPy(out + "/layer16.npy").maxAbsDifference(Tensor.readNumPy(reference + "conv_15.npy")) < 1e-3)
        let layer = try runYOLOFloat(["forward", "--input", reference + "input.npy", "--out", out, "--layer", "13"])
        #expect(try Tensor.readNumPy(out + "/layer13.npy").shape == Shape(channels: 256, height: 13, width: 13), "\(layer.stderr)")
        let bad = try runYOLOFloat(["forward", "--input", reference + "input.npy", "--out", out, "--layer", "99"])
        #expect(bad.status == 1 && bad.stderr.contains("--layer 99 does not exist"))
    }
}
