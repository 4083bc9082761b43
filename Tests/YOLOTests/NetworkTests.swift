import Foundation
import Testing
@_spi(Engine) @testable import YOLO

@Suite struct NetworkTests {
    // The whole network against OpenCV DNN's raw heads, for every convolution algorithm:
    // `headsMatchOpenCV` in Convolution+WinogradTests.swift.

    @Test func runsAtAnyInputSizeWithCustomClasses() throws {
        let description = try parse(tinyCfg(classes: 3, width: 64, height: 64))
        let folder = TestPaths.temporaryFolder()
        let (path, _) = try writeWeights(for: description, in: folder)
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        for (w, h) in [(64, 64), (96, 32), (32, 160)] {
            let network = try Network(model: model, width: w, height: h)
            var random = SeededRandom(seed: 3)
            let input = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
            let heads = try network.forward(input)
            #expect(heads.map(\.shape) == [Shape(channels: 24, height: h / 4, width: w / 4),
                                           Shape(channels: 24, height: h / 2, width: w / 2)])
            #expect(heads.allSatisfy { $0.values.allSatisfy(\.isFinite) })
        }
    }

    @Test func reusedWorkspaceGivesIdenticalResults() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let workspace = Workspace(for: network)
        var random = SeededRandom(seed: 5)
        let a = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        let b = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        let first = try network.forward(a, workspace: workspace)
        _ = try network.forward(b, workspace: workspace)
        #expect(try network.forward(a, workspace: workspace) == first)
        #expect(try network.forward(a) == first)
    }

    @Test func inputWithWrongChannelsIsAnError() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        #expect(throws: YOLOError.self) { _ = try network.forward(Tensor(zeros: Shape(channels: 1, height: 64, width: 64))) }
    }

    @Test func numPyRoundTrip() throws {
        var random = SeededRandom(seed: 9)
        let tensor = Tensor(shape: Shape(channels: 3, height: 5, width: 7), values: random.floats(105))
        let path = TestPaths.temporaryFolder() + "/t.npy"
        try tensor.writeNumPy(path)
        #expect(try Tensor.readNumPy(path) == tensor)
        let bad = TestPaths.temporaryFolder() + "/bad.npy"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(throws: YOLOError.invalidFile(path: bad, message: "not a NumPy .npy file (bad magic)")) { _ = try Tensor.readNumPy(bad) }
    }
}

@Suite struct WorkspacePlanTests {
    /// Keeping only the heads lets outputs share memory; the heads come out the same.
    @Test func compactWorkspaceGivesTheSameHeads() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let full = Workspace(for: network)
        let compact = Workspace(for: network, keeping: Set(network.headIndices))
        #expect(compact.arenaCount < full.arenaCount)
        var random = SeededRandom(seed: 21)
        let input = Tensor(shape: network.inputShape, values: random.floats(network.inputShape.count, 0, 1))
        #expect(try network.forward(input, workspace: compact) == network.forward(input, workspace: full))
    }

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
