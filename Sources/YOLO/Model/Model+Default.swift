import Foundation

// MARK: - Named models and the default model

/// The models SwiftYOLO ships converted (8-bit LUT weights, calibrated): `make model` writes them to
/// `Weights/`, and the `YOLOModels` product bundles them for packages that depend on SwiftYOLO.
public enum ModelName: String, Sendable, CaseIterable {
    /// AlexeyAB's yolov4-tiny (COCO, 80 classes, 416×416): the default. About twice yolov3-tiny's mAP
    /// for 25 % more work; expects darknet's stretch (`DetectionOptions.Scaling.scaleFill` with darknet's resampling).
    case yolov4Tiny = "yolov4-tiny"
    /// pjreddie's yolov3-tiny (COCO, 80 classes, 416×416); expects darknet's letterbox (`.scaleFit`).
    case yolov3Tiny = "yolov3-tiny"

    /// The model used when none is named.
    public static let `default`: ModelName = .yolov4Tiny

    /// The converted file's name, e.g. `yolov4-tiny-lut8.yolo`.
    public var fileName: String { "\(rawValue)-lut8.\(ModelFile.fileExtension)" }

    /// Where a named model's file is, in this order: `$SWIFTYOLO_MODEL_DIR/<file>`; `Weights/<file>` under
    /// each of `folders` (default: the current directory); the `YOLOModels` product's resources when the
    /// program links it (its resource bundle beside the executable). Nil when none has it.
    public func path(searching folders: [String] = [FileManager.default.currentDirectoryPath]) -> String? {
        let files = FileManager.default
        if let folder = ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL_DIR"], !folder.isEmpty {
            let path = (folder as NSString).appendingPathComponent(fileName)
            if files.fileExists(atPath: path) { return path }
        }
        for folder in folders {
            let path = (folder as NSString).appendingPathComponent("Weights/" + fileName)
            if files.fileExists(atPath: path) { return path }
        }
        // SwiftPM copies a target's resources into `<package>_<target>.resources` next to the executables.
        let executableFolder = Bundle.main.executableURL?.deletingLastPathComponent().path
            ?? (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        if let bundles = try? files.contentsOfDirectory(atPath: executableFolder) {
            for bundle in bundles.sorted() where bundle.hasSuffix("_YOLOModels.resources") {
                let path = "\(executableFolder)/\(bundle)/\(fileName)"
                if files.fileExists(atPath: path) { return path }
            }
        }
        return nil
    }
}

extension Model {
    /// File name of the default model (`ModelName.default.fileName`, `make model` writes it).
    public static let defaultModelFileName = ModelName.default.fileName

    /// Where the default model is: `$SWIFTYOLO_MODEL` when set, else the default named model
    /// (`ModelName.path(searching:)`); nil when none has it.
    public static func defaultModelPath(searching folders: [String] = [FileManager.default.currentDirectoryPath]) -> String? {
        if let path = ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL"], !path.isEmpty { return path }
        return ModelName.default.path(searching: folders)
    }

    /// Loads the named model (see `ModelName.path(searching:)`).
    /// - Throws: `YOLOError.fileNotFound` naming the file and how to make it when no folder has it.
    public init(named name: ModelName, searching folders: [String] = [FileManager.default.currentDirectoryPath],
                residency: WeightResidency = .expanded) throws {
        guard let path = name.path(searching: folders) else {
            throw YOLOError.fileNotFound(path: "Weights/\(name.fileName) (run `make model` in SwiftYOLO, set SWIFTYOLO_MODEL_DIR, or link the YOLOModels product)")
        }
        try self.init(contentsOf: path, residency: residency)
    }

    /// Loads the default model (see `defaultModelPath(searching:)`).
    /// - Throws: `YOLOError.fileNotFound` with a hint when there is none.
    public static func loadDefault(searching folders: [String] = [FileManager.default.currentDirectoryPath],
                                   residency: WeightResidency = .expanded) throws -> Model {
        guard let path = defaultModelPath(searching: folders) else {
            throw YOLOError.fileNotFound(path: "Weights/\(defaultModelFileName) (run `make model` in SwiftYOLO, set SWIFTYOLO_MODEL, or link the YOLOModels product)")
        }
        return try Model(contentsOf: path, residency: residency)
    }
}

extension Detector {
    /// A detector with the default model: `$SWIFTYOLO_MODEL`, else yolov4-tiny lut8 (`ModelName.path(searching:)`:
    /// `$SWIFTYOLO_MODEL_DIR`, `Weights/` under the current directory, the `YOLOModels` resources).
    public convenience init() throws {
        try self.init(model: Model.loadDefault())
    }

    /// A detector with a named model (`ModelName.path(searching:)` says where it is looked for).
    public convenience init(named name: ModelName) throws {
        try self.init(model: Model(named: name))
    }
}
