import Foundation

// MARK: - The default model

extension Model {
    /// File name of the default model: yolov3-tiny converted to 8-bit LUT weights (`make model` writes it).
    public static let defaultModelFileName = "yolov3-tiny-lut8.yolo"

    /// Where the default model is: `$SWIFTYOLO_MODEL` when set, else `Weights/yolov3-tiny-lut8.yolo` in the
    /// first of `folders` (default: the current directory) that has it; nil when none has it.
    public static func defaultModelPath(searching folders: [String] = [FileManager.default.currentDirectoryPath]) -> String? {
        if let path = ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL"], !path.isEmpty { return path }
        for folder in folders {
            let path = (folder as NSString).appendingPathComponent("Weights/" + defaultModelFileName)
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// Loads the default model (see `defaultModelPath(searching:)`).
    /// - Throws: `YOLOError.fileNotFound` with a hint when there is none.
    public static func loadDefault(searching folders: [String] = [FileManager.default.currentDirectoryPath],
                                   residency: WeightResidency = .expanded) throws -> Model {
        guard let path = defaultModelPath(searching: folders) else {
            throw YOLOError.fileNotFound(path: "Weights/\(defaultModelFileName) (run `make model`, or set SWIFTYOLO_MODEL)")
        }
        return try Model(contentsOf: path, residency: residency)
    }
}

extension Detector {
    /// A detector with the default model: `$SWIFTYOLO_MODEL`, else `Weights/yolov3-tiny-lut8.yolo` under the
    /// current directory (made by `make model`).
    public convenience init() throws {
        try self.init(model: Model.loadDefault())
    }
}
