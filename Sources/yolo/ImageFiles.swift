import Foundation
import YOLO

/// Finding the images a command should read.
enum ImageFiles {
    static let extensions: Set<String> = ["jpg", "jpeg", "png"]

    /// Files as given, and the images inside folders (recursively, sorted). Missing paths are errors.
    static func collect(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw YOLOError.fileNotFound(path: path)
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            guard let walker = FileManager.default.enumerator(atPath: path) else {
                throw YOLOError.unreadableFile(path: path, reason: "cannot list folder")
            }
            var found: [String] = []
            while let relative = walker.nextObject() as? String {
                if extensions.contains((relative as NSString).pathExtension.lowercased()) {
                    found.append((path as NSString).appendingPathComponent(relative))
                }
            }
            if found.isEmpty {
                throw YOLOError.invalidArgument("\(path): folder holds no .jpg, .jpeg or .png files")
            }
            files += found.sorted()
        }
        return files
    }

    /// Creates `path` (and parents) if missing.
    static func makeFolder(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw YOLOError.unreadableFile(path: path, reason: "cannot create folder")
        }
    }
}
