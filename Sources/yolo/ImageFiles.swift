import Foundation
@_spi(Engine) import YOLO

/// Finding the images a command should read.
enum ImageFiles {
    static let extensions: Set<String> = ["jpg", "jpeg", "png"]

    /// Files as given, and the images inside folders (recursively, sorted), in argument order.
    /// A path that does not exist or a folder without images is reported through `problem` and skipped.
    static func collect(_ paths: [String], problem: (YOLOError) -> Void) -> [String] {
        var files: [String] = []
        for path in paths {
            do {
                files += try expand(path)
            } catch let error as YOLOError {
                problem(error)
            } catch {
                problem(.unreadableFile(path: path, reason: "\(error)"))
            }
        }
        return files
    }

    /// One argument: a file as it is, or a folder's images.
    private static func expand(_ path: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw YOLOError.fileNotFound(path: path)
        }
        guard isDirectory.boolValue else { return [path] }
        guard let walker = FileManager.default.enumerator(atPath: path) else {
            throw YOLOError.unreadableFile(path: path, reason: "cannot list folder")
        }
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            if extensions.contains((relative as NSString).pathExtension.lowercased()) {
                found.append((path as NSString).appendingPathComponent(relative))
            }
        }
        guard !found.isEmpty else {
            throw YOLOError.invalidArgument("\(path): folder holds no .jpg, .jpeg or .png files")
        }
        return found.sorted()
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
