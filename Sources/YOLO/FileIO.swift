import Foundation

/// Reading and writing whole files with errors that name the path.
public enum FileIO {
    /// Reads the whole file at `path`.
    /// - Throws: `YOLOError.fileNotFound` or `.unreadableFile`.
    public static func read(_ path: String) throws -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw YOLOError.fileNotFound(path: path)
        }
        if isDirectory.boolValue {
            throw YOLOError.unreadableFile(path: path, reason: "is a directory")
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw YOLOError.unreadableFile(path: path, reason: (error as NSError).localizedDescription)
        }
    }

    /// Reads a text file as UTF-8.
    public static func readText(_ path: String) throws -> String {
        let data = try read(path)
        guard let text = String(data: data, encoding: .utf8) else {
            throw YOLOError.unreadableFile(path: path, reason: "not UTF-8 text")
        }
        return text
    }

    /// Writes `data` to `path` atomically: into a temporary file in the same folder, then renamed
    /// over the target, so a reader never sees a half-written file and a failure leaves no debris.
    public static func writeAtomically(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        do {
            try data.write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \((error as NSError).localizedDescription)")
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \(reason)")
        }
    }
}
