import Foundation
import Synchronization
@_spi(Engine) import YOLO
import YOLOVideoProtocol

/// A decoded video frame: upright RGB, with its place in the stream.
public struct VideoFrame: Sendable {
    /// The frame's number in decoding order, from 0; frames a policy skipped or dropped still count.
    public let index: Int
    /// Presentation time in seconds from the start of the stream.
    public let time: Double
    /// The picture, upright (the stream's display rotation applied, as EXIF orientation is for photos).
    public let image: Image
    /// Frames the policy dropped (`.latest`) before this one was taken.
    public internal(set) var dropped: Int
    /// When the decoder finished this frame (for the delay from arrival to result).
    public let arrival: ContinuousClock.Instant
}

/// Which decoded frames reach the consumer.
public enum FramePolicy: Sendable, Equatable, CustomStringConvertible {
    /// Every frame, in order; decoding waits while the consumer is busy (the default for files).
    case everyFrame
    /// One slot: a new frame replaces one not yet taken, and each replaced frame is counted as dropped
    /// (the default for cameras and network streams, like `alwaysDiscardsLateVideoFrames`).
    case latest
    /// Every n-th frame (0, n, 2n, ...), the others decoded but not converted; nothing is dropped.
    case stride(Int)

    public var description: String {
        switch self {
        case .everyFrame: return "every frame"
        case .latest: return "latest frame"
        case .stride(let n): return "every \(n)th frame"
        }
    }
}

/// A video file, a network stream (`rtsp://`, `http://`, ...) or a V4L2 camera (`/dev/video0`), decoded
/// with FFmpeg into upright RGB `Image`s.
///
/// FFmpeg runs in the `yolo-video` helper (see `VideoTool`), one process per source, started by `init` and
/// ended when the source ends, fails, is cancelled or goes away; it decodes and converts each frame when
/// asked for it, so frames are exactly those of an in-process FFmpeg decode.
///
/// `nextFrame()` decodes synchronously on the caller's thread; `frames(policy:)` decodes on a thread of its
/// own and hands frames over as an `AsyncSequence`, so decoding overlaps whatever the consumer does. One
/// reader at a time: the source is a decoder's state, not a shareable value. Decoding calls are serialized,
/// so a `nextFrame()` made after leaving a `frames()` loop waits for that pass's thread to finish its last
/// call rather than running beside it.
public final class VideoSource: @unchecked Sendable {
    /// What kind of source `location` names.
    public enum Kind: String, Sendable {
        case file, stream, camera
    }

    /// The path, URL or device as given.
    public let location: String
    public let kind: Kind
    /// Upright size of the frames (after the display rotation).
    public let width: Int
    public let height: Int
    /// Clockwise rotation applied to each decoded picture (0, 90, 180 or 270), from the stream's display matrix.
    public let rotation: Int
    /// The stream's average frame rate, when it declares one.
    public let frameRate: Double?
    /// The number of frames the container declares (files), when it does.
    public let declaredFrameCount: Int?
    /// The duration in seconds, when known.
    public let duration: Double?
    /// The decoder, e.g. `h264`.
    public let codecName: String

    /// `.everyFrame` for files, `.latest` for cameras and streams.
    public var defaultPolicy: FramePolicy { kind == .file ? .everyFrame : .latest }

    private let tool: VideoToolProcess
    private let cancelled = Atomic<Bool>(false)
    // The decoding state below, and the requests to the helper, belong to whichever thread holds `reading`:
    // the caller of `nextFrame()` or a `frames()` pass's decoding thread. After a `break` out of a pass that
    // thread finishes its current call in the background; the lock makes whatever reads the source next
    // wait for it instead of racing it (ThreadSanitizer reported that race on `decodedCount`).
    private let reading = Locked(())
    private var decodedCount = 0
    private var finished = false

    /// Whether `location` names something this type opens rather than a still image: a URL with a
    /// scheme, a `/dev/video*` device, or a file with a video extension.
    public static func isVideo(_ location: String) -> Bool {
        if location.contains("://") || location.hasPrefix("/dev/video") { return true }
        let ext = URL(fileURLWithPath: location).pathExtension.lowercased()
        return ["mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "mts", "m2ts", "mpg", "mpeg", "flv", "wmv", "3gp",
                "ogv", "gif", "y4m"].contains(ext)
    }

