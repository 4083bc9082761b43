import Foundation
@_spi(Engine) import YOLO

/// One detection in COCO results format: an image, a category, a box and a confidence.
public struct COCOResult: Sendable, Equatable {
    /// Id of the image (as in the annotation file).
    public var imageID: Int
    /// COCO category id (not the model's class index; see `COCOCategoryMap`).
    public var categoryID: Int
    /// Box in pixels of the full image.
    public var bbox: COCOBox
    /// Confidence in [0, 1]; higher ranks first.
    public var score: Double

    /// Makes a result.
    public init(imageID: Int, categoryID: Int, bbox: COCOBox, score: Double) {
        self.imageID = imageID
        self.categoryID = categoryID
        self.bbox = bbox
        self.score = score
    }

    /// A result from a box given by its corners in pixels, clamped to the image `[0, width] x [0, height]`
    /// first, as darknet's `valid` command writes COCO results.
    public init(imageID: Int, categoryID: Int, score: Double,
                left: Double, top: Double, right: Double, bottom: Double, imageWidth: Int, imageHeight: Int) {
        let x1 = max(left, 0), y1 = max(top, 0)
        let x2 = min(right, Double(imageWidth)), y2 = min(bottom, Double(imageHeight))
        self.init(imageID: imageID, categoryID: categoryID,
                  bbox: COCOBox(x: x1, y: y1, width: max(x2 - x1, 0), height: max(y2 - y1, 0)), score: score)
    }
}

/// Reading and writing COCO results files: a JSON array of `{image_id, category_id, bbox: [x, y, w, h], score}`.
public enum COCOResults {
    // MARK: Reading

    /// Reads the results file at `path`. Extra keys (`segmentation`, ...) are ignored.
    /// - Throws: `YOLOError.fileNotFound`, `.unreadableFile` or `.invalidJSON` (naming e.g. `[12].bbox`)
    ///   for a missing key, a wrong type, a box that is not 4 finite numbers with non-negative size,
    ///   or a score that is not finite.
    public static func load(_ path: String) throws -> [COCOResult] {
        try parse(try FileIO.read(path), path: path)
    }

    /// Parses results JSON; `path` is used in error messages only.
    public static func parse(_ data: Data, path: String) throws -> [COCOResult] {
        let raw = try COCOJSON.decode([ResultJSON].self, from: data, path: path)
        var results: [COCOResult] = []
        results.reserveCapacity(raw.count)
        for (index, item) in raw.enumerated() {
            let box = try COCOAnnotations.box(item.bbox, location: "[\(index)].bbox", path: path)
            guard item.score.isFinite else {
                throw YOLOError.invalidJSON(path: path, location: "[\(index)].score", message: "expected a finite number")
            }
            results.append(COCOResult(imageID: item.image_id, categoryID: item.category_id, bbox: box, score: item.score))
        }
        return results
    }

    // MARK: Writing

    /// The results as JSON: one object per line inside one array, so a large file stays greppable.
    /// Numbers are written in Swift's shortest round-trip form, so reading gives back the same values.
    public static func encode(_ results: [COCOResult]) -> Data {
        var text = "[\n"
        for (index, result) in results.enumerated() {
            let box = result.bbox.array.map { number($0) }.joined(separator: ", ")
            text += "{\"image_id\": \(result.imageID), \"category_id\": \(result.categoryID), \"bbox\": [\(box)], \"score\": \(number(result.score))}"
            text += index + 1 < results.count ? ",\n" : "\n"
        }
        text += "]\n"
        return Data(text.utf8)
    }

    /// Writes the results to `path` atomically (a reader never sees a half-written file).
    public static func write(_ results: [COCOResult], to path: String) throws {
        try FileIO.writeAtomically(encode(results), to: path)
    }

    // MARK: Private

    private static func number(_ value: Double) -> String {
        precondition(value.isFinite, "COCO results hold finite numbers only")
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }

    private struct ResultJSON: Decodable {
        var image_id: Int
        var category_id: Int
        var bbox: [Double]
        var score: Double
    }
}
