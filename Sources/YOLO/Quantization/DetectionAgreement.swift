import Foundation

/// How well a candidate model's detections reproduce a reference model's (e.g. quantized vs float).
///
/// A reference detection is matched by the unmatched candidate detection of the same class with the
/// highest IoU, if that IoU reaches `iouThreshold`; reference detections are taken most confident
/// first. Accumulates over any number of images.
public struct DetectionAgreement: Sendable {
    public var iouThreshold: Double
    /// Reference detections seen.
    public private(set) var referenceCount = 0
    /// Candidate detections seen.
    public private(set) var candidateCount = 0
    /// Reference detections matched.
    public private(set) var matched = 0
    /// Sum of the IoUs of matched pairs.
    public private(set) var iouSum = 0.0
    /// Smallest IoU of a matched pair.
    public private(set) var minimumIoU = 1.0
    /// Largest |Δ confidence| of a matched pair.
    public private(set) var maxConfidenceChange: Float = 0

    public init(iouThreshold: Double) {
        self.iouThreshold = iouThreshold
    }

    /// Fraction of reference detections matched (1 when there are none).
    public var matchRate: Double { referenceCount == 0 ? 1 : Double(matched) / Double(referenceCount) }
    /// Mean IoU of the matched pairs (0 when none).
    public var meanIoU: Double { matched == 0 ? 0 : iouSum / Double(matched) }
    /// Candidate detections left unmatched.
    public var unmatchedCandidates: Int { candidateCount - matched }

    /// Adds one image's detections.
    public mutating func add(reference: [Detection], candidate: [Detection]) {
        referenceCount += reference.count
        candidateCount += candidate.count
        var used = [Bool](repeating: false, count: candidate.count)
        let order = reference.indices.sorted { reference[$0].confidence > reference[$1].confidence || (reference[$0].confidence == reference[$1].confidence && $0 < $1) }
        for r in order {
            var best = -1
            var bestIoU = 0.0
            for c in candidate.indices where !used[c] && candidate[c].classIndex == reference[r].classIndex {
                let iou = reference[r].box.iou(candidate[c].box)
                if iou > bestIoU { best = c; bestIoU = iou }
            }
            guard best >= 0, bestIoU >= iouThreshold else { continue }
            used[best] = true
            matched += 1
            iouSum += bestIoU
            minimumIoU = min(minimumIoU, bestIoU)
            maxConfidenceChange = max(maxConfidenceChange, abs(candidate[best].confidence - reference[r].confidence))
        }
    }

    /// `142/145 matched (97.9%) at IoU ≥ 0.90, mean IoU 0.987, max |Δconf| 0.031, 2 extra`.
    public var summary: String {
        String(format: "%d/%d matched (%.1f%%) at IoU >= %.2f, mean IoU %.4f, min IoU %.3f, max |dconf| %.4f, %d unmatched candidate detections",
               matched, referenceCount, 100 * matchRate, iouThreshold, meanIoU, matched == 0 ? 0 : minimumIoU,
               maxConfidenceChange, unmatchedCandidates)
    }
}

/// The largest |Δ| between two networks' raw head outputs on the same input, per head.
public enum HeadAgreement {
    /// Runs both networks (same input shape) on `input` and returns `max |a − b|` for each head.
    ///
    /// - Throws: `YOLOError.invalidArgument` when the input does not fit the networks or their heads differ.
    public static func maxDifferences(_ a: Network, _ b: Network, input: Tensor) throws -> [Float] {
        let headsA = try a.forward(input), headsB = try b.forward(input)
        guard headsA.count == headsB.count, zip(headsA, headsB).allSatisfy({ $0.shape == $1.shape }) else {
            throw YOLOError.invalidArgument("the two networks have different heads")
        }
        return zip(headsA, headsB).map { $0.maxAbsDifference($1) }
    }
}
