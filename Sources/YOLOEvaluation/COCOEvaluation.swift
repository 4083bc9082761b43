@_spi(Engine) import YOLO
/// The outcome of a COCO bbox evaluation: the 12 summary figures, per-category AP, and what was counted.
public struct COCOEvaluation: Sendable {
    /// How the results were used.
    public struct ResultCounts: Sendable, Equatable {
        /// Results that took part.
        public var evaluated = 0
        /// Results for an image id not in the annotation file (skipped; pycocotools would refuse the file).
        public var unknownImage = 0
        /// Results for a category id not in the annotation file (skipped, as pycocotools does).
        public var unknownCategory = 0
        /// Results for a known image left out by the `imageIDs` subset.
        public var outsideImageSubset = 0
    }

    /// AP of one category, over the whole image set (area all, 100 detections per image).
    public struct CategoryScore: Sendable, Equatable {
        /// COCO category id.
        public var categoryID: Int
        /// Category name from the annotation file.
        public var name: String
        /// Mean precision over IoU .50:.95 and the 101 recall thresholds; -1 when the category has no ground truth.
        public var ap: Double
        /// The same at IoU .50 only.
        public var ap50: Double
        /// Ground-truth objects of the category that are not crowds.
        public var groundTruthCount: Int
        /// Detections of the category that took part.
        public var detectionCount: Int
    }

    /// The 12 figures of `COCOeval.summarize`.
    public let summary: COCOSummary
    /// One entry per category of the annotation file, by ascending id.
    public let categories: [CategoryScore]
    /// Images evaluated.
    public let imageCount: Int
    /// Ground-truth objects in those images (crowd regions included).
    public let objectCount: Int
    /// How many results were used or skipped, and why.
    public let resultCounts: ResultCounts
    /// The accumulated tables (kept for tests and finer reports).
    let tables: COCOTables

    // MARK: Summarizing

    init(tables: COCOTables, parameters p: COCOEvaluationParameters,
         categories: [(id: Int, name: String, groundTruth: Int, detections: Int)], imageCount: Int, objectCount: Int, resultCounts: ResultCounts) {
        self.tables = tables
        self.imageCount = imageCount
        self.objectCount = objectCount
        self.resultCounts = resultCounts
        let all = p.areaRanges.firstIndex { $0.label == "all" }!
        let most = p.maxDetections.count - 1
        self.categories = categories.enumerated().map { k, category in
            CategoryScore(
                categoryID: category.id, name: category.name,
                ap: Self.meanOfValid(tables.precisionValues(t: nil, k: k, a: all, m: most)),
                ap50: Self.meanOfValid(tables.precisionValues(t: p.iouThresholds.firstIndex(of: 0.5), k: k, a: all, m: most)),
                groundTruthCount: category.groundTruth, detectionCount: category.detections)
        }
        func figure(precision: Bool, iou: Double? = nil, area: String = "all", maxDets: Int = 100) -> Double {
            guard let a = p.areaRanges.firstIndex(where: { $0.label == area }),
                  let m = p.maxDetections.firstIndex(of: maxDets) else { return -1 }
            var t: Int? = nil
            if let iou {
                guard let index = p.iouThresholds.firstIndex(of: iou) else { return -1 }
                t = index
            }
            return Self.meanOfValid(precision ? tables.precisionValues(t: t, k: nil, a: a, m: m)
                                              : tables.recallValues(t: t, a: a, m: m))
        }
        summary = COCOSummary(values: [
            figure(precision: true),
            figure(precision: true, iou: 0.5),
            figure(precision: true, iou: 0.75),
            figure(precision: true, area: "small"),
            figure(precision: true, area: "medium"),
            figure(precision: true, area: "large"),
            figure(precision: false, maxDets: 1),
            figure(precision: false, maxDets: 10),
            figure(precision: false),
            figure(precision: false, area: "small"),
            figure(precision: false, area: "medium"),
            figure(precision: false, area: "large"),
        ])
    }

    /// numpy's `mean(s[s > -1])`, or -1 when nothing is above -1.
    static func meanOfValid(_ values: [Double]) -> Double {
        let valid = values.filter { $0 > -1 }
        return valid.isEmpty ? -1 : NumPyMath.mean(valid)
    }
}

extension COCOTables {
    /// Precision entries for one area range and maxDets, in numpy's C order over (t, r, k):
    /// all thresholds when `t` is nil, all categories when `k` is nil.
    func precisionValues(t: Int?, k: Int?, a: Int, m: Int) -> [Double] {
        var values: [Double] = []
        for ti in t.map({ [$0] }) ?? Array(0..<thresholds) {
            for r in 0..<recalls {
                for ki in k.map({ [$0] }) ?? Array(0..<categories) {
                    values.append(precision[precisionIndex(t: ti, r: r, k: ki, a: a, m: m)])
                }
            }
        }
        return values
    }

    /// Recall entries over all categories for one area range and maxDets, in C order over (t, k).
    func recallValues(t: Int?, a: Int, m: Int) -> [Double] {
        var values: [Double] = []
        for ti in t.map({ [$0] }) ?? Array(0..<thresholds) {
            for k in 0..<categories { values.append(recall[recallIndex(t: ti, k: k, a: a, m: m)]) }
        }
        return values
    }
}
