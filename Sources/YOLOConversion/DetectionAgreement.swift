import Foundation
@_spi(Engine) import YOLO

/// How well a candidate model's detections reproduce a reference model's (e.g. quantized vs float).
///
/// Detections are compared as (box, class) pairs, as darknet reports them: a box whose `labels` hold
/// several classes counts once per class, with that class's confidence. A reference pair is matched
/// by the unmatched candidate pair of the same class with the highest IoU, if that IoU reaches
/// `iouThreshold`; reference pairs are taken most confident first. Accumulates over any number of images.
@_spi(Engine) public struct DetectionAgreement: Sendable {
    public var iouThreshold: Double
    /// Reference (box, class) pairs seen.
    public private(set) var referenceCount = 0
    /// Candidate (box, class) pairs seen.
    public private(set) var candidateCount = 0
    /// Reference pairs matched.
    public private(set) var matched = 0
    /// Sum of the IoUs of matched pairs.
    public private(set) var iouSum = 0.0
    /// Smallest IoU of a matched pair.
    public private(set) var minimumIoU = 1.0
    /// Largest |Δ confidence| of a matched pair.
    public private(set) var maxConfidenceChange: Float = 0
    /// The reference detections left unmatched, each with its best same-class candidate (if any).
    public private(set) var misses: [Miss] = []

    /// A reference detection without a match.
    public struct Miss: Sendable, CustomStringConvertible {
        public var image: String
        public var reference: Detection
        /// The candidate of the same class with the highest IoU, and that IoU.
        public var nearest: (detection: Detection, iou: Double)?

        public var description: String {
            let found = nearest.map { String(format: "nearest candidate conf %.3f, IoU %.3f", $0.detection.confidence, $0.iou) }
                ?? "no candidate of that class"
            return String(format: "%@: %@ conf %.3f: %@", image, reference.label, reference.confidence, found)
        }
    }

    public init(iouThreshold: Double) {
        self.iouThreshold = iouThreshold
    }

    /// Fraction of reference detections matched (1 when there are none).
    public var matchRate: Double { referenceCount == 0 ? 1 : Double(matched) / Double(referenceCount) }
    /// Mean IoU of the matched pairs (0 when none).
    public var meanIoU: Double { matched == 0 ? 0 : iouSum / Double(matched) }
    /// Candidate detections left unmatched.
    public var unmatchedCandidates: Int { candidateCount - matched }

    /// Adds one image's detections; `image` names it in `misses`.
    public mutating func add(reference: [Detection], candidate: [Detection], image: String = "") {
        let reference = Self.pairs(reference), candidate = Self.pairs(candidate)
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
            guard best >= 0, bestIoU >= iouThreshold else {
                misses.append(Miss(image: image, reference: reference[r], nearest: best >= 0 ? (candidate[best], bestIoU) : nil))
                continue
            }
            used[best] = true
            matched += 1
            iouSum += bestIoU
            minimumIoU = min(minimumIoU, bestIoU)
            maxConfidenceChange = max(maxConfidenceChange, abs(candidate[best].confidence - reference[r].confidence))
        }
    }

    /// One detection per (box, class) pair: each entry of `labels` (or the best class when empty).
    static func pairs(_ detections: [Detection]) -> [Detection] {
        detections.flatMap { d -> [Detection] in
            guard !d.labels.isEmpty else { return [d] }
            return d.labels.map { score in
                var single = d
                single.classIndex = score.classIndex
                single.label = score.label
                single.confidence = score.confidence
                single.labels = [score]
                return single
            }
        }
    }

    /// `142/145 matched (97.9%) at IoU ≥ 0.90, mean IoU 0.987, max |Δconf| 0.031, 2 extra`.
    public var summary: String {
        String(format: "%d/%d matched (%.1f%%) at IoU >= %.2f, mean IoU %.4f, min IoU %.3f, max |dconf| %.4f, %d unmatched candidate detections",
               matched, referenceCount, 100 * matchRate, iouThreshold, meanIoU, matched == 0 ? 0 : minimumIoU,
               maxConfidenceChange, unmatchedCandidates)
    }
}

/// How far two networks' raw head outputs lie apart on the same input, per head.
@_spi(Engine) public enum HeadAgreement {
    /// One head's differences: largest |a − b| and root mean square of a − b.
    public struct Difference: Sendable {
        public var max: Float
        public var rms: Double
    }

    /// Runs both networks (same input shape) on `input` and compares each head.
    ///
    /// - Throws: `YOLOError.invalidArgument` when the input does not fit the networks or their heads differ.
    public static func differences(_ a: Network, _ b: Network, input: Tensor) throws -> [Difference] {
        let headsA = try a.forward(input), headsB = try b.forward(input)
        guard headsA.count == headsB.count, zip(headsA, headsB).allSatisfy({ $0.shape == $1.shape }) else {
            throw YOLOError.invalidArgument("the two networks have different heads")
        }
        return zip(headsA, headsB).map { x, y in
            let squared = zip(x.values, y.values).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
            return Difference(max: x.maxAbsDifference(y), rms: (squared / Double(max(x.values.count, 1))).squareRoot())
        }
    }
}
