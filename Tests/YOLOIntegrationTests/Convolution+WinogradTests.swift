import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// yolov3-tiny's heads against OpenCV DNN's with every convolution path (the paths against a plain loop: the
/// unit tests' Convolution+WinogradTests.swift).
@Suite struct ConvolutionWinogradTests {
    /// The committed OpenCV reference tensors (scripts/make-head-fixtures.sh).
    static let raw = URL(fileURLWithPath: TestPaths.fixtures).appendingPathComponent("reference-heads")

    /// The issue-2 bar: |ours − OpenCV| ≤ 1e-3 on every value of both heads, for the three PNG input
    /// blobs, with every fast path on (`.auto` with two workers, in a workspace that keeps every output
    /// and in one that keeps only the heads, which fuses layers 0+1 and 2+3: `ConvolutionMaxPool`), with
    /// F(4×4) on every 3×3 layer, with F(2×2), and on the plain path. Measured: auto 1.6e-4, F(4×4)
    /// 1.9e-4, F(2×2) 1.5e-4, im2col 1.6e-4 (onnxruntime's own gap to OpenCV is about 1.6e-4 too).
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"),
          arguments: [ConvolutionAlgorithm.auto, .winograd4, .winograd2, .im2col], [false, true])
    func headsMatchOpenCV(algorithm: ConvolutionAlgorithm, headsOnly: Bool) throws {
        let model = try #require(TinyYOLO.model)
        let network = try Network(model: model, algorithm: algorithm)
        let workspace = Workspace(for: network, threads: 2, keeping: headsOnly ? Set(network.headIndices) : nil)
        for stem in ["skimage_coffee", "skimage_camera", "skimage_astronaut"] {
            let input = try Tensor.readNumPy(Self.raw.appendingPathComponent("\(stem).input.npy").path)
            let heads = try network.forward(input, workspace: workspace)
            for (head, name) in zip(heads, ["conv_15", "conv_22"]) {
                let reference = try Tensor.readNumPy(Self.raw.appendingPathComponent("\(stem).\(name).npy").path)
                #expect(reference.values.count == head.values.count)
                let gap = zip(head.values, reference.values).map { abs($0 - $1) }.max() ?? .infinity
                print("\(algorithm)\(headsOnly ? " heads-only" : "") \(stem) \(name): max |ours - OpenCV| = \(gap)")
                #expect(gap <= 1e-3, "\(stem) \(name): \(gap)")
            }
        }
    }
}
