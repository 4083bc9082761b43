import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// darknet's full yolov3 topology (106 layers: 23 residual blocks with [shortcut], routes over two layers, three
/// heads; filters / 8) with seeded random weights, against OpenCV DNN 4.14 on one input
/// (scripts/make-yolov3-fixtures.py, which draws the same weights from the same generator).
@Suite struct YOLOv3FullTests {
    static let folder = TestPaths.fixtures + "/yolov3-full/"

    /// The weights file the fixture script made for OpenCV: darknet's layout, every value from
    /// `SeededRandom(seed: 3)` in the script's order and ranges.
    static func writeWeights(for description: ModelDescription, to path: String) throws {
        let geometry = try description.geometry(width: 96, height: 96)
        var random = SeededRandom(seed: 3)
        var bytes = Data()
        for value in [Int32(0), 2, 0] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        withUnsafeBytes(of: Int64(0)) { bytes.append(contentsOf: $0) }
        func append(_ values: [Float]) { values.withUnsafeBytes { bytes.append(contentsOf: $0) } }
        for (index, layer) in description.layers.enumerated() {
            guard case .convolution(let s) = layer else { continue }
            let fanIn = geometry[index].inputShapes[0].channels * s.size * s.size
            var residual = false
            if index + 1 < description.layers.count, case .shortcut = description.layers[index + 1] { residual = true }
            append(random.floats(s.filters, -0.1, 0.1))
            if s.batchNormalize {
                append(random.floats(s.filters, 0.5, 1.0))
                append(random.floats(s.filters, -0.1, 0.1))
                append(random.floats(s.filters, 0.5, 2.0))
            }
            let bound = Float((6.0 / Double(fanIn)).squareRoot() * (residual ? 1.0 / 3 : 1))
            append(random.floats(s.filters * fanIn, -bound, bound))
        }
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    /// All three heads within 1e-3 of OpenCV (issue 13's bar). The heads move by 0.02–0.15 when the input
    /// changes, so the bar is far below what a wrong layer would shift.
    @Test func headsMatchOpenCV() throws {
        let description = try ModelDescription(cfgPath: Self.folder + "yolov3-narrow.cfg")
        #expect(description.layers.count == 107)
        #expect(description.heads.map(\.index) == [82, 94, 106])
        let weights = TestPaths.temporaryFolder() + "/yolov3-narrow.weights"
        try Self.writeWeights(for: description, to: weights)
        let model = try Model(cfg: Self.folder + "yolov3-narrow.cfg", weights: weights)
        let network = try Network(model: model)
        let heads = try network.forward(try Tensor.readNumPy(Self.folder + "input.npy"), workspace: Workspace(for: network))
        #expect(heads.count == 3)
        for (index, head) in heads.enumerated() {
            let gap = head.maxAbsDifference(try Tensor.readNumPy(Self.folder + "head\(index).npy"))
            print("yolov3 (full topology) head \(index): max |ours - OpenCV| = \(gap)")
            #expect(gap < 1e-3, "head \(index): \(gap)")
        }
    }
}
