import Foundation
@_spi(Engine) import YOLO

/// A folder of images read as the frames of a video, in name order: `NAME/img/0001.jpg …` (the layout of
/// single-object tracking sequences, with `NAME/groundtruth.txt` beside) or the images of any folder.
struct ImageSequence {
    /// The folder as given.
    let folder: String
    /// The frames' files, sorted by path.
    let files: [String]

    /// Lists the images under `folder` (recursively, sorted).
    /// - Throws: when the folder does not exist or holds no `.jpg`, `.jpeg` or `.png` file.
    init(_ folder: String) throws {
        var failure: YOLOError?
        files = ImageFiles.collect([folder]) { failure = failure ?? $0 }
        if let failure { throw failure }
        self.folder = folder
    }

    /// Whether `path` is a folder (so a sequence of images rather than a video).
    static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The sequence's ground truth (`groundtruth.txt` in the folder), if present.
    var groundTruthPath: String? {
        let path = (folder as NSString).appendingPathComponent("groundtruth.txt")
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Frame `index` (0-based), decoded upright. - Throws: the decoder's error naming the file.
    func image(_ index: Int) throws -> Image { try Image(contentsOf: files[index]) }
}
