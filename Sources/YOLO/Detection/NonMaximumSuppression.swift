/// Non-maximum suppression over decoded candidates.
@_spi(Engine) public enum NonMaximumSuppression {
    /// Darknet's `do_nms_sort`, per class: for each class, visit candidates by that class's probability
    /// (descending, ties in candidate order) and zero the class probability of every later candidate whose
    /// IoU with a surviving one exceeds `threshold`. A box keeps its other classes.
    public static func perClass(_ candidates: inout Candidates, threshold: Float) {
        let classes = candidates.classes
        let limit = Double(threshold)
        let boxes = candidates.boxes
        let count = candidates.count
        candidates.probabilities.withUnsafeMutableBufferPointer { probabilities in
            for k in 0..<classes {
                let order = (0..<count)
                    .filter { probabilities[$0 * classes + k] > 0 }
                    .sorted { probabilities[$0 * classes + k] > probabilities[$1 * classes + k]
                              || (probabilities[$0 * classes + k] == probabilities[$1 * classes + k] && $0 < $1) }
                for (position, i) in order.enumerated() where probabilities[i * classes + k] > 0 {
                    for j in order[(position + 1)...] where probabilities[j * classes + k] > 0 {
                        if boxes[i].iou(boxes[j]) > limit { probabilities[j * classes + k] = 0 }
                    }
                }
            }
        }
    }

    /// Class-agnostic suppression: each candidate competes with its best class probability; a suppressed
    /// candidate loses all its classes.
    public static func classAgnostic(_ candidates: inout Candidates, threshold: Float) {
        let classes = candidates.classes
        let limit = Double(threshold)
        let best = (0..<candidates.count).map { i in
            (0..<classes).reduce(Float(0)) { max($0, candidates.probabilities[i * classes + $1]) }
        }
        let order = (0..<candidates.count).filter { best[$0] > 0 }
            .sorted { best[$0] > best[$1] || (best[$0] == best[$1] && $0 < $1) }
        var suppressed = [Bool](repeating: false, count: candidates.count)
        for (position, i) in order.enumerated() where !suppressed[i] {
            for j in order[(position + 1)...] where !suppressed[j] {
                if candidates.boxes[i].iou(candidates.boxes[j]) > limit { suppressed[j] = true }
            }
        }
        for i in 0..<candidates.count where suppressed[i] {
            for k in 0..<classes { candidates.probabilities[i * classes + k] = 0 }
        }
    }
}