    /// Opens and probes `location`.
    /// - Parameters:
    ///   - decoderThreads: threads FFmpeg's decoder may use (0: as many as it likes).
    ///   - timeout: for streams and cameras, how long opening or one read may block before it fails.
    /// - Throws: `YOLOError` naming the source: missing file, no video stream, no decoder, device busy, no
    ///   `yolo-video` helper, ...
    public init(_ location: String, decoderThreads: Int = 1, timeout: Double = 15) throws {
        self.location = location
        let kind: Kind = location.hasPrefix("/dev/") ? .camera : location.contains("://") && !location.hasPrefix("file://") ? .stream : .file
        self.kind = kind
        if kind == .file && !FileManager.default.fileExists(atPath: location) { throw YOLOError.fileNotFound(path: location) }
        let timeoutValue = timeout.isFinite && timeout > 0 ? timeout : 15
        let tool = try VideoToolProcess(["decode", "--kind", kind.rawValue, "--threads", String(max(decoderThreads, 0)),
                                     "--timeout", String(timeoutValue), "--", location], subject: location)
        self.tool = tool
        let connection = tool.connection
        do {
            let tag = try connection.u8()
            if tag == VideoToolWire.error { throw tool.error(subject: location) }
            guard tag == VideoToolWire.header else { throw VideoToolWire.Malformed("a record \(tag) instead of the header") }
            let version = try connection.u32()
            guard version == VideoToolWire.version else { throw VideoToolWire.Malformed("protocol version \(version), not \(VideoToolWire.version)") }
            let (w, h) = try connection.size()
            let rotation = Int(try connection.i32())
            guard [0, 90, 180, 270].contains(rotation) else { throw VideoToolWire.Malformed("a rotation of \(rotation)°") }
            self.rotation = rotation
            (width, height) = rotation % 180 == 0 ? (w, h) : (h, w)
            let rate = try connection.f64(), declared = try connection.i64(), duration = try connection.f64()
            frameRate = rate.isNaN ? nil : rate
            declaredFrameCount = declared >= 0 ? Int(declared) : nil
            self.duration = duration.isNaN ? nil : duration
            codecName = try connection.string()
        } catch let error as YOLOError {
            tool.stop()
            throw error
        } catch {
            throw tool.broken(subject: location, error)
        }
    }

    deinit { tool.stop() }

    /// The index the next decoded frame will have.
    var nextIndex: Int { reading.withLock { _ in decodedCount } }

    /// Makes a blocked read (a stalled network stream, a camera) return at once, and every later
    /// `nextFrame()` end; safe from any thread.
    public func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        tool.terminate()
    }

    /// Ends the helper as a crash would (the tests' check of what the reader then sees).
    func killHelperForTesting() { tool.signal(SIGKILL) }

    /// Decodes the next frame; nil at the end of the stream.
    /// - Parameter convert: false skips the conversion to RGB (for frames a policy skips): `image` is then
    ///   a 1×1 placeholder.
    /// - Throws: `YOLOError` when the stream breaks or a file ends before the frames it declares.
    public func nextFrame(convert: Bool = true) throws -> VideoFrame? {
        try reading.withLock { _ in try decodeNext(convert: convert) }
    }

    /// `nextFrame()`'s body; the caller holds `reading`.
    private func decodeNext(convert: Bool) throws -> VideoFrame? {
        guard !finished else { return nil }
        if cancelled.load(ordering: .sequentiallyConsistent) || !tool.isOpen { return end() }
        let connection = tool.connection
        do {
            var request = WireMessage(VideoToolWire.next)
            request.u8(convert ? 1 : 0)
            try connection.send(request)
            let tag = try connection.u8()
            if tag == VideoToolWire.end { return end() }
            if tag == VideoToolWire.error { throw tool.error(subject: location) }
            guard tag == VideoToolWire.frame else { throw VideoToolWire.Malformed("a record \(tag) instead of a frame") }
            let index = Int(try connection.i64()), time = try connection.f64()
            let (w, h) = try connection.size()
            let converted = try connection.u8() != 0
            guard index == decodedCount else { throw VideoToolWire.Malformed("frame \(index) where \(decodedCount) was due") }
            decodedCount += 1
            guard converted else {
                return VideoFrame(index: index, time: time, image: Image(width: 1, height: 1, pixels: [0, 0, 0]), dropped: 0,
                                  arrival: .now)
            }
            let pixels = try connection.pixels(width: w, height: h)
            let image = Image(width: w, height: h, pixels: pixels).rotated(clockwise: rotation)
            return VideoFrame(index: index, time: time, image: image, dropped: 0, arrival: .now)
        } catch let error as YOLOError {
            throw error
        } catch {
            // A cancelled source's helper was ended on purpose: the frames simply stop.
            if cancelled.load(ordering: .sequentiallyConsistent) { return end() }
            let failure = tool.broken(subject: location, error)
            _ = end()
            throw failure
        }
    }

    /// No more frames: the helper is ended and reaped.
    private func end() -> VideoFrame? {
        finished = true
        tool.stop()
        return nil
    }

    /// The decoded frames on a decoding thread of their own; see `FramePolicy`. Each call starts a new
    /// pass that continues where the source is; use one at a time.
    /// - Parameter realtime: for a file, deliver frames at the pace of their timestamps, as a live source would.
    public func frames(policy: FramePolicy? = nil, realtime: Bool = false) -> VideoFrames {
        VideoFrames(source: self, policy: policy ?? defaultPolicy, realtime: realtime)
    }
}
