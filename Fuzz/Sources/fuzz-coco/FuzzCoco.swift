// fuzz-coco: JSON bytes → COCOAnnotations (annotation file) and COCOResults.parse (results file); accepted
// results are then evaluated against a small fixed annotation set, and accepted annotations are evaluated
// against their own ground truth turned into results (both paths of COCOEvaluator run on hostile values).
//
// YOLOEvaluation entry points used (all public, so a plain import): COCOAnnotations.init(data:path:),
// COCOResults.parse(_:path:), COCOEvaluator.init(annotations:), COCOEvaluator.evaluate(_:imageIDs:),
// COCOResult.init(imageID:categoryID:bbox:score:), COCOAnnotations.annotations, COCOAnnotation.imageID /
// .categoryID / .bbox.
import Foundation
import FuzzSupport
import YOLO
import YOLOEvaluation

/// A small annotation set the fuzzed results are scored against (two images, two categories, a crowd box).
let fixedAnnotations: COCOAnnotations = {
    let json = """
    {"images": [{"id": 1, "file_name": "a.jpg", "width": 640, "height": 480},
                {"id": 2, "file_name": "b.jpg", "width": 100, "height": 100}],
     "categories": [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}],
     "annotations": [
       {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 20, 100, 200], "area": 20000, "iscrowd": 0},
       {"id": 2, "image_id": 1, "category_id": 3, "bbox": [300, 300, 50, 40], "area": 2000, "iscrowd": 0},
       {"id": 3, "image_id": 2, "category_id": 1, "bbox": [0, 0, 100, 100], "area": 10000, "iscrowd": 1},
       {"id": 4, "image_id": 2, "category_id": 3, "bbox": [5, 5, 10, 10], "area": 100, "iscrowd": 0}]}
    """
    do { return try COCOAnnotations(data: Data(json.utf8), path: "fixed.json") } catch {
        fatalError("fuzz-coco: the fixed annotations do not parse: \(error)")
    }
}()
let fixedEvaluator = COCOEvaluator(annotations: fixedAnnotations)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.data(data, size)
    if let results = try? COCOResults.parse(bytes, path: "fuzz.results.json") {
        _ = fixedEvaluator.evaluate(results)
        _ = fixedEvaluator.evaluate(results, imageIDs: [1])
    }
    if let annotations = try? COCOAnnotations(data: bytes, path: "fuzz.annotations.json"),
       annotations.annotations.count <= 2_000 {
        let asResults = annotations.annotations.enumerated().map { index, a in
            COCOResult(imageID: a.imageID, categoryID: a.categoryID, bbox: a.bbox, score: Double(index % 7) / 7)
        }
        _ = COCOEvaluator(annotations: annotations).evaluate(asResults)
    }
    return 0
}
