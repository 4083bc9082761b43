@_spi(Engine) import YOLO
/// COCO bbox evaluation (mAP), computed as pycocotools' `COCOeval` does, step for step.
///
/// `evaluate` follows `COCOeval.evaluate` / `accumulate` / `summarize`:
/// - results for an image that is not in the annotations are skipped and counted (pycocotools refuses the
///   whole file); results for a category that is not in the annotations are skipped and counted
///   (pycocotools ignores them silently);
/// - per image and category, detections are sorted by score, highest first, keeping file order among equal
///   scores (numpy's stable mergesort), and cut to 100; ground truths keep file order;
/// - a ground truth is ignored when it is a crowd or its `area` field is outside the area range;
/// - for each IoU threshold each detection, in score order, takes the unmatched ground truth with the
///   highest IoU at or above the threshold (a later one wins a tie), preferring non-ignored ones; crowds can
///   be matched any number of times; a detection matched to an ignored ground truth is ignored, and so is
///   an unmatched detection whose `w * h` lies outside the area range;
/// - see `accumulate` (COCOEvaluator+Accumulate.swift) and `COCOSummary` for the rest.
///
/// One pycocotools quirk is kept on purpose: a match is recorded as the ground truth's id, so a match with
/// an annotation whose id is 0 counts as no match.
public struct COCOEvaluator: Sendable {
    /// The ground truth.
    public let annotations: COCOAnnotations
    /// Thresholds and ranges (the COCO standard ones).
    public let parameters = COCOEvaluationParameters()

    /// Makes an evaluator for the ground truth `annotations`.
    public init(annotations: COCOAnnotations) {
        self.annotations = annotations
    }

    // MARK: Evaluation

    /// Scores `results` against the annotations.
    /// - Parameter results: detections in COCO form (any order; several per image and category).
    /// - Parameter imageIDs: evaluate only these images (e.g. the ones a run covered before it was stopped);
    ///   `nil` means every image of the annotation file. Results and ground truth of other images are left out.
    /// - Complexity: O(D·G) per image and category for the IoU table, O(N log N) per category to rank.
    public func evaluate(_ results: [COCOResult], imageIDs: Set<Int>? = nil) -> COCOEvaluation {
        let images = Array(Set(annotations.images.map(\.id).filter { imageIDs?.contains($0) ?? true })).sorted()
        let categories = Array(Set(annotations.categories.map(\.id))).sorted()
        let imageIndex = Dictionary(uniqueKeysWithValues: images.enumerated().map { ($1, $0) })
        let categoryIndex = Dictionary(uniqueKeysWithValues: categories.enumerated().map { ($1, $0) })
        let knownImages = Set(annotations.images.map(\.id))
        let categoryCount = categories.count
        func key(_ image: Int, _ category: Int) -> Int { image * categoryCount + category }

        var groundTruth: [Int: [COCOAnnotation]] = [:]
        for annotation in annotations.annotations {
            guard let i = imageIndex[annotation.imageID], let k = categoryIndex[annotation.categoryID] else { continue }
            groundTruth[key(i, k), default: []].append(annotation)
        }
        var detections: [Int: [COCOResult]] = [:]
        var counts = COCOEvaluation.ResultCounts()
        for result in results {
            guard knownImages.contains(result.imageID) else { counts.unknownImage += 1; continue }
            guard let k = categoryIndex[result.categoryID] else { counts.unknownCategory += 1; continue }
            guard let i = imageIndex[result.imageID] else { counts.outsideImageSubset += 1; continue }
            detections[key(i, k), default: []].append(result)
            counts.evaluated += 1
        }

        // Per category and area range, the evaluations of the images that have ground truth or detections
        // of that category, in ascending image id order (sorted keys run image-major).
        var evaluations = [[[ImageEvaluation]]](
            repeating: [[ImageEvaluation]](repeating: [], count: parameters.areaRanges.count), count: categoryCount)
        for cell in Set(groundTruth.keys).union(detections.keys).sorted() {
            let k = cell % categoryCount
            let ranked = rank(detections[cell] ?? [])
            let truths = groundTruth[cell] ?? []
            let overlaps = overlapTable(ranked, truths)
            for (a, range) in parameters.areaRanges.enumerated() {
                evaluations[k][a].append(evaluateImage(ranked, truths, overlaps, range))
            }
        }
        let tables = accumulate(evaluations, categoryCount: categoryCount)
        let groundTruthCounts = Dictionary(grouping: annotations.annotations.filter { !$0.isCrowd && imageIndex[$0.imageID] != nil },
                                           by: \.categoryID).mapValues(\.count)
        let detectionCounts = Dictionary(grouping: detections.values.joined(), by: \.categoryID).mapValues(\.count)
        return COCOEvaluation(tables: tables, parameters: parameters, categories: categories.map { id in
            (id: id, name: annotations.category(id: id)?.name ?? "\(id)",
             groundTruth: groundTruthCounts[id] ?? 0, detections: detectionCounts[id] ?? 0)
        }, imageCount: images.count, objectCount: groundTruth.values.reduce(0) { $0 + $1.count }, resultCounts: counts)
    }

