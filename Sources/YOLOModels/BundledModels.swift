import Foundation
import YOLO

/// The converted models bundled as resources of this product (yolov4-tiny and yolov3-tiny, 8-bit LUT
/// weights, what `make model` writes; provenance in Sources/YOLOModels/PROVENANCE.md), so that a package
/// that depends on SwiftYOLO detects with no files to fetch:
///
/// ```swift
/// import YOLO
/// import YOLOModels
/// let detector = try Detector(bundled: .yolov4Tiny)
/// ```
///
/// `Detector(named:)` of the `YOLO` library also finds these files when the program links this product
/// (after `$SWIFTYOLO_MODEL_DIR` and `Weights/`).
public enum BundledModels {
    /// The bundled file of `name`. Every `ModelName` is bundled; nil only when the resource bundle is missing
    /// from the installation.
    public static func path(_ name: ModelName) -> String? {
        Bundle.module.url(forResource: name.fileName, withExtension: nil)?.path
    }

    /// Loads the bundled `name` (the loader verifies the file's checksum).
    /// - Throws: `YOLOError.fileNotFound` when the resource bundle is missing.
    public static func model(_ name: ModelName, residency: WeightResidency = .expanded) throws -> Model {
        guard let path = path(name) else {
            throw YOLOError.fileNotFound(path: "\(name.fileName) in the YOLOModels resource bundle")
        }
        return try Model(contentsOf: path, residency: residency)
    }
}

extension Detector {
    /// A detector with the bundled copy of `name`, never a file elsewhere.
    public convenience init(bundled name: ModelName) throws {
        try self.init(model: BundledModels.model(name))
    }
}
