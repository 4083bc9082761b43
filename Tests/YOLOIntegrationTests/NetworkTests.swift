import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The real yolov3-tiny in a heads-only workspace (the plans on the test model: the unit tests' NetworkTests.swift).
@Suite struct WorkspacePlanTests {
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
    func yolov3TinyCompactPlanMatchesTheReference() throws {
        let network = try Network(model: try #require(TinyYOLO.model))
        let compact = Workspace(for: network, keeping: Set(network.headIndices))
        let full = Workspace(for: network)
        print("workspace floats: full \(full.arenaCount), heads only \(compact.arenaCount)")
        let folder = TestPaths.fixtures + "/reference-heads/"
        let input = try Tensor.readNumPy(folder + "skimage_coffee.input.npy")
        let heads = try network.forward(input, workspace: compact)
        #expect(heads[0].maxAbsDifference(try Tensor.readNumPy(folder + "skimage_coffee.conv_15.npy")) < 1e-3)
        #expect(heads[1].maxAbsDifference(try Tensor.readNumPy(folder + "skimage_coffee.conv_22.npy")) < 1e-3)
    }
}