    // MARK: One image and category

    /// What `accumulate` needs of one image, category and area range.
    struct ImageEvaluation {
        /// Scores of the kept detections, highest first (at most the largest maxDets).
        var scores: [Double]
        /// `[threshold * D + detection]`: matched to a ground truth (whose id is not 0).
        var matched: [Bool]
        /// `[threshold * D + detection]`: left out of precision and recall.
        var ignored: [Bool]
        /// Ground truths that count (not crowd, area in range).
        var countedGroundTruth: Int
    }

    /// Detections by descending score, equal scores in their given order, cut to the largest maxDets.
    private func rank(_ detections: [COCOResult]) -> [COCOResult] {
        let order = detections.indices.sorted { a, b in
            detections[a].score > detections[b].score || (detections[a].score == detections[b].score && a < b)
        }
        return order.prefix(parameters.maxDetections.last!).map { detections[$0] }
    }

    /// `[detection * G + groundTruth]` overlaps (IoU, or intersection over detection area for crowds).
    private func overlapTable(_ detections: [COCOResult], _ truths: [COCOAnnotation]) -> [Double] {
        var table = [Double](repeating: 0, count: detections.count * truths.count)
        for (d, detection) in detections.enumerated() {
            for (g, truth) in truths.enumerated() {
                table[d * truths.count + g] = COCOBox.overlap(detection: detection.bbox, groundTruth: truth.bbox, crowd: truth.isCrowd)
            }
        }
        return table
    }

    /// Greedy matching of ranked detections to ground truths at every IoU threshold, for one area range.
    private func evaluateImage(_ detections: [COCOResult], _ truths: [COCOAnnotation], _ overlaps: [Double],
                               _ range: COCOEvaluationParameters.AreaRange) -> ImageEvaluation {
        let thresholds = parameters.iouThresholds
        let detectionCount = detections.count, truthCount = truths.count
        let ignore = truths.map { $0.isCrowd || !range.contains($0.area) }
        // Ground truths that count first, each group in file order (a stable sort on the ignore flag).
        let order = truths.indices.filter { !ignore[$0] } + truths.indices.filter { ignore[$0] }
        var matched = [Bool](repeating: false, count: thresholds.count * detectionCount)
        var ignored = [Bool](repeating: false, count: thresholds.count * detectionCount)
        for (t, threshold) in thresholds.enumerated() {
            var taken = [Bool](repeating: false, count: truthCount)
            for d in 0..<detectionCount {
                var best = min(threshold, 1 - 1e-10)
                var match = -1
                for g in order {
                    if taken[g] && !truths[g].isCrowd { continue }
                    if match > -1 && !ignore[match] && ignore[g] { break }
                    let overlap = overlaps[d * truthCount + g]
                    if overlap < best { continue }
                    best = overlap
                    match = g
                }
                guard match > -1 else { continue }
                ignored[t * detectionCount + d] = ignore[match]
                matched[t * detectionCount + d] = truths[match].id != 0
                taken[match] = true
            }
            for d in 0..<detectionCount where !matched[t * detectionCount + d] && !range.contains(detections[d].bbox.area) {
                ignored[t * detectionCount + d] = true
            }
        }
        return ImageEvaluation(scores: detections.map(\.score), matched: matched, ignored: ignored,
                               countedGroundTruth: ignore.filter { !$0 }.count)
    }
}
