/// Non-maximum suppression over decoded candidates.
@_spi(Engine) public enum NonMaximumSuppression {
    /// Darknet's `do_nms_sort`, per class: for each class, visit candidates by that class's probability
    /// (descending, ties in candidate order) and zero the class probability of every later candidate whose
    /// IoU with a surviving one exceeds `threshold`. A box keeps its other classes. Only pairs that can
    /// overlap are compared (`GreedySuppression`), so a model that fires everywhere is not quadratic.
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
                let survivors = GreedySuppression.survivors(order, boxes: boxes, limit: limit)
                for (i, survives) in zip(order, survivors) where !survives { probabilities[i * classes + k] = 0 }
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
        let survivors = GreedySuppression.survivors(order, boxes: candidates.boxes, limit: limit)
        for (i, survives) in zip(order, survivors) where !survives {
            for k in 0..<classes { candidates.probabilities[i * classes + k] = 0 }
        }
    }
}
