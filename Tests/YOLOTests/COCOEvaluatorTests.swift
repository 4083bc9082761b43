import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation
import YOLOTestSupport

/// COCOEvaluator against pycocotools 2.0.11 (fixtures from scripts/make-eval-fixtures.py).
///
/// Tolerance 1e-12: the evaluator repeats pycocotools' arithmetic in the same order (IoU, cumulative counts,
/// numpy's pairwise mean); when written, every figure here was bit-identical (checked with tolerance 0).
/// 1e-12 leaves room for an ulp-level difference in a summation order on another platform without hiding any
/// real difference (one changed match moves a figure by far more than 1e-6 on these small sets).
@Suite struct COCOEvaluatorTests {
    static let tolerance = 1e-12

    @Test(arguments: EvalFixtures.cases)
    func matchesPycocotools(_ name: String) throws {
        let annotations = try COCOAnnotations(contentsOf: EvalFixtures.folder + "/\(name).annotations.json")
        let results = try COCOResults.load(EvalFixtures.folder + "/\(name).results.json")
        let expected = try EvalFixtures.expected("\(name).expected.json")
        let evaluation = COCOEvaluator(annotations: annotations).evaluate(results)
        #expect(evaluation.resultCounts.evaluated == results.count)
        for (index, (ours, theirs)) in zip(evaluation.summary.values, expected.stats).enumerated() {
            #expect(abs(ours - theirs) <= Self.tolerance, "\(name) stats[\(index)]: \(ours) vs pycocotools \(theirs)")
        }
        for category in evaluation.categories {
            let reference = try #require(expected.perClass?[String(category.categoryID)])
            #expect(abs(category.ap - reference.ap) <= Self.tolerance, "\(name) category \(category.categoryID) AP")
            #expect(abs(category.ap50 - reference.ap50) <= Self.tolerance, "\(name) category \(category.categoryID) AP50")
        }
        if let summary = expected.summary {
            #expect(evaluation.summary.text() + "\n" == summary)
        }
    }

    @Test func resultsForUnknownImagesAndCategoriesAreSkippedAndCounted() throws {
        let annotations = try COCOAnnotations(contentsOf: EvalFixtures.folder + "/duplicates.annotations.json")
        let results = try COCOResults.load(EvalFixtures.folder + "/duplicates.results.json")
        let stray = [COCOResult(imageID: 999, categoryID: 3, bbox: COCOBox(x: 0, y: 0, width: 10, height: 10), score: 1),
                     COCOResult(imageID: 1, categoryID: 77, bbox: COCOBox(x: 0, y: 0, width: 10, height: 10), score: 1)]
        let evaluator = COCOEvaluator(annotations: annotations)
        let clean = evaluator.evaluate(results)
        let noisy = evaluator.evaluate(stray + results)
        #expect(noisy.summary == clean.summary)
        #expect(noisy.resultCounts.unknownImage == 1)
        #expect(noisy.resultCounts.unknownCategory == 1)
        #expect(noisy.resultCounts.evaluated == results.count)
    }

    @Test func noResultsScoreZeroWhereThereIsGroundTruth() throws {
        let annotations = try COCOAnnotations(contentsOf: EvalFixtures.folder + "/empty-images.annotations.json")
        let evaluation = COCOEvaluator(annotations: annotations).evaluate([])
        // All ground truth is large: small and medium have nothing to measure (-1), the rest is 0.
        #expect(evaluation.summary.values == [0, 0, 0, -1, -1, 0, 0, 0, 0, -1, -1, 0])
    }

    @Test func imageSubsetLeavesOtherImagesOut() throws {
        let name = "random-a"
        let annotations = try COCOAnnotations(contentsOf: EvalFixtures.folder + "/\(name).annotations.json")
        let results = try COCOResults.load(EvalFixtures.folder + "/\(name).results.json")
        let firstHalf = Set(annotations.images.prefix(6).map(\.id))
        // Scoring a subset equals scoring an annotation file that only has those images.
        let trimmed = COCOAnnotations(images: annotations.images.filter { firstHalf.contains($0.id) },
                                      annotations: annotations.annotations.filter { firstHalf.contains($0.imageID) },
                                      categories: annotations.categories)
        let subset = COCOEvaluator(annotations: annotations).evaluate(results, imageIDs: firstHalf)
        let direct = COCOEvaluator(annotations: trimmed).evaluate(results.filter { firstHalf.contains($0.imageID) })
        #expect(subset.summary == direct.summary)
        #expect(subset.imageCount == 6)
        #expect(subset.resultCounts.outsideImageSubset == results.filter { !firstHalf.contains($0.imageID) }.count)
    }

    @Test(.enabled(if: EvalFixtures.hasShared, "\(Skip.noShared)"), arguments: ["letterbox_dn", "stretch"])
    func referenceResultsOnCocoVal2017Dev(_ mode: String) throws {
        let annotations = try COCOAnnotations(contentsOf: EvalFixtures.sharedSet + "/annotations.json")
        let results = try COCOResults.load(EvalFixtures.sharedMap + "/\(mode).results.json")
        let expected = try EvalFixtures.expected("coco-val2017-dev-map.\(mode).metrics.json")
        let evaluation = COCOEvaluator(annotations: annotations).evaluate(results)
        #expect(evaluation.resultCounts.evaluated == results.count)
        for (index, (ours, theirs)) in zip(evaluation.summary.values, expected.stats).enumerated() {
            #expect(abs(ours - theirs) <= Self.tolerance, "\(mode) stats[\(index)]: \(ours) vs pycocotools \(theirs)")
        }
    }
}
