import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// Channel equalization before int8 quantization (`ChannelEqualization`) on the darknet-features fixture: which
/// convolutions it may rescale (homogeneous activation, readers that keep channels apart, alone in their tensor,
/// enough positions), that the rescaled float model computes the same heads, and the scales it gives.
@Suite struct ChannelEqualizationTests {
    static let folder = TestPaths.fixtures + "/darknet-features/"

    func fixture() throws -> (model: Model, input: Tensor, geometry: [LayerGeometry]) {
        let model = try Model(cfg: Self.folder + "features.cfg", weights: Self.folder + "features.weights")
        let input = try Tensor.readNumPy(Self.folder + "input.npy")
        let d = model.description
        return (model, input, try d.geometry(width: d.inputShape.width, height: d.inputShape.height))
    }

    /// Only leaky/linear/relu convolutions whose values reach no shortcut and no head: in the fixture, layer 9 (leaky,
    /// read by its max-pools and the concatenation feeding layer 16). Layer 4 is leaky too, but a shortcut reads it
    /// through the route of layer 5; the others have mish, swish or logistic, or feed a head. Layer 9 has 16×16
    /// positions per channel on the one 64×64 input: chosen when 256 are enough, not when 257 are needed.
    @Test func onlyChannelPreservingPathsAreRescaled() throws {
        let (model, input, geometry) = try fixture()
        let origins = ChannelEqualization.origins(model.description, geometry: geometry)
        #expect(ChannelEqualization.scalable(model, geometry: geometry, origins: origins) == [9])
        #expect(geometry[9].outputShape.planeCount == 256)
        #expect(ChannelEqualization.chosen(model, geometry: geometry, inputs: [input], minimumSamples: 256) == [9])
        #expect(ChannelEqualization.chosen(model, geometry: geometry, inputs: [input], minimumSamples: 257).isEmpty)
        #expect(ChannelEqualization.chosen(model, geometry: geometry, inputs: [input, input], minimumSamples: 512) == [9])
        // The route of layer 5 (layers 4 and 3, group 1 of 2 of layer 2's 16 channels) maps its channels back.
        #expect(origins[5].map { $0?.layer } == [Int?](repeating: 4, count: 8) + [Int?](repeating: 2, count: 8))
        #expect(origins[5].map { $0?.channel } == Array(0..<8) + Array(8..<16))
    }

    @Test func theFloatFunctionIsUnchanged() throws {
        let (model, input, _) = try fixture()
        let (equalized, scales) = try ChannelEqualization.equalize(model, inputs: [input], minimumSamples: 1)
        #expect(scales.keys.sorted() == [9])
        #expect(scales[9]!.contains { $0 > 1 }, "some channel of layer 9 is rescaled")
        let a = try Network(model: model, threads: 1).forward(input)
        let b = try Network(model: equalized, threads: 1).forward(input)
        for (x, y) in zip(a, b) {
            let scale = x.values.reduce(Float(0)) { max($0, abs($1)) }
            #expect(x.maxAbsDifference(y) <= 1e-5 * max(scale, 1), "heads within float rounding")
        }
        #expect(try ChannelEqualization.equalize(model, inputs: [input]).scales.isEmpty, "too few positions by default")
    }

    /// Each channel of layer 9 ends at the larger of its own largest magnitude and `1 / headroom` of the tensor's
    /// (the scale capped at `maximumScale`); the largest channel keeps its values.
    @Test func channelsMoveTowardsTheLargest() throws {
        let (model, input, geometry) = try fixture()
        func magnitudes(_ m: Model) throws -> [Float] {
            let network = try Network(model: m, threads: 1, int8Kernel: nil)
            let workspace = Workspace(for: network)
            _ = try network.forward(input, workspace: workspace)
            let values = workspace.output(of: 9), channels = geometry[9].outputShape.channels
            let plane = values.count / channels
            return (0..<channels).map { c in values[c * plane ..< (c + 1) * plane].reduce(Float(0)) { max($0, abs($1)) } }
        }
        let before = try magnitudes(model)
        let largest = before.max()!
        let after = try magnitudes(ChannelEqualization.equalize(model, inputs: [input], minimumSamples: 1).model)
        #expect(after.max() == largest)
        #expect(zip(before, after).contains { $0 != $1 })
        for (r, e) in zip(before, after) where r > 0 {
            let expected = r * max(1, min(ChannelEqualization.maximumScale, largest / (ChannelEqualization.headroom * r)))
            #expect(abs(e - expected) <= 1e-5 * largest, "\(r) → \(e), expected \(expected)")
        }
    }
}
