/// Non-maximum suppression over decoded candidates.
@_spi(Engine) public enum NonMaximumSuppression {
    /// Darknet's `do_nms_sort`, per class: for each class, visit candidates by that class's probability
    /// (descending, ties in candidate order) and zero the class probability of every later candidate whose
    /// IoU with a surviving one exceeds `threshold`. A box keeps its other classes. Only pairs that can
    /// overlap are compared (`GreedySuppression`), so a model that fires everywhere is not quadratic.
    /// At most `maximumCandidates` candidates per class (the most probable) enter suppression; the class
    /// probability of the rest is zeroed (`DetectionOptions.maximumCandidates`).
    /// `kind` is the model's (`ModelDescription.suppression`): IoU or darknet's DIoU (`diounms_sort`).
    public static func perClass(_ candidates: inout Candidates, threshold: Float, maximumCandidates: Int = .max,
                                kind: Suppression = .greedy) {
        let classes = candidates.classes
        let limit = Double(threshold)
        let boxes = candidates.boxes
        let count = candidates.count
        candidates.probabilities.withUnsafeMutableBufferPointer { probabilities in
            for k in 0..<classes {
                let (order, dropped) = ranked(count, keeping: maximumCandidates) { probabilities[$0 * classes + k] }
                for i in dropped { probabilities[i * classes + k] = 0 }
                let survivors = GreedySuppression.survivors(order, boxes: boxes, limit: limit, kind: kind)
                for (i, survives) in zip(order, survivors) where !survives { probabilities[i * classes + k] = 0 }
            }
        }
    }

    /// Class-agnostic suppression: each candidate competes with its best class probability; a suppressed
    /// candidate loses all its classes, as does one beyond the `maximumCandidates` most probable.
    public static func classAgnostic(_ candidates: inout Candidates, threshold: Float, maximumCandidates: Int = .max,
                                     kind: Suppression = .greedy) {
        let classes = candidates.classes
        let limit = Double(threshold)
        let best = (0..<candidates.count).map { i in
            (0..<classes).reduce(Float(0)) { max($0, candidates.probabilities[i * classes + $1]) }
        }
        let (order, dropped) = ranked(candidates.count, keeping: maximumCandidates) { best[$0] }
        let survivors = GreedySuppression.survivors(order, boxes: candidates.boxes, limit: limit, kind: kind)
        for i in dropped + zip(order, survivors).filter({ !$0.1 }).map(\.0) {
            for k in 0..<classes { candidates.probabilities[i * classes + k] = 0 }
        }
    }

    /// The indices in `0..<count` with a positive score, best first (ties in index order), at most
    /// `keeping` of them; and the positive ones beyond that. Only the kept ones are sorted.
    static func ranked(_ count: Int, keeping: Int, score: (Int) -> Float) -> (order: [Int], dropped: [Int]) {
        var items: [(score: Float, index: Int)] = []
        for i in 0..<count {
            let value = score(i)
            if value > 0 { items.append((value, i)) }
        }
        func better(_ a: (score: Float, index: Int), _ b: (score: Float, index: Int)) -> Bool {
            a.score > b.score || (a.score == b.score && a.index < b.index)
        }
        var dropped: [Int] = []
        if items.count > keeping {
            // Quickselect: afterwards items[..<keeping] are the best `keeping`, in some order.
            var (low, high) = (0, items.count - 1)
            var random = SystemRandomNumberGenerator()
            while low < high {
                items.swapAt(Int.random(in: low...high, using: &random), high)
                let pivot = items[high]
                var store = low
                for i in low..<high where better(items[i], pivot) {
                    items.swapAt(i, store)
                    store += 1
                }
                items.swapAt(store, high)
                if store == keeping { break }
                if store < keeping { low = store + 1 } else { high = store - 1 }
            }
            dropped = items[keeping...].map(\.index)
            items.removeSubrange(keeping...)
        }
        items.sort(by: better)
        return (items.map(\.index), dropped)
    }
}
