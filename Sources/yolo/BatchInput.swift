import Foundation
@_spi(Engine) import YOLO

/// `--files-from`: input paths from a file or standard input.
enum BatchInput {
    /// The paths listed in `source` (`-`: standard input), one per line or NUL-separated; empty entries and
    /// a trailing carriage return (a list written on Windows) are ignored.
    static func paths(from source: String, nullSeparated: Bool) throws -> [String] {
        let data = source == "-" ? try FileIO.readUnsized(FileHandle.standardInput, path: "standard input") : try FileIO.read(source)
        let separator: UInt8 = nullSeparated ? 0 : UInt8(ascii: "\n")
        return data.split(separator: separator, omittingEmptySubsequences: true).compactMap { bytes in
            var entry = String(decoding: bytes, as: UTF8.self)
            if !nullSeparated && entry.hasSuffix("\r") { entry.removeLast() }
            return entry.isEmpty ? nil : entry
        }
    }
}

/// `--resume FILE`: the JSONL results written so far, and appending to them.
///
/// A line is kept when it is a complete JSON object with an `image`; an incomplete last line (the process was
/// killed while writing it) is cut off, so the file always ends with whole records. Anything else that is not
/// such a record means FILE is not a results file: it is left alone and the run fails.
final class ResumeLog {
    let path: String
    /// Images the file already holds results for.
    private(set) var done: Set<String> = []
    private let handle: FileHandle

    init(path: String) throws {
        self.path = path
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw YOLOError.unreadableFile(path: path, reason: "cannot create the results file")
            }
        }
        let data = try FileIO.read(path)
        var keep = 0  // bytes of whole records
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let end = keep + line.count
            let complete = end < data.count  // followed by a newline
            let image = (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["image"] as? String
            if let image, complete {
                done.insert(image)
                keep = end + 1
            } else if line.isEmpty && !complete {
                break  // the file ends with a newline
            } else if !complete {
                break  // a record cut off by an interruption: dropped below
            } else {
                throw YOLOError.invalidFile(path: path, message: "line \(lineNumber) is not a detection record; not resuming into this file")
            }
        }
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw YOLOError.unreadableFile(path: path, reason: "cannot open for writing")
        }
        self.handle = handle
        do {
            try handle.truncate(atOffset: UInt64(keep))
            try handle.seekToEnd()
        } catch {
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \(error.localizedDescription)")
        }
    }

    deinit { try? handle.close() }

    /// Appends one record (a whole line in one write).
    func append(_ record: String) throws {
        do {
            try handle.write(contentsOf: Data((record + "\n").utf8))
        } catch {
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \(error.localizedDescription)")
        }
    }
}
