import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The features of AlexeyAB's darknet that yolov4-tiny and its family use, each against a reference that does
/// not share our code: OpenCV DNN on a small network that uses them all (scripts/make-feature-fixtures.py),
/// the formulas written out plainly, and darknet's quadratic DIoU-NMS loop.
@Suite struct DarknetFeaturesTests {
    static let folder = TestPaths.fixtures + "/darknet-features/"

    /// mish, swish and logistic convolutions, route groups, routes over four layers, a shortcut, an SPP block
    /// (stride-1 max-pools of 5, 9 and 13 with darknet's padding), upsample, `new_coords` and `scale_x_y`
    /// heads: both heads within 1e-4 of OpenCV DNN 4.14 (measured 1.3e-5), in every kernel family's code
    /// path the suite runs, and again after a round trip through a `.yolo` file.
    @Test func headsMatchOpenCV() throws {
        let model = try Model(cfg: Self.folder + "features.cfg", weights: Self.folder + "features.weights")
        let input = try Tensor.readNumPy(Self.folder + "input.npy")
        let path = TestPaths.temporaryFolder() + "/features.yolo"
        try ModelFile.write(model, to: path)
        for candidate in [model, try Model(contentsOf: path)] {
            let network = try Network(model: candidate)
            // Every output kept, and the compact plan a detector uses (routes as views and in-place
            // concatenations in both, `Workspace.routeAliases`).
            for workspace in [Workspace(for: network), Workspace(for: network, keeping: Set(network.headIndices))] {
                let heads = try network.forward(input, workspace: workspace)
                #expect(heads.count == 2)
                for (index, head) in heads.enumerated() {
                    let gap = head.maxAbsDifference(try Tensor.readNumPy(Self.folder + "head\(index).npy"))
                    print("darknet features, head \(index): max |ours - OpenCV| = \(gap)")
                    #expect(gap < 1e-4, "head \(index): \(gap)")
                }
            }
        }
    }

    /// What the cfg says besides the layers, and that a `.yolo` file keeps it.
    @Test func descriptionKeepsScalingSuppressionAndNewCoords() throws {
        let model = try Model(cfg: Self.folder + "features.cfg", weights: Self.folder + "features.weights")
        let path = TestPaths.temporaryFolder() + "/features.yolo"
        try ModelFile.write(model, to: path)
        for description in [model.description, try Model(contentsOf: path).description] {
            #expect(description.preferredScaling == .scaleFit, "[net] letter_box=1 wins over AlexeyAB's keys")
            #expect(description.suppression == .distanceIoU(beta: 0.6))
            #expect(description.heads.map(\.spec.newCoords) == [true, false])
            #expect(description.heads.map(\.spec.scaleXY) == [2.0, 1.05])
        }
    }

