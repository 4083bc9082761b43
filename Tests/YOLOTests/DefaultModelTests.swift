import Foundation
import Testing
@testable import YOLO

@Suite struct DefaultModelTests {
    @Test func defaultModelIsTheConvertedFileUnderWeights() throws {
        let folder = TestPaths.temporaryFolder()
        #expect(Model.defaultModelPath(searching: [folder]) == nil || ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL"] != nil)
        try FileManager.default.createDirectory(atPath: folder + "/Weights", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/Weights/yolov3-tiny-lut8.yolo", contents: Data())
        if ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL"] == nil {
            #expect(Model.defaultModelPath(searching: [folder]) == folder + "/Weights/yolov3-tiny-lut8.yolo")
        }
        // An empty file is not a model: a clear error, not a crash.
        #expect(throws: YOLOError.self) { _ = try Model.loadDefault(searching: [folder]) }
    }
}
