import Foundation
import Synchronization

/// Reading and writing whole files with errors that name the path.
@_spi(Engine) public enum FileIO {
    /// Reads the whole file at `path`.
    /// - Throws: `YOLOError.fileNotFound` or `.unreadableFile`.
    public static func read(_ path: String) throws -> Data {
        // One stat (following symbolic links, as opening does): whether the file exists, is a folder, and
        // its size.
        var info = stat()
        guard stat(path, &info) == 0 else { throw YOLOError.fileNotFound(path: path) }
        if info.st_mode & S_IFMT == S_IFDIR {
            throw YOLOError.unreadableFile(path: path, reason: "is a directory")
        }
        do {
            // A file that reports size 0 (empty, or generated like /proc's) is read through FileHandle:
            // `Data(contentsOf:)` reads such files in chunks and leaks a 4 KB buffer when there is nothing
            // to read (FoundationEssentials in Swift 6.3; AddressSanitizer's leak check found it through
            // the empty-image tests).
            if info.st_size == 0 {
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    throw YOLOError.unreadableFile(path: path, reason: "cannot open")
                }
                defer { try? handle.close() }
                return try readUnsized(handle, path: path)
            }
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch let error as YOLOError {
            throw error
        } catch {
            throw YOLOError.unreadableFile(path: path, reason: (error as NSError).localizedDescription)
        }
    }

    /// The most a file that reports no size (a pipe, a device, a /proc file) may hold: `/dev/zero` or an
    /// endless pipe would otherwise be read until memory runs out (Foundation's `readDataToEndOfFile`
    /// trapped on it: "Bad address" after gigabytes).
    public static let unsizedLimit = 256 << 20

    /// Reads `handle` to its end in 1 MB chunks, failing once more than `unsizedLimit` bytes arrived.
    public static func readUnsized(_ handle: FileHandle, path: String) throws -> Data {
        var data = Data()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            guard data.count + chunk.count <= unsizedLimit else {
                throw YOLOError.unreadableFile(path: path, reason: "reports no size and holds more than \(unsizedLimit >> 20) MB (a device or an endless stream?)")
            }
            data.append(chunk)
        }
        return data
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
    ///
    /// The temporary file is `.NAME.PID.RANDOM.tmp` (hidden, and never a name the tools read as input).
    /// While it exists it is registered, so `removeTemporaries()` can delete it when the process
    /// is interrupted; temporaries that a killed process (SIGKILL) left for the same target are removed
    /// here first.
    public static func writeAtomically(_ data: Data, to path: String) throws {
        let temporary = temporaryPath(for: path)
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            discardTemporary(temporary)
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \((error as NSError).localizedDescription)")
        }
        try commitTemporary(temporary, to: path)
    }

    /// A registered temporary path next to `path` (see `writeAtomically`) for a writer that streams its
    /// output (a video): write there, then `commitTemporary` or `discardTemporary`.
    public static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        removeStaleTemporaries(of: url)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp").path
        inFlight.withLock { _ = $0.insert(temporary) }
        return temporary
    }

    /// Renames a finished temporary over `path`; on failure the temporary is removed.
    public static func commitTemporary(_ temporary: String, to path: String) throws {
        defer { inFlight.withLock { _ = $0.remove(temporary) } }
        if rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw YOLOError.unreadableFile(path: path, reason: "cannot write: \(reason)")
        }
    }

    /// Removes an unfinished temporary.
    public static func discardTemporary(_ temporary: String) {
        unlink(temporary)
        inFlight.withLock { _ = $0.remove(temporary) }
    }

    /// Deletes the temporary files being written now, e.g. from a program's own signal handling before it
    /// exits (the `yolo` tool does: SignalCleanup.swift). The library installs no signal handler.
    public static func removeTemporaries() {
        for path in inFlight.withLock({ Array($0) }) { unlink(path) }
    }

    /// Temporary files being written now.
    private static let inFlight = Locked<Set<String>>([])

    /// Deletes `.NAME.PID.RANDOM.tmp` files next to `target` whose process no longer exists.
    ///
    /// A folder is listed once per process (a `--save` run over thousands of images writes thousands of
    /// files into one folder; listing it for each would be quadratic). The temporaries found then are
    /// remembered and each is removed when its own target is written; ones that a process killed later
    /// leaves behind are found by the next run.
    static func removeStaleTemporaries(of target: URL) {
        let folder = target.deletingLastPathComponent().path
        let prefix = "." + target.lastPathComponent + "."
        let candidates: [String] = staleCandidates.withLock { known in
            if known[folder] == nil {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
                known[folder] = names.filter { $0.hasPrefix(".") && $0.hasSuffix(".tmp") }
            }
            let matching = known[folder, default: []].filter { $0.hasPrefix(prefix) }
            known[folder, default: []].removeAll { $0.hasPrefix(prefix) }
            return matching
        }
        for name in candidates {
            let fields = name.dropFirst(prefix.count).dropLast(4).split(separator: ".")
            guard fields.count == 2, let pid = Int32(fields[0]), UInt32(fields[1]) != nil, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                unlink((folder as NSString).appendingPathComponent(name))
            }
        }
    }

    /// Per folder: the hidden `.tmp` names seen when it was first listed and not yet dealt with.
    private static let staleCandidates = Locked<[String: [String]]>([:])
}
