import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation
import YOLOTestSupport

@Suite struct COCOResultsTests {
    @Test func writesAndReadsBackTheSameValues() throws {
        let results = [
            COCOResult(imageID: 87038, categoryID: 1, bbox: COCOBox(x: 25.1116, y: 120.5283, width: 614.8884, height: 167.6908), score: 0.007898),
            COCOResult(imageID: 2, categoryID: 90, bbox: COCOBox(x: 0, y: 0, width: 640, height: 1.0 / 3.0), score: 0.1 + 0.2),
        ]
        let path = EvalFixtures.temporaryFolder() + "/results.json"
        try COCOResults.write(results, to: path)
        #expect(try COCOResults.load(path) == results)
        // Plain JSON an independent parser accepts, with the COCO key names.
        let objects = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]]
        #expect(objects?.count == 2)
        #expect(objects?.first.map { Set($0.keys) } == ["image_id", "category_id", "bbox", "score"])
    }

    @Test func emptyResultsAreAnEmptyArray() throws {
        #expect(String(decoding: COCOResults.encode([]), as: UTF8.self) == "[\n]\n")
        #expect(try COCOResults.parse(COCOResults.encode([]), path: "r.json").isEmpty)
    }

    @Test func readsTheFixtureResults() throws {
        let results = try COCOResults.load(EvalFixtures.folder + "/crowd.results.json")
        #expect(results.count == 8)
        #expect(results[0] == COCOResult(imageID: 1, categoryID: 1, bbox: COCOBox(x: 10, y: 10, width: 80, height: 150), score: 0.9))
    }

    @Test(arguments: [
        (#"[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]"#,
         YOLOError.invalidJSON(path: "r.json", location: "[0]", message: "missing key 'score'")),
        (#"[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1], "score": 0.5}]"#,
         YOLOError.invalidJSON(path: "r.json", location: "[0].bbox", message: "expected [x, y, width, height], found 3 numbers")),
        (#"[{"image_id": 1, "category_id": "dog", "bbox": [0, 0, 1, 1], "score": 0.5}]"#,
         YOLOError.invalidJSON(path: "r.json", location: "[0].category_id", message: "expected an integer")),
        (#"{"image_id": 1}"#,
         YOLOError.invalidJSON(path: "r.json", location: "", message: "expected an array")),
    ])
    func reportsWhatIsWrongAndWhere(_ json: String, _ expected: YOLOError) {
        #expect(throws: expected) { try COCOResults.parse(Data(json.utf8), path: "r.json") }
    }

    @Test func cornersAreClampedToTheImageLikeDarknetValid() {
        let result = COCOResult(imageID: 1, categoryID: 1, score: 0.5, left: -10, top: 20, right: 700, bottom: 500,
                                imageWidth: 640, imageHeight: 480)
        #expect(result.bbox == COCOBox(x: 0, y: 20, width: 640, height: 460))
        let outside = COCOResult(imageID: 1, categoryID: 1, score: 0.5, left: 650, top: 0, right: 700, bottom: 10,
                                 imageWidth: 640, imageHeight: 480)
        #expect(outside.bbox.width == 0)
    }
}
