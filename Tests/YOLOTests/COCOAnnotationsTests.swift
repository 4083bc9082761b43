import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation
import YOLOTestSupport

@Suite struct COCOAnnotationsTests {
    static func parse(_ json: String) throws -> COCOAnnotations {
        try COCOAnnotations(data: Data(json.utf8), path: "a.json")
    }

    static let image = #"{"id": 1, "file_name": "1.jpg", "width": 640, "height": 480}"#
    static let category = #"{"id": 3, "name": "car"}"#
    static func annotation(_ fields: String = "") -> String {
        #"{"id": 5, "image_id": 1, "category_id": 3, "bbox": [1, 2.5, 30, 40], "area": 1100.5, "iscrowd": 0"# + fields + "}"
    }
    static func file(images: String = image, annotations: String = annotation(), categories: String = category) -> String {
        #"{"images": [\#(images)], "annotations": [\#(annotations)], "categories": [\#(categories)], "info": {}}"#
    }

    @Test func readsTheFieldsEvaluationNeeds() throws {
        let set = try Self.parse(Self.file(annotations: Self.annotation(#", "segmentation": [[1, 2, 3, 4]]"#)))
        #expect(set.images == [COCOImage(id: 1, fileName: "1.jpg", width: 640, height: 480)])
        #expect(set.categories == [COCOCategory(id: 3, name: "car")])
        #expect(set.annotations == [COCOAnnotation(id: 5, imageID: 1, categoryID: 3,
                                                   bbox: COCOBox(x: 1, y: 2.5, width: 30, height: 40), area: 1100.5)])
    }

    @Test func crowdFlagAcceptsNumbersAndBooleansAndMayBeAbsent() throws {
        let crowd = #"{"id": 6, "image_id": 1, "category_id": 3, "bbox": [0, 0, 1, 1], "area": 1, "iscrowd": true}"#
        let plain = #"{"id": 7, "image_id": 1, "category_id": 3, "bbox": [0, 0, 1, 1], "area": 1}"#
        let set = try Self.parse(Self.file(annotations: [Self.annotation(), crowd, plain].joined(separator: ",")))
        #expect(set.annotations.map(\.isCrowd) == [false, true, false])
    }

    @Test(arguments: [
        // (JSON, expected error)
        (file(annotations: #"{"id": 5, "image_id": 1, "category_id": 3, "area": 4}"#),
         YOLOError.invalidJSON(path: "a.json", location: "annotations[0]", message: "missing key 'bbox'")),
        (file(images: #"{"id": "one", "file_name": "1.jpg"}"#),
         YOLOError.invalidJSON(path: "a.json", location: "images[0].id", message: "expected an integer")),
        (file(images: image + "," + image),
         YOLOError.invalidJSON(path: "a.json", location: "images[1].id", message: "duplicate id 1")),
        (file(annotations: annotation() + "," + annotation()),
         YOLOError.invalidJSON(path: "a.json", location: "annotations[1].id", message: "duplicate id 5")),
        (file(annotations: #"{"id": 5, "image_id": 2, "category_id": 3, "bbox": [0, 0, 1, 1], "area": 1}"#),
         YOLOError.invalidJSON(path: "a.json", location: "annotations[0]", message: "image_id 2 is not in images")),
        (file(annotations: #"{"id": 5, "image_id": 1, "category_id": 4, "bbox": [0, 0, 1, 1], "area": 1}"#),
         YOLOError.invalidJSON(path: "a.json", location: "annotations[0]", message: "category_id 4 is not in categories")),
        (file(annotations: #"{"id": 5, "image_id": 1, "category_id": 3, "bbox": [0, 0, 1], "area": 1}"#),
         YOLOError.invalidJSON(path: "a.json", location: "annotations[0].bbox", message: "expected [x, y, width, height], found 3 numbers")),
        (#"{"images": [], "annotations": []}"#,
         YOLOError.invalidJSON(path: "a.json", location: "", message: "missing key 'categories'")),
    ])
    func reportsWhatIsWrongAndWhere(_ json: String, _ expected: YOLOError) {
        #expect(throws: expected) { try Self.parse(json) }
    }

    @Test func otherProblemsAreLocatedToo() {
        // Messages whose wording comes partly from Foundation: check the case and the location only.
        for (json, location) in [(Self.file(annotations: #"{"id": 5, "image_id": 1, "category_id": 3, "bbox": [0, 0, -1, 1], "area": 1}"#), "annotations[0].bbox"),
                                 (Self.file(annotations: Self.annotation().replacingOccurrences(of: #""iscrowd": 0"#, with: #""iscrowd": 2"#)), "annotations[0].iscrowd"),
                                 ("{\"images\": [", "")] {
            do {
                _ = try Self.parse(json)
                Issue.record("accepted \(json)")
            } catch let YOLOError.invalidJSON(path, found, message) {
                #expect(path == "a.json")
                #expect(found == location, "\(message)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test func missingFileIsReported() {
        #expect(throws: YOLOError.fileNotFound(path: "/nonexistent/instances.json")) {
            try COCOAnnotations(contentsOf: "/nonexistent/instances.json")
        }
    }

    @Test(.enabled(if: EvalFixtures.hasShared, "\(Skip.noShared)"))
    func readsTheSharedCocoSubset() throws {
        let set = try COCOAnnotations(contentsOf: EvalFixtures.sharedSet + "/annotations.json")
        #expect(set.images.count == 30)
        #expect(set.annotations.count == 254)
        #expect(set.categories.count == 80)
    }
}
