import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct DefaultModelTests {
    /// Whether the environment names the model or its folder, which takes precedence over the search.
    static var pinned: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["SWIFTYOLO_MODEL"] != nil || environment["SWIFTYOLO_MODEL_DIR"] != nil
    }

    /// A folder whose Weights/ holds an empty default model file.
    static func folderWithEmptyModel() throws -> String {
        let folder = TestPaths.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder + "/Weights", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/Weights/yolov4-tiny-lut8.yolo", contents: Data())
        return folder
    }

    @Test(.enabled(if: !pinned, "SWIFTYOLO_MODEL or SWIFTYOLO_MODEL_DIR is set, which overrides the search"))
    func defaultModelIsTheConvertedFileUnderWeights() throws {
        // Without Weights/ the default is the copy bundled with YOLOModels, which the test runner links.
        #expect(Model.defaultModelPath(searching: [TestPaths.temporaryFolder()])?.hasSuffix("_YOLOModels.resources/yolov4-tiny-lut8.yolo") == true)
        let folder = try Self.folderWithEmptyModel()
        #expect(Model.defaultModelPath(searching: [folder]) == folder + "/Weights/yolov4-tiny-lut8.yolo")
    }

    @Test func defaultModelFileName() {
        #expect(Model.defaultModelFileName == "yolov4-tiny-lut8.yolo")
    }

    /// An empty file is not a model: a clear error, not a crash.
    @Test func emptyDefaultModelIsAnError() throws {
        let folder = try Self.folderWithEmptyModel()
        #expect(throws: YOLOError.self) { _ = try Model.loadDefault(searching: [folder]) }
        #expect(throws: YOLOError.self) { _ = try Model(named: .yolov4Tiny, searching: [folder]) }
    }
}
