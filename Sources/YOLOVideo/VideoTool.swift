import Foundation
import Synchronization
@_spi(Engine) import YOLO
import YOLOVideoProtocol

/// Where YOLOVideo finds `yolo-video`, the helper program that decodes and encodes video with FFmpeg.
///
/// YOLOVideo links no FFmpeg library (Debian's are GPL-built): `VideoSource` and `VideoWriter` each run the
/// helper as a child process and exchange frames with it over a socket (docs/VIDEO.md). The helper is the
/// package's `yolo-video` product; `swift build` builds it next to the other executables, and an app ships it
/// beside its own executable or anywhere in `PATH`, or sets `path`.
public enum VideoTool {
    /// The helper's file name.
    public static let executableName = "yolo-video"

    private static let explicitPath = Mutex<String?>(nil)

    /// The helper to run; nil (the default) searches `candidates`. Set it before opening a video.
    public static var path: String? {
        get { explicitPath.withLock { $0 } }
        set { explicitPath.withLock { $0 = newValue } }
    }

    /// Where the helper is looked for when `path` is nil, in order: `yolo-video` in the folder of the running
    /// executable, then in each folder of the `PATH` environment variable.
    public static var candidates: [String] {
        var folders: [String] = []
        if let executable = runningExecutable() { folders.append((executable as NSString).deletingLastPathComponent) }
        let search = ProcessInfo.processInfo.environment["PATH"] ?? ""
        folders += search.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        return folders.map { ($0 as NSString).appendingPathComponent(executableName) }
    }

    /// The helper that would be run: `path`, or the first of `candidates` that is an executable file.
    /// - Throws: `YOLOError.invalidArgument` saying where it looked, in one line.
    public static func locate() throws -> String {
        try locate(path: path, candidates: candidates)
    }

    /// `locate()` for a given `path` and `candidates`.
    static func locate(path: String?, candidates: [String]) throws -> String {
        if let path {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw YOLOError.invalidArgument("the video helper VideoTool.path = \(path) is not an executable file")
            }
            return path
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        let places = candidates.first.map { "at \($0) (beside this executable) nor in PATH" } ?? "in PATH"
        throw YOLOError.invalidArgument(
            "the video helper \(executableName) (YOLOVideo's FFmpeg program) is not \(places); build it with "
                + "`swift build -c release --product \(executableName)` and put it beside this executable or in PATH, or set VideoTool.path")
    }

    /// The running executable's path (`/proc/self/exe`).
    private static func runningExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first.map { URL(fileURLWithPath: $0).standardizedFileURL.path } }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One running `yolo-video` helper and the socket to it. Reading and writing belong to one thread at a time
/// (the caller serializes them); `terminate()` may be called from any thread, also during a blocked read.
final class VideoToolProcess: @unchecked Sendable {
    let connection: WireConnection
    /// The helper's process id, and whether it is still to be reaped (guarded by `state`).
    private let state: Mutex<(pid: pid_t, running: Bool, open: Bool)>

    /// Starts the helper with `arguments`; errors name `subject` (the video's location or path).
    init(_ arguments: [String], subject: String) throws {
        let tool: String
        do {
            tool = try VideoTool.locate()
        } catch YOLOError.invalidArgument(let message) {
            throw YOLOError.unreadableFile(path: subject, reason: message)
        }
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw YOLOError.unreadableFile(path: subject, reason: "cannot start \(tool): \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so a terminal's Ctrl-C reaches only the client (which decides when the helper
        // stops: a `VideoWriter` still finishes its file); default signal handling and no blocked signals, whatever
        // the client set up for itself.
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([tool] + arguments).map { strdup($0) } + [nil]
        // This process's environment (YOLO_FFMPEG_LOG, PATH, ...), as Foundation reads it.
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tool, &actions, &attributes, argv, envp)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw YOLOError.unreadableFile(path: subject, reason: "cannot start \(tool): \(String(cString: strerror(spawned)))")
        }
        connection = WireConnection(descriptor: ends[0])
        state = Mutex((pid, true, true))
    }

    deinit { stop() }

    /// Makes a blocked read or write return at once and ends the helper; safe from any thread.
    func terminate() {
        state.withLock { state in
            guard state.running else { return }
            if state.open { shutdown(connection.descriptor, Int32(SHUT_RDWR)) }
            kill(state.pid, SIGKILL)
        }
    }

    /// Whether the socket is still open (`stop()` closes it; its descriptor number must not be used after).
    var isOpen: Bool { state.withLock { $0.open } }

    /// Sends `number` to the helper, if it still runs.
    func signal(_ number: Int32) {
        state.withLock { state in
            if state.running { Glibc.kill(state.pid, number) }
        }
    }

    /// Ends the helper if it still runs, closes the socket and reaps the process; returns how it ended
    /// (`waitpid`'s status), nil when already stopped.
    @discardableResult
    func stop(kill: Bool = true) -> Int32? {
        state.withLock { state -> Int32? in
            guard state.running else { return nil }
            if state.open {
                close(connection.descriptor)
                state.open = false
            }
            if kill { Glibc.kill(state.pid, SIGKILL) }
            var status: Int32 = 0
            while waitpid(state.pid, &status, 0) < 0 && errno == EINTR {}
            state.running = false
            return status
        }
    }

    /// Reads an error record's body (after its tag) as the `YOLOError` it stands for, naming `subject`.
    func error(subject: String) -> YOLOError {
        do {
            let kind = try connection.u8(), message = try connection.string()
            switch VideoToolWire.ErrorKind(rawValue: kind) {
            case .invalidFile: return .invalidFile(path: subject, message: message)
            case .invalidArgument: return .invalidArgument("\(subject): \(message)")
            case .unreadable, nil: return .unreadableFile(path: subject, reason: message)
            }
        } catch {
            return broken(subject: subject, error)
        }
    }

    /// The error for a connection that ended or carried something unexpected.
    func broken(subject: String, _ error: any Error) -> YOLOError {
        if let malformed = error as? VideoToolWire.Malformed {
            return .unreadableFile(path: subject, reason: "the video helper sent \(malformed.description)")
        }
        let status = stop()
        let how: String
        if let status, status & 0x7f != 0 { how = "was killed by signal \(status & 0x7f)" }
        else if let status { how = "exited with status \((status >> 8) & 0xff)" } else { how = "stopped" }
        return .unreadableFile(path: subject, reason: "the video helper \(how) (YOLO_FFMPEG_LOG=info shows FFmpeg's messages)")
    }
}
