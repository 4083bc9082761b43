import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `GreedySuppression` compares each candidate only with survivors that share a grid cell; its decisions
/// must equal the plain quadratic loop's (darknet's `do_nms_sort` order) on any set of boxes.
@Suite struct GreedySuppressionTests {
    /// Every candidate against every earlier survivor.
    static func reference(_ order: [Int], boxes: [Rect], limit: Double) -> [Bool] {
        var survivors: [Int] = []
        return order.map { j in
            guard !survivors.contains(where: { boxes[$0].iou(boxes[j]) > limit }) else { return false }
            survivors.append(j)
            return true
        }
    }

    @Test func sameDecisionsAsTheQuadraticLoop() {
        var random = SeededRandom(seed: 77)
        func uniform() -> Double { Double(random.next() % 1_000_000) / 1_000_000 }
        for trial in 0..<60 {
            let count = [1, 2, 7, 50, 400, 3000][trial % 6]
            // Clusters of similar boxes (what detections look like), scattered boxes of all sizes, some
            // huge (more cells than the grid's large-box cut-off), empty, inverted and far outside.
            let boxes: [Rect] = (0..<count).map { k in
                switch k % 7 {
                case 0, 1, 2:
                    let (cx, cy) = (Double(k % 5) * 0.2 + 0.05 * uniform(), Double(k % 3) * 0.3 + 0.05 * uniform())
                    return Rect(x: cx, y: cy, width: 0.1 + 0.02 * uniform(), height: 0.12 + 0.02 * uniform())
                case 3: return Rect(x: uniform(), y: uniform(), width: 0.01 * uniform(), height: 0.01 * uniform())
                case 4: return Rect(x: uniform() - 0.5, y: uniform() - 0.5, width: 2 * uniform(), height: 2 * uniform())
                case 5: return [Rect(x: uniform(), y: uniform(), width: 0, height: 0.1),
                                Rect(x: uniform(), y: uniform(), width: -0.1, height: 0.2),
                                Rect(x: 1e6 * uniform(), y: -1e6, width: 1e7, height: 0.5)][k % 3]
                default: return Rect(x: uniform(), y: uniform(), width: 0.3 * uniform(), height: 0.3 * uniform())
                }
            }
            var order = Array(0..<count)
            for i in order.indices.reversed() { order.swapAt(i, Int(random.next() % UInt64(i + 1))) }
            for limit in [0.05, 0.45, 0.7, 1.0] {
                let fast = GreedySuppression.survivors(order, boxes: boxes, limit: limit)
                #expect(fast == Self.reference(order, boxes: boxes, limit: limit), "trial \(trial), \(count) boxes, IoU \(limit)")
                // Per-class suppression passes a subset of the boxes (one class's candidates).
                let subset = order.filter { $0 % 3 != 1 }
                #expect(GreedySuppression.survivors(subset, boxes: boxes, limit: limit)
                        == Self.reference(subset, boxes: boxes, limit: limit), "trial \(trial), subset, IoU \(limit)")
            }
        }
    }

    /// A model that fires everywhere: one box per cell of a 300×300 grid, none overlapping another by more
    /// than the limit, all survive (the case that took the quadratic loop minutes at large input sizes).
    @Test func everyCellACandidate() {
        let side = 300
        let boxes = (0..<side * side).map { k in
            Rect(x: Double(k % side) / Double(side), y: Double(k / side) / Double(side),
                 width: 1.4 / Double(side), height: 1.4 / Double(side))
        }
        let survivors = GreedySuppression.survivors(Array(boxes.indices), boxes: boxes, limit: 0.45)
        // Neighbours overlap by 0.4/1.4 of a side: IoU 0.17 sideways, so every box survives.
        #expect(survivors.allSatisfy { $0 })
    }

    /// `NonMaximumSuppression.ranked`: the best `keeping` positive scores in order (ties by index), the
    /// other positive ones dropped; against a full sort, with many ties and zeros.
    @Test func rankedKeepsTheBestInOrder() {
        var random = SeededRandom(seed: 5)
        for trial in 0..<200 {
            let count = Int(random.next() % 300)
            let scores = (0..<count).map { _ in Float(random.next() % 6) / 5 }  // 0, 0.2, ..., 1: ties
            let keeping = [1, 2, 5, 50, 1000][trial % 5]
            let (order, dropped) = NonMaximumSuppression.ranked(count, keeping: keeping) { scores[$0] }
            let all = (0..<count).filter { scores[$0] > 0 }
                .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }
            #expect(order == Array(all.prefix(keeping)), "trial \(trial)")
            #expect(Set(dropped) == Set(all.dropFirst(keeping)) && dropped.count == max(0, all.count - keeping), "trial \(trial)")
        }
    }
}