    /// The activations against their definitions in double precision (darknet's mish: softplus is x above 20
    /// and eˣ below −20), and every SIMD lane against the scalar form. Tolerance 4e-6 relative (at least
    /// absolute): mish in float32 computes tanh as 2/(1 + e^(−2·softplus)) − 1, as darknet does, which loses
    /// up to about 1.2e-6 near 0 (measured); the OpenCV test above bounds the effect on a network.
    @Test func mishAndSwishFollowTheirDefinitions() {
        for i in -4000...4000 {
            let x = Float(i) / 100
            let d = Double(x)
            let softplus = d > 20 ? d : (d < -20 ? exp(d) : log1p(exp(d)))
            let mish = d * tanh(softplus), swish = d / (1 + exp(-d))
            #expect(abs(Double(Activation.mish(x)) - mish) <= 4e-6 * max(1, abs(mish)), "mish(\(x))")
            #expect(abs(Double(Activation.swish(x)) - swish) <= 1e-6 * max(1, abs(swish)), "swish(\(x))")
            let logistic = 1 / (1 + exp(-d))
            #expect(abs(Double(Activation.logistic(x)) - logistic) <= 1e-6 * logistic, "logistic(\(x))")
        }
        // Every lane, at every width the kernels use, equals the scalar form bit for bit, out to where the
        // exponential clamps (±87, ±88) and beyond.
        let values: [Float] = [-30, -3, -1.2, -0.1, 0, 0.7, 5, 25, -1000, -88.5, -87, 86.9, 88, 88.2, 1e30, -.infinity]
        let lanes16 = SIMD16<Float>(values), lanes8 = SIMD8<Float>(values[0..<8]), lanes4 = SIMD4<Float>(values[8..<12])
        for activation in [Activation.mish, .swish, .logistic] {
            let v16 = activation(lanes16), v8 = activation(lanes8), v4 = activation(lanes4)
            for k in 0..<16 { #expect(v16[k].bitPattern == activation(values[k]).bitPattern, "\(activation)(\(values[k])) in 16 lanes") }
            for k in 0..<8 { #expect(v8[k].bitPattern == activation(values[k]).bitPattern) }
            for k in 0..<4 { #expect(v4[k].bitPattern == activation(values[8 + k]).bitPattern) }
        }
        #expect(abs(Activation.swish(-1000)) < 1e-30 && Activation.swish(1000) == 1000 && Activation.logistic(-1000) < 1e-37)
        #expect(!Activation.mish.isPiecewiseLinear && !Activation.swish.isPiecewiseLinear && Activation.leaky.isPiecewiseLinear)
    }

    /// `new_coords=1` decoding against the formulas written out: values used as they are (already logistic),
    /// x = (col + s·v − (s − 1)/2) / W, w = 4v²·anchor / input width.
    @Test func newCoordsDecoding() {
        let (gw, gh, classes) = (3, 2, 2)
        let shape = Shape(channels: 2 * (5 + classes), height: gh, width: gw)
        let anchors: [(width: Float, height: Float)] = [(10, 14), (23, 27)]
        let head = YOLOHead(input: 0, shape: shape, anchors: anchors, mask: [1, 0], classes: classes, scaleXY: 2, newCoords: true)
        var random = SeededRandom(seed: 5)
        let raw = random.floats(shape.count, 0.3, 1)
        var candidates = Candidates(classes: classes)
        raw.withUnsafeBufferPointer {
            AnchorDecoding.decode($0, head: head, networkWidth: 96, networkHeight: 64, threshold: 0.25, into: &candidates)
        }
        let plane = gw * gh
        var k = 0
        for row in 0..<gh {
            for col in 0..<gw {
                for (n, anchor) in [1, 0].enumerated() {
                    let v = { (c: Int) in Double(raw[(n * (5 + classes) + c) * plane + row * gw + col]) }
                    let cx = (Double(col) + 2 * v(0) - 0.5) / Double(gw), cy = (Double(row) + 2 * v(1) - 0.5) / Double(gh)
                    let w = 4 * v(2) * v(2) * Double(anchors[anchor].width) / 96, h = 4 * v(3) * v(3) * Double(anchors[anchor].height) / 64
                    let box = candidates.boxes[k]
                    #expect(abs(box.midX - cx) < 1e-6 && abs(box.midY - cy) < 1e-6 && abs(box.width - w) < 1e-5 && abs(box.height - h) < 1e-5)
                    #expect(abs(Double(candidates.objectness[k]) - v(4)) < 1e-7)
                    for c in 0..<classes {
                        let p = v(4) * v(5 + c)   // kept only above the threshold, like darknet
                        #expect(abs(Double(candidates.probabilities[k * classes + c]) - (p > 0.25 ? p : 0)) < 1e-6)
                    }
                    k += 1
                }
            }
        }
        #expect(k == candidates.count)
    }

    /// darknet's `diounms_sort` for one class, written out: best first, a later box goes when
    /// IoU − (d²/c²)^beta with a kept one exceeds the threshold.
    static func diouReference(_ order: [Int], boxes: [Rect], limit: Double, beta: Double) -> [Bool] {
        var kept: [Int] = []
        return order.map { j in
            let b = boxes[j]
            for i in kept {
                let a = boxes[i]
                let inter = max(0, min(a.maxX, b.maxX) - max(a.minX, b.minX)) * max(0, min(a.maxY, b.maxY) - max(a.minY, b.minY))
                let union = a.width * a.height + b.width * b.height - inter
                let iou = inter > 0 ? inter / union : 0
                let (cw, ch) = (max(a.maxX, b.maxX) - min(a.minX, b.minX), max(a.maxY, b.maxY) - min(a.minY, b.minY))
                let d = pow(a.midX - b.midX, 2) + pow(a.midY - b.midY, 2)
                let diou = cw * cw + ch * ch == 0 ? iou : iou - pow(d / (cw * cw + ch * ch), beta)
                if diou > limit { return false }
            }
            kept.append(j)
            return true
        }
    }

    @Test func distanceIoUSuppressionMatchesDarknetsLoop() {
        var random = SeededRandom(seed: 91)
        func uniform() -> Double { Double(random.next() % 1_000_000) / 1_000_000 }
        var differsFromIoU = false
        for trial in 0..<40 {
            let count = [3, 20, 200, 1500][trial % 4]
            let boxes = (0..<count).map { k -> Rect in
                let (cx, cy) = (Double(k % 4) * 0.25 + 0.08 * uniform(), Double(k % 3) * 0.3 + 0.08 * uniform())
                return Rect(x: cx, y: cy, width: 0.05 + 0.15 * uniform(), height: 0.05 + 0.15 * uniform())
            }
            let order = Array(0..<count)
            for (limit, beta) in [(0.45, 0.6), (0.3, 1.0), (0.6, 0.3)] {
                let ours = GreedySuppression.survivors(order, boxes: boxes, limit: limit, kind: .distanceIoU(beta: Float(beta)))
                #expect(ours == Self.diouReference(order, boxes: boxes, limit: limit, beta: Double(Float(beta))), "trial \(trial)")
                if ours != GreedySuppression.survivors(order, boxes: boxes, limit: limit) { differsFromIoU = true }
            }
        }
        #expect(differsFromIoU, "DIoU never decided differently from IoU: the test would not notice it being ignored")
    }

    /// An option we do not run is still an error naming its line.
    @Test func unsupportedOptionsNameTheirLine() throws {
        let cfg = try String(contentsOfFile: Self.folder + "features.cfg", encoding: .utf8)
        expectConfigError(line: 111, containing: "nms_kind=cornersnms") {
            _ = try parse(cfg.replacingOccurrences(of: "scale_x_y=2.0\nnew_coords=1\nnms_kind=diounms", with: "scale_x_y=2.0\nnew_coords=1\nnms_kind=cornersnms"))
        }
        expectConfigError(line: 110, containing: "new_coords must be 0 or 1") {
            _ = try parse(cfg.replacingOccurrences(of: "new_coords=1", with: "new_coords=2"))
        }
    }
}
