import Foundation

/// Boxes decoded from the YOLO heads, before suppression: structure of arrays.
@_spi(Engine) public struct Candidates: Sendable {
    /// Number of classes per candidate.
    public let classes: Int
    /// Box centres and sizes (cx, cy, w, h), normalized to the network input.
    public var boxes: [Rect] = []
    public var objectness: [Float] = []
    /// `count × classes` probabilities (objectness × class probability), 0 where not above threshold.
    public var probabilities: [Float] = []

    public init(classes: Int) { self.classes = classes }

    public var count: Int { objectness.count }
}

/// Darknet's YOLO decoding (`get_yolo_detections`): sigmoid on x, y, objectness and class logits,
/// exponential sizes times the head's anchors; with `new_coords` (AlexeyAB) the values are already
/// logistic and sizes are (2v)² times the anchors.
@_spi(Engine) public enum AnchorDecoding {
    /// Appends the candidates of one head to `candidates`.
    ///
    /// - Parameters:
    ///   - raw: the head's raw output, `mask.count · (5 + classes)` channels of `grid` cells, CHW.
    ///   - head: the head (mask, anchors, classes, scale_x_y).
    ///   - networkWidth, networkHeight: input size in pixels (anchors are in input pixels).
    ///   - threshold: a cell needs objectness > threshold; a class probability is kept only when > threshold.
    /// Cells are visited in (row, column, anchor) order, like darknet.
    public static func decode(_ raw: UnsafeBufferPointer<Float>, head: YOLOHead, networkWidth: Int, networkHeight: Int,
                              threshold: Float, into candidates: inout Candidates) {
        if head.distributionBins > 0 {
            decodeAnchorFree(raw, head: head, networkWidth: networkWidth, networkHeight: networkHeight, threshold: threshold,
                             into: &candidates)
            return
        }
        let (gw, gh) = (head.outputShape.width, head.outputShape.height)
        let plane = gw * gh
        let stride = 5 + head.classes
        precondition(raw.count == head.mask.count * stride * plane, "decode: raw size does not match the head")
        precondition(candidates.classes == head.classes, "decode: class count mismatch")
        let s = head.scaleXY
        let newCoords = head.newCoords
        @inline(__always) func activated(_ v: Float) -> Float { newCoords ? v : sigmoid(v) }
        @inline(__always) func size(_ v: Float) -> Float { newCoords ? 4 * v * v : expf(v) }
        for row in 0..<gh {
            for col in 0..<gw {
                let cell = row * gw + col
                for (n, anchorIndex) in head.mask.enumerated() {
                    let base = n * stride * plane + cell
                    let objectness = activated(raw[base + 4 * plane])
                    guard objectness > threshold else { continue }
                    let anchor = head.anchors[anchorIndex]
                    let cx = (Float(col) + activated(raw[base]) * s - (s - 1) / 2) / Float(gw)
                    let cy = (Float(row) + activated(raw[base + plane]) * s - (s - 1) / 2) / Float(gh)
                    let w = size(raw[base + 2 * plane]) * anchor.width / Float(networkWidth)
                    let h = size(raw[base + 3 * plane]) * anchor.height / Float(networkHeight)
                    // A forward pass that overflowed (weights far out of range) gives no box rather than a
                    // box of infinities; NaN objectness already failed the threshold test above.
                    guard cx.isFinite, cy.isFinite, w.isFinite, h.isFinite else { continue }
                    candidates.boxes.append(Rect(x: Double(cx - w / 2), y: Double(cy - h / 2), width: Double(w), height: Double(h)))
                    candidates.objectness.append(objectness)
                    for k in 0..<head.classes {
                        let p = objectness * activated(raw[base + (5 + k) * plane])
                        candidates.probabilities.append(p > threshold ? p : 0)
                    }
                }
            }
        }
    }

    /// Ultralytics' anchor-free decoding (YOLOv8 `Detect`): each cell's anchor point is its centre, each box
    /// side's distance from it is the expectation of a softmax over `distributionBins` bins (in strides), class
    /// scores are sigmoids and there is no objectness. A cell becomes a candidate when its best class score is
    /// above `threshold`; like Ultralytics' single-label NMS it keeps only that class's score (the others 0), and
    /// its `objectness` is that score. The stride is the network size over the grid size (8, 16, 32 for YOLOv8).
    /// Cells are visited in row, column order.
    static func decodeAnchorFree(_ raw: UnsafeBufferPointer<Float>, head: YOLOHead, networkWidth: Int, networkHeight: Int,
                                 threshold: Float, into candidates: inout Candidates) {
        let (gw, gh) = (head.outputShape.width, head.outputShape.height)
        let plane = gw * gh
        let bins = head.distributionBins
        let classes = head.classes
        precondition(raw.count == (4 * bins + classes) * plane, "decode: raw size does not match the head")
        precondition(candidates.classes == classes, "decode: class count mismatch")
        let (strideX, strideY) = (Float(networkWidth) / Float(gw), Float(networkHeight) / Float(gh))
        let classBase = 4 * bins * plane
        var weights = [Float](repeating: 0, count: bins)
        for row in 0..<gh {
            for col in 0..<gw {
                let cell = row * gw + col
                var best = 0
                var bestLogit = raw[classBase + cell]
                for k in 1..<max(classes, 1) where raw[classBase + k * plane + cell] > bestLogit {
                    (best, bestLogit) = (k, raw[classBase + k * plane + cell])
                }
                let score = sigmoid(bestLogit)
                guard score > threshold else { continue }
                // Distances to the left, top, right and bottom sides, in strides.
                var distance: [Float] = [0, 0, 0, 0]
                for side in 0..<4 {
                    let base = side * bins * plane + cell
                    var largest = raw[base]
                    for b in 1..<bins { largest = max(largest, raw[base + b * plane]) }
                    var sum: Float = 0
                    for b in 0..<bins {
                        weights[b] = expf(raw[base + b * plane] - largest)
                        sum += weights[b]
                    }
                    var expectation: Float = 0
                    for b in 0..<bins { expectation += Float(b) * weights[b] }
                    distance[side] = expectation / sum
                }
                let (ax, ay) = (Float(col) + 0.5, Float(row) + 0.5)
                let x1 = (ax - distance[0]) * strideX, y1 = (ay - distance[1]) * strideY
                let x2 = (ax + distance[2]) * strideX, y2 = (ay + distance[3]) * strideY
                guard x1.isFinite, y1.isFinite, x2.isFinite, y2.isFinite else { continue }
                let (w, h) = (Double(networkWidth), Double(networkHeight))
                candidates.boxes.append(Rect(x: Double(x1) / w, y: Double(y1) / h, width: Double(x2 - x1) / w, height: Double(y2 - y1) / h))
                candidates.objectness.append(score)
                let start = candidates.probabilities.count
                candidates.probabilities.append(contentsOf: repeatElement(0, count: classes))
                candidates.probabilities[start + best] = score
            }
        }
    }

    @inline(__always)
    static func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }
}
