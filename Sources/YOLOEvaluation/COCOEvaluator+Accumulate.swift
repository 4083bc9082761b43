@_spi(Engine) import YOLO
/// Precision and recall tables over thresholds, categories, area ranges and maxDets (pycocotools' `accumulate`).
struct COCOTables: Sendable {
    /// Number of IoU thresholds (T), recall thresholds (R), categories (K), area ranges (A), maxDets (M).
    let thresholds: Int, recalls: Int, categories: Int, areas: Int, maxDets: Int
    /// `[t][r][k][a][m]` row-major; precision at each recall threshold, -1 where a category has no ground truth.
    var precision: [Double]
    /// `[t][k][a][m]` row-major; the recall reached, -1 where a category has no ground truth.
    var recall: [Double]

    init(thresholds: Int, recalls: Int, categories: Int, areas: Int, maxDets: Int) {
        (self.thresholds, self.recalls, self.categories, self.areas, self.maxDets) = (thresholds, recalls, categories, areas, maxDets)
        precision = [Double](repeating: -1, count: thresholds * recalls * categories * areas * maxDets)
        recall = [Double](repeating: -1, count: thresholds * categories * areas * maxDets)
    }

    /// Flat index into `precision`.
    func precisionIndex(t: Int, r: Int, k: Int, a: Int, m: Int) -> Int {
        (((t * recalls + r) * categories + k) * areas + a) * maxDets + m
    }

    /// Flat index into `recall`.
    func recallIndex(t: Int, k: Int, a: Int, m: Int) -> Int {
        ((t * categories + k) * areas + a) * maxDets + m
    }
}

extension COCOEvaluator {
    // MARK: Accumulate

    /// For each category, area range and maxDets: rank the detections of all images together (stable, by
    /// descending score, images in ascending id order), count true and false positives cumulatively
    /// (ignored detections count as neither), make precision non-increasing from the right, and sample it at
    /// the first rank whose recall reaches each recall threshold (0 when recall never gets there).
    /// - Parameter evaluations: `[category][area]` image evaluations in ascending image id order.
    func accumulate(_ evaluations: [[[ImageEvaluation]]], categoryCount: Int) -> COCOTables {
        let p = parameters
        let thresholdCount = p.iouThresholds.count
        var tables = COCOTables(thresholds: thresholdCount, recalls: p.recallThresholds.count, categories: categoryCount,
                                areas: p.areaRanges.count, maxDets: p.maxDetections.count)
        for k in 0..<categoryCount {
            for a in 0..<p.areaRanges.count {
                let images = evaluations[k][a]
                if images.isEmpty { continue }
                let counted = images.reduce(0) { $0 + $1.countedGroundTruth }
                if counted == 0 { continue }
                for (m, maxDet) in p.maxDetections.enumerated() {
                    // Gather the first maxDet detections of every image, then rank them together.
                    var scores: [Double] = []
                    var matched = [[Bool]](repeating: [], count: thresholdCount)
                    var ignored = [[Bool]](repeating: [], count: thresholdCount)
                    for image in images {
                        let kept = min(maxDet, image.scores.count), all = image.scores.count
                        scores += image.scores[..<kept]
                        for t in 0..<thresholdCount {
                            matched[t] += image.matched[(t * all)..<(t * all + kept)]
                            ignored[t] += image.ignored[(t * all)..<(t * all + kept)]
                        }
                    }
                    let order = scores.indices.sorted { i, j in scores[i] > scores[j] || (scores[i] == scores[j] && i < j) }
                    for t in 0..<thresholdCount {
                        let (recall, precision) = curve(order: order, matched: matched[t], ignored: ignored[t], counted: counted)
                        tables.recall[tables.recallIndex(t: t, k: k, a: a, m: m)] = recall.last ?? 0
                        for (r, threshold) in p.recallThresholds.enumerated() {
                            let rank = NumPyMath.searchSortedLeft(recall, threshold)
                            tables.precision[tables.precisionIndex(t: t, r: r, k: k, a: a, m: m)] =
                                rank < precision.count ? precision[rank] : 0
                        }
                    }
                }
            }
        }
        return tables
    }

    /// Recall and (right-to-left maximum) precision after each ranked detection, as pycocotools computes
    /// them: `tp / counted` and `tp / (fp + tp + ε)` with ε = 2⁻⁵² (numpy's `spacing(1)`).
    private func curve(order: [Int], matched: [Bool], ignored: [Bool], counted: Int) -> (recall: [Double], precision: [Double]) {
        var truePositives = 0.0, falsePositives = 0.0
        var recall = [Double](), precision = [Double]()
        recall.reserveCapacity(order.count)
        precision.reserveCapacity(order.count)
        for index in order {
            if !ignored[index] {
                if matched[index] { truePositives += 1 } else { falsePositives += 1 }
            }
            recall.append(truePositives / Double(counted))
            precision.append(truePositives / (falsePositives + truePositives + 0x1p-52))
        }
        var i = precision.count - 1
        while i > 0 {
            if precision[i] > precision[i - 1] { precision[i - 1] = precision[i] }
            i -= 1
        }
        return (recall, precision)
    }
}
