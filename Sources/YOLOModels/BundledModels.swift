import Foundation
@_spi(Engine) import YOLO

/// The converted models bundled as resources of this product (yolov4-tiny and yolov3-tiny, 8-bit LUT
/// weights, what `make model` writes; provenance in Sources/YOLOModels/PROVENANCE.md), so that a package
/// that depends on SwiftYOLO detects with no files to fetch:
///
/// ```swift
/// import YOLOModels
/// let detector = try Detector(bundled: .yolov4Tiny)
/// ```
///
/// SwiftPM puts the resources in a folder beside the executable (`<package>_YOLOModels.resources`, e.g.
/// `.build/release/SwiftYOLO_YOLOModels.resources`); a program installed elsewhere takes that folder along.
/// `Detector(named:)` of the `YOLO` library also finds these files when the program links this product
/// (after `$SWIFTYOLO_MODEL_DIR` and `Weights/`).
public enum BundledModels {
    /// The bundled file of `name`. Every `ModelName` is bundled; nil only when the resource folder is missing
    /// from beside the executable.
    public static func path(_ name: ModelName) -> String? {
        name.bundledPath
    }

    /// Loads the bundled `name` (the loader verifies the file's checksum).
    /// - Throws: `YOLOError.fileNotFound` naming the folder looked for when the resources are not beside the
    ///   executable (where SwiftPM's own `Bundle.module` would stop the process).
    public static func model(_ name: ModelName, residency: WeightResidency = .expanded) throws -> Model {
        guard let path = path(name) else {
            throw YOLOError.fileNotFound(path: "\(ModelName.resourceLocation)/\(name.fileName) (the YOLOModels resources: "
                + "copy the folder SwiftPM built beside the executable, e.g. .build/release/SwiftYOLO_YOLOModels.resources)")
        }
        return try Model(contentsOf: path, residency: residency)
    }
}

extension Detector {
    /// A detector with the bundled copy of `name`, never a file elsewhere.
    /// - Throws: `YOLOError.fileNotFound` when the resources are not beside the executable (see `BundledModels`).
    public convenience init(bundled name: ModelName) throws {
        try self.init(model: BundledModels.model(name))
    }
}
