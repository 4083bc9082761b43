@_spi(Engine) import YOLO
/// Scores a tracker's MOTChallenge results against MOTChallenge ground truth, as py-motmetrics 1.4.0's
/// MOTChallenge evaluation does (`loadtxt(fmt='mot15-2D')`, `compare_to_groundtruth(gt, results, 'iou',
/// distth=0.5)`, then its metrics).
///
/// - Ground-truth rows with confidence below 1 (MOTChallenge's "ignore" rows) are left out, and so are
///   result rows with confidence below -1 (py-motmetrics' default cut for results).
/// - Every frame that either file names counts, even one whose rows were all left out: a frame without
///   ground truth makes its hypotheses false positives, one without results makes its objects misses.
///   (py-motmetrics has this from the frame level of pandas' row index, which keeps the frames of
///   filtered rows; when no ground-truth row at all is kept, it counts only the results' frames.)
/// - Within a frame, objects and hypotheses keep the files' order (it decides ties, as in py-motmetrics).
/// - Boxes are compared by IoU on 0-based coordinates (the files' 1-based x and y less 1, as py-motmetrics
///   reads them; the IoU is the same up to rounding).
public enum MOTEvaluation {
    /// Ground-truth rows with a lower confidence are ignored.
    public static let groundTruthMinimumConfidence = 1.0
    /// Result rows with a lower confidence are ignored.
    public static let resultsMinimumConfidence = -1.0

    /// The figures of `results` against `groundTruth`; a pair can match when its IoU is at least
    /// `iouThreshold`.
    public static func evaluate(groundTruth: [MOTChallengeRecord], results: [MOTChallengeRecord],
                                iouThreshold: Double = 0.5) -> MOTSummary {
        accumulate(groundTruth: groundTruth, results: results, iouThreshold: iouThreshold).summary
    }

    /// The accumulator after every frame, with its events, for a closer look than the summary.
    public static func accumulate(groundTruth: [MOTChallengeRecord], results: [MOTChallengeRecord],
                                  iouThreshold: Double = 0.5) -> MOTAccumulator {
        let frames = Set(groundTruth.map(\.frame)).union(results.map(\.frame)).sorted()
        let objects = byFrame(groundTruth.filter { $0.confidence >= groundTruthMinimumConfidence })
        let hypotheses = byFrame(results.filter { $0.confidence >= resultsMinimumConfidence })
        var accumulator = MOTAccumulator(iouThreshold: iouThreshold)
        for frame in frames {
            accumulator.update(frame: frame, objects: objects[frame] ?? [], hypotheses: hypotheses[frame] ?? [])
        }
        return accumulator
    }

    /// The records' ids and 0-based boxes per frame, in file order.
    private static func byFrame(_ records: [MOTChallengeRecord]) -> [Int: [(id: Int, box: Rect)]] {
        var frames: [Int: [(id: Int, box: Rect)]] = [:]
        for record in records {
            let box = Rect(x: record.x - 1, y: record.y - 1, width: record.width, height: record.height)
            frames[record.frame, default: []].append((id: record.id, box: box))
        }
        return frames
    }
}
