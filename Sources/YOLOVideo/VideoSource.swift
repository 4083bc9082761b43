import CAVCodec
import CAVDevice
import CAVFormat
import CAVUtil
import Foundation
import Synchronization
@_spi(Engine) import YOLO

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

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startTime: Int64
    private let converter = PixelConverter()
    private let interrupt: InterruptState
    // The decoder's state below, and every FFmpeg call on it, belong to whichever thread holds `reading`:
    // the caller of `nextFrame()` or a `frames()` pass's decoding thread. After a `break` out of a pass that
    // thread finishes its current call in the background; the lock makes whatever reads the source next
    // wait for it instead of racing it (ThreadSanitizer reported that race on `decodedCount`).
    private let reading = Locked(())
    private var decodedCount = 0
    private var flushing = false
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
    /// - Throws: `YOLOError` naming the source: missing file, no video stream, no decoder, device busy, ...
    public init(_ location: String, decoderThreads: Int = 1, timeout: Double = 15) throws {
        FFmpeg.configure
        self.location = location
        let kind: Kind = location.hasPrefix("/dev/") ? .camera : location.contains("://") && !location.hasPrefix("file://") ? .stream : .file
        self.kind = kind
        if kind == .file && !FileManager.default.fileExists(atPath: location) { throw YOLOError.fileNotFound(path: location) }
        interrupt = InterruptState(timeout: kind == .file ? nil : timeout)

        format = avformat_alloc_context()
        guard format != nil else { throw YOLOError.invalidFile(path: location, message: "out of memory") }
        format!.pointee.interrupt_callback = AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<InterruptState>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
        }, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        var inputFormat: UnsafePointer<AVInputFormat>?
        if kind == .camera {
            avdevice_register_all()
            inputFormat = av_find_input_format("video4linux2")
        } else if kind == .stream {
            av_dict_set(&options, "rw_timeout", String(Int(timeout * 1_000_000)), 0)
            if location.hasPrefix("rtsp") { av_dict_set(&options, "rtsp_transport", "tcp", 0) }
        }
        interrupt.arm()
        let opened = avformat_open_input(&format, location, inputFormat, &options)
        guard opened >= 0 else {
            format = nil  // freed by avformat_open_input on failure
            throw VideoSource.openError(location, kind: kind, code: opened)
        }
        interrupt.arm()
        if avformat_find_stream_info(format, nil) < 0 {
            avformat_close_input(&format)
            throw YOLOError.invalidFile(path: location, message: "cannot read the stream information (not a video, or damaged)")
        }
        var codec: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        guard best >= 0, let codec, let stream = format!.pointee.streams[Int(best)] else {
            avformat_close_input(&format)
            throw YOLOError.invalidFile(path: location, message: best == FFmpeg.decoderNotFound
                                        ? "no decoder for its video stream in this FFmpeg build" : "no video stream")
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        startTime = stream.pointee.start_time
        codecName = String(cString: codec.pointee.name)
        decoder = avcodec_alloc_context3(codec)
        guard let decoder, avcodec_parameters_to_context(decoder, stream.pointee.codecpar) >= 0 else {
            avformat_close_input(&format)
            throw YOLOError.invalidFile(path: location, message: "cannot set up the \(codecName) decoder")
        }
        decoder.pointee.thread_count = Int32(max(decoderThreads, 0))
        let openedCodec = avcodec_open2(decoder, codec, nil)
        let (w, h) = (Int(stream.pointee.codecpar.pointee.width), Int(stream.pointee.codecpar.pointee.height))
        guard openedCodec >= 0, w > 0, h > 0, w <= 16_384, h <= 16_384 else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&format)
            throw YOLOError.invalidFile(path: location, message: openedCodec < 0
                                        ? "cannot open the \(codecName) decoder: \(FFmpeg.message(openedCodec))"
                                        : "unusable frame size \(w)x\(h)")
        }
        rotation = VideoSource.clockwiseRotation(stream)
        (width, height) = rotation % 180 == 0 ? (w, h) : (h, w)
        let rate = stream.pointee.avg_frame_rate
        frameRate = rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : nil
        declaredFrameCount = stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil
        duration = FFmpeg.seconds(stream.pointee.duration, timeBase)
            ?? FFmpeg.seconds(format!.pointee.duration, AVRational(num: 1, den: Int32(AV_TIME_BASE)))
        frame = av_frame_alloc()
        packet = av_packet_alloc()
    }

    deinit {
        av_packet_free(&packet)
        av_frame_free(&frame)
        avcodec_free_context(&decoder)
        avformat_close_input(&format)
    }

    /// The index the next decoded frame will have.
    var nextIndex: Int { reading.withLock { _ in decodedCount } }

    /// Makes a blocked read (a stalled network stream, a camera) return at once, and every later
    /// `nextFrame()` end; safe from any thread.
    public func cancel() { interrupt.cancel() }

    /// Decodes the next frame; nil at the end of the stream.
    /// - Parameter convert: false skips the conversion to RGB (for frames a policy skips): `image` is then
    ///   a 1×1 placeholder.
    /// - Throws: `YOLOError` when the stream breaks or a file ends before the frames it declares.
    public func nextFrame(convert: Bool = true) throws -> VideoFrame? {
        try reading.withLock { _ in try decodeNext(convert: convert) }
    }

    /// `nextFrame()`'s body; the caller holds `reading`.
    private func decodeNext(convert: Bool) throws -> VideoFrame? {
        guard !finished, let frame, let decoder, let packet else { return nil }
        while true {
            if interrupt.isCancelled { finished = true; return nil }
            let received = avcodec_receive_frame(decoder, frame)
            if received >= 0 {
                defer { av_frame_unref(frame) }
                return try makeFrame(frame, convert: convert)
            }
            if received == FFmpeg.endOfFile {
                finished = true
                try checkComplete()
                return nil
            }
            guard received == FFmpeg.again else { throw streamError("cannot decode a frame: \(FFmpeg.message(received))") }
            if flushing { finished = true; try checkComplete(); return nil }
            interrupt.arm()
            let read = av_read_frame(format, packet)
            if read == FFmpeg.endOfFile {
                flushing = true
                _ = avcodec_send_packet(decoder, nil)
                continue
            }
            guard read >= 0 else {
                if interrupt.isCancelled { finished = true; return nil }
                throw streamError(interrupt.timedOut ? "no data for \(Int(interrupt.timeout ?? 0)) s" : "read failed: \(FFmpeg.message(read))")
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(decoder, packet)
            // Damaged data in one packet: skip it, as players do; the next keyframe recovers.
            if sent < 0 && sent != FFmpeg.again && sent != AVERROR_INVALIDDATA_VALUE { throw streamError("cannot decode: \(FFmpeg.message(sent))") }
        }
    }

    /// The decoded frames on a decoding thread of their own; see `FramePolicy`. Each call starts a new
    /// pass that continues where the source is; use one at a time.
    /// - Parameter realtime: for a file, deliver frames at the pace of their timestamps, as a live source would.
    public func frames(policy: FramePolicy? = nil, realtime: Bool = false) -> VideoFrames {
        VideoFrames(source: self, policy: policy ?? defaultPolicy, realtime: realtime)
    }

    // MARK: Decoding helpers

    private func makeFrame(_ frame: UnsafeMutablePointer<AVFrame>, convert: Bool) throws -> VideoFrame {
        let index = decodedCount
        decodedCount += 1
        var stamp = frame.pointee.best_effort_timestamp
        if stamp == FFmpeg.noTimestamp { stamp = frame.pointee.pts }
        let start = startTime == FFmpeg.noTimestamp ? 0 : startTime
        let time = stamp == FFmpeg.noTimestamp ? Double(index) / (frameRate ?? 25) : (FFmpeg.seconds(stamp - start, timeBase) ?? 0)
        guard convert else {
            return VideoFrame(index: index, time: time, image: Image(width: 1, height: 1, pixels: [0, 0, 0]), dropped: 0,
                              arrival: .now)
        }
        let (w, h) = (Int(frame.pointee.width), Int(frame.pointee.height))
        guard w > 0, h > 0, w <= 16_384, h <= 16_384 else { throw streamError("frame \(index) has an unusable size \(w)x\(h)") }
        let pixels: [UInt8]
        do {
            pixels = try converter.rgb(of: frame)
        } catch {
            throw streamError("frame \(index): cannot convert its pixel format to RGB")
        }
        let image = Image(width: w, height: h, pixels: pixels).rotated(clockwise: rotation)
        return VideoFrame(index: index, time: time, image: image, dropped: 0, arrival: .now)
    }

    /// A file that ends before the frames its container declares is damaged (truncated).
    private func checkComplete() throws {
        guard kind == .file, let declared = declaredFrameCount, decodedCount < declared else { return }
        throw YOLOError.invalidFile(path: location, message: "the video ends after \(decodedCount) of its \(declared) frames (truncated or damaged)")
    }

    private func streamError(_ message: String) -> YOLOError {
        kind == .file ? .invalidFile(path: location, message: message) : .unreadableFile(path: location, reason: message)
    }

    private static func openError(_ location: String, kind: Kind, code: Int32) -> YOLOError {
        let reason = FFmpeg.message(code)
        switch kind {
        case .file:
            return code == AVERROR_INVALIDDATA_VALUE ? .invalidFile(path: location, message: "not a video file FFmpeg can read")
                : .unreadableFile(path: location, reason: reason)
        case .camera:
            let hint = code == -EBUSY ? " (the camera is in use by another program)" : code == -ENOENT ? " (no such camera)" : ""
            return .unreadableFile(path: location, reason: "cannot open the camera: \(reason)\(hint)")
        case .stream:
            return .unreadableFile(path: location, reason: "cannot open the stream: \(reason)")
        }
    }

    /// The clockwise rotation a player applies, from the stream's display matrix (0 when there is none).
    private static func clockwiseRotation(_ stream: UnsafeMutablePointer<AVStream>) -> Int {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else { return 0 }
        let counterClockwise = data.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
        guard counterClockwise.isFinite else { return 0 }
        let degrees = Int((-counterClockwise).rounded())
        let normalized = ((degrees % 360) + 360) % 360
        return (normalized + 45) / 90 % 4 * 90
    }
}

