import Foundation
@_spi(Engine) import YOLO

/// One image of a COCO annotation file.
public struct COCOImage: Sendable, Equatable {
    /// The image id that annotations and results refer to.
    public var id: Int
    /// File name, relative to the image folder.
    public var fileName: String
    /// Width and height in pixels, when the file gives them.
    public var width: Int?
    /// Height in pixels, when the file gives it.
    public var height: Int?

    /// Makes an image entry.
    public init(id: Int, fileName: String, width: Int? = nil, height: Int? = nil) {
        self.id = id
        self.fileName = fileName
        self.width = width
        self.height = height
    }
}

/// One category (class) of a COCO annotation file.
public struct COCOCategory: Sendable, Equatable {
    /// Category id (the standard COCO scheme uses 1...90 with 10 gaps).
    public var id: Int
    /// Category name, e.g. `person`.
    public var name: String

    /// Makes a category entry.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// One ground-truth object of a COCO annotation file (bbox evaluation reads only these fields).
public struct COCOAnnotation: Sendable, Equatable {
    /// Annotation id.
    public var id: Int
    /// Id of the image it belongs to.
    public var imageID: Int
    /// Id of its category.
    public var categoryID: Int
    /// Bounding box in pixels.
    public var bbox: COCOBox
    /// The file's `area` field (square pixels; for COCO the segmentation area, not the box's):
    /// it decides the small/medium/large range of a ground truth.
    public var area: Double
    /// A crowd region: never a miss, may absorb any number of detections.
    public var isCrowd: Bool

    /// Makes a ground-truth object; `area` defaults to the box's `width * height`.
    public init(id: Int, imageID: Int, categoryID: Int, bbox: COCOBox, area: Double? = nil, isCrowd: Bool = false) {
        self.id = id
        self.imageID = imageID
        self.categoryID = categoryID
        self.bbox = bbox
        self.area = area ?? bbox.area
        self.isCrowd = isCrowd
    }
}

/// A COCO "instances" annotation file: images, ground-truth boxes and categories.
///
/// Reading checks what the evaluation relies on and reports the first problem as `YOLOError.invalidJSON`
/// naming the place: a missing key, a wrong type, a box that is not 4 finite numbers with non-negative size,
/// duplicate image, annotation or category ids, an annotation for an unknown image or category.
/// Other keys (`segmentation`, `info`, `licenses`, ...) are ignored. `iscrowd` may be absent (then 0).
public struct COCOAnnotations: Sendable {
    /// The images, in file order.
    public var images: [COCOImage]
    /// The ground-truth objects, in file order.
    public var annotations: [COCOAnnotation]
    /// The categories, in file order.
    public var categories: [COCOCategory]

    /// Makes an annotation set from values. The caller keeps them consistent: unique image and category ids,
    /// annotations that refer to listed images and categories (the evaluator ignores any that do not).
    public init(images: [COCOImage], annotations: [COCOAnnotation], categories: [COCOCategory]) {
        self.images = images
        self.annotations = annotations
        self.categories = categories
    }

    /// Reads and checks the annotation file at `path`.
    /// - Throws: `YOLOError.fileNotFound`, `.unreadableFile` or `.invalidJSON`.
    public init(contentsOf path: String) throws {
        try self.init(data: try FileIO.read(path), path: path)
    }

    /// Parses and checks annotation JSON; `path` is used in error messages only.
    public init(data: Data, path: String) throws {
        let file = try COCOJSON.decode(FileJSON.self, from: data, path: path)
        images = file.images.map { COCOImage(id: $0.id, fileName: $0.file_name, width: $0.width, height: $0.height) }
        categories = file.categories.map { COCOCategory(id: $0.id, name: $0.name) }
        annotations = []
        annotations.reserveCapacity(file.annotations.count)
        let imageIDs = try Self.uniqueIDs(images.map(\.id), section: "images", path: path)
        let categoryIDs = try Self.uniqueIDs(categories.map(\.id), section: "categories", path: path)
        _ = try Self.uniqueIDs(file.annotations.map(\.id), section: "annotations", path: path)
        for (index, raw) in file.annotations.enumerated() {
            let place = "annotations[\(index)]"
            guard imageIDs.contains(raw.image_id) else {
                throw YOLOError.invalidJSON(path: path, location: place, message: "image_id \(raw.image_id) is not in images")
            }
            guard categoryIDs.contains(raw.category_id) else {
                throw YOLOError.invalidJSON(path: path, location: place, message: "category_id \(raw.category_id) is not in categories")
            }
            let box = try Self.box(raw.bbox, location: place + ".bbox", path: path)
            guard raw.area.isFinite, raw.area >= 0 else {
                throw YOLOError.invalidJSON(path: path, location: place + ".area", message: "expected a finite non-negative number, found \(raw.area)")
            }
            annotations.append(COCOAnnotation(id: raw.id, imageID: raw.image_id, categoryID: raw.category_id,
                                              bbox: box, area: raw.area, isCrowd: raw.iscrowd?.value ?? false))
        }
    }

    // MARK: Lookups

    /// The image with id `id`, if any.
    public func image(id: Int) -> COCOImage? { images.first { $0.id == id } }

    /// The category with id `id`, if any.
    public func category(id: Int) -> COCOCategory? { categories.first { $0.id == id } }

    // MARK: Checks

    /// A box from 4 finite numbers with non-negative width and height; shared with the results reader.
    static func box(_ numbers: [Double], location: String, path: String) throws -> COCOBox {
        guard numbers.count == 4 else {
            throw YOLOError.invalidJSON(path: path, location: location, message: "expected [x, y, width, height], found \(numbers.count) numbers")
        }
        guard numbers.allSatisfy(\.isFinite), numbers[2] >= 0, numbers[3] >= 0 else {
            throw YOLOError.invalidJSON(path: path, location: location, message: "expected finite numbers with width, height >= 0, found \(numbers)")
        }
        return COCOBox(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    private static func uniqueIDs(_ ids: [Int], section: String, path: String) throws -> Set<Int> {
        var seen = Set<Int>(minimumCapacity: ids.count)
        for (index, id) in ids.enumerated() where !seen.insert(id).inserted {
            throw YOLOError.invalidJSON(path: path, location: "\(section)[\(index)].id", message: "duplicate id \(id)")
        }
        return seen
    }

    // MARK: File layout

    // Field names as in the COCO files (snake case).
    private struct FileJSON: Decodable {
        var images: [ImageJSON]
        var annotations: [AnnotationJSON]
        var categories: [CategoryJSON]
    }

    private struct ImageJSON: Decodable {
        var id: Int
        var file_name: String
        var width: Int?
        var height: Int?
    }

    private struct AnnotationJSON: Decodable {
        var id: Int
        var image_id: Int
        var category_id: Int
        var bbox: [Double]
        var area: Double
        var iscrowd: COCOFlag?
    }

    private struct CategoryJSON: Decodable {
        var id: Int
        var name: String
    }
}