/// `AVERROR_INVALIDDATA` (`-MKTAG('I','N','D','A')`), which Swift cannot import.
let AVERROR_INVALIDDATA_VALUE: Int32 = -0x4144_4E49

extension FFmpeg {
    /// `AVERROR_DECODER_NOT_FOUND` (`-MKTAG(0xF8,'D','E','C')`).
    static let decoderNotFound: Int32 = -0x4345_44F8
}

/// Cancellation and read deadlines for FFmpeg's blocking I/O, checked from its interrupt callback.
final class InterruptState: Sendable {
    let timeout: Double?
    private let cancelled = Atomic<Bool>(false)
    /// Nanoseconds (monotonic) after which the current read fails; 0 for none.
    private let deadline = Atomic<UInt64>(0)
    private let expired = Atomic<Bool>(false)

    init(timeout: Double?) { self.timeout = timeout }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    var timedOut: Bool { expired.load(ordering: .relaxed) }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Starts the deadline for the next blocking operation.
    func arm() {
        guard let timeout else { return }
        deadline.store(DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9), ordering: .relaxed)
    }

    var shouldInterrupt: Bool {
        if isCancelled { return true }
        let limit = deadline.load(ordering: .relaxed)
        if limit != 0 && DispatchTime.now().uptimeNanoseconds > limit {
            expired.store(true, ordering: .relaxed)
            return true
        }
        return false
    }
}
