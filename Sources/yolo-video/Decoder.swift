import CAVCodec
import CAVDevice
import CAVFormat
import CAVUtil
import CSwScale
import Glibc
import Synchronization
import YOLOVideoProtocol

/// A video file, a network stream or a V4L2 camera opened and decoded with FFmpeg, one frame at a time, into
/// packed RGB (as stored: the client applies the display rotation). The decoding half of the helper.
final class Decoder {
    enum Kind: String {
        case file, stream, camera
    }

    let kind: Kind
    /// Size as stored (before the display rotation).
    let width: Int
    let height: Int
    /// Clockwise rotation a player applies (0, 90, 180 or 270), from the stream's display matrix.
    let rotation: Int
    let frameRate: Double?
    let declaredFrameCount: Int?
    let duration: Double?
    let codecName: String

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let startTime: Int64
    private let converter = PixelConverter()
    private let interrupt: InterruptState
    private var decodedCount = 0
    private var flushing = false
    private var finished = false

    /// Opens and probes `location`.
    /// - Parameters:
    ///   - decoderThreads: threads FFmpeg's decoder may use (0: as many as it likes).
    ///   - timeout: for streams and cameras, how long opening or one read may block before it fails.
    init(_ location: String, kind: Kind, decoderThreads: Int, timeout: Double) throws(ToolError) {
        FFmpeg.configure()
        self.kind = kind
        interrupt = InterruptState(timeout: kind == .file ? nil : timeout)

        format = avformat_alloc_context()
        guard format != nil else { throw .invalidFile("out of memory") }
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
            throw Decoder.openError(kind: kind, code: opened)
        }
        interrupt.arm()
        if avformat_find_stream_info(format, nil) < 0 {
            avformat_close_input(&format)
            throw .invalidFile("cannot read the stream information (not a video, or damaged)")
        }
        var codec: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        guard best >= 0, let codec, let stream = format!.pointee.streams[Int(best)] else {
            avformat_close_input(&format)
            throw .invalidFile(best == FFmpeg.decoderNotFound ? "no decoder for its video stream in this FFmpeg build" : "no video stream")
        }
        streamIndex = best
        timeBase = stream.pointee.time_base
        startTime = stream.pointee.start_time
        codecName = String(cString: codec.pointee.name)
        decoder = avcodec_alloc_context3(codec)
        guard let decoder, avcodec_parameters_to_context(decoder, stream.pointee.codecpar) >= 0 else {
            avformat_close_input(&format)
            throw .invalidFile("cannot set up the \(codecName) decoder")
        }
        decoder.pointee.thread_count = Int32(max(decoderThreads, 0))
        let openedCodec = avcodec_open2(decoder, codec, nil)
        let (w, h) = (Int(stream.pointee.codecpar.pointee.width), Int(stream.pointee.codecpar.pointee.height))
        guard openedCodec >= 0, w > 0, h > 0, w <= VideoToolWire.maximumSide, h <= VideoToolWire.maximumSide else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&format)
            throw .invalidFile(openedCodec < 0 ? "cannot open the \(codecName) decoder: \(FFmpeg.message(openedCodec))"
                                               : "unusable frame size \(w)x\(h)")
        }
        rotation = Decoder.clockwiseRotation(stream)
        (width, height) = (w, h)
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

    /// One decoded frame: its index, presentation time, stored size and (when converted) RGB pixels in
    /// `converter`'s buffer, valid until the next call.
    struct Decoded {
        let index: Int
        let time: Double
        let width: Int
        let height: Int
        let pixels: UnsafeRawBufferPointer?
    }

    /// Decodes the next frame; nil at the end of the stream.
    /// - Parameter convert: false skips the conversion to RGB (for frames a policy skips).
    /// - Throws: when the stream breaks or a file ends before the frames it declares.
    func next(convert: Bool) throws(ToolError) -> Decoded? {
        guard !finished, let frame, let decoder, let packet else { return nil }
        while true {
            let received = avcodec_receive_frame(decoder, frame)
            if received >= 0 {
                defer { av_frame_unref(frame) }
                return try decoded(frame, convert: convert)
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
                throw streamError(interrupt.timedOut ? "no data for \(Int(interrupt.timeout ?? 0)) s" : "read failed: \(FFmpeg.message(read))")
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(decoder, packet)
            // Damaged data in one packet: skip it, as players do; the next keyframe recovers.
            if sent < 0 && sent != FFmpeg.again && sent != FFmpeg.invalidData { throw streamError("cannot decode: \(FFmpeg.message(sent))") }
        }
    }

    private func decoded(_ frame: UnsafeMutablePointer<AVFrame>, convert: Bool) throws(ToolError) -> Decoded {
        let index = decodedCount
        decodedCount += 1
        var stamp = frame.pointee.best_effort_timestamp
        if stamp == FFmpeg.noTimestamp { stamp = frame.pointee.pts }
        let start = startTime == FFmpeg.noTimestamp ? 0 : startTime
        let time = stamp == FFmpeg.noTimestamp ? Double(index) / (frameRate ?? 25) : (FFmpeg.seconds(stamp - start, timeBase) ?? 0)
        guard convert else { return Decoded(index: index, time: time, width: 1, height: 1, pixels: nil) }
        let (w, h) = (Int(frame.pointee.width), Int(frame.pointee.height))
        guard w > 0, h > 0, w <= VideoToolWire.maximumSide, h <= VideoToolWire.maximumSide else {
            throw streamError("frame \(index) has an unusable size \(w)x\(h)")
        }
        guard let pixels = converter.rgb(of: frame) else { throw streamError("frame \(index): cannot convert its pixel format to RGB") }
        return Decoded(index: index, time: time, width: w, height: h, pixels: pixels)
    }

    /// A file that ends before the frames its container declares is damaged (truncated).
    private func checkComplete() throws(ToolError) {
        guard kind == .file, let declared = declaredFrameCount, decodedCount < declared else { return }
        throw .invalidFile("the video ends after \(decodedCount) of its \(declared) frames (truncated or damaged)")
    }

    private func streamError(_ message: String) -> ToolError {
        kind == .file ? .invalidFile(message) : .unreadable(message)
    }

    private static func openError(kind: Kind, code: Int32) -> ToolError {
        let reason = FFmpeg.message(code)
        switch kind {
        case .file:
            return code == FFmpeg.invalidData ? .invalidFile("not a video file FFmpeg can read") : .unreadable(reason)
        case .camera:
            let hint = code == -EBUSY ? " (the camera is in use by another program)" : code == -ENOENT ? " (no such camera)" : ""
            return .unreadable("cannot open the camera: \(reason)\(hint)")
        case .stream:
            return .unreadable("cannot open the stream: \(reason)")
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

/// Read deadlines for FFmpeg's blocking I/O, checked from its interrupt callback. (Cancelling is the
/// client's: it ends the helper.)
final class InterruptState: Sendable {
    let timeout: Double?
    /// Nanoseconds (monotonic) after which the current read fails; 0 for none.
    private let deadline = Atomic<UInt64>(0)
    private let expired = Atomic<Bool>(false)

    init(timeout: Double?) { self.timeout = timeout }

    var timedOut: Bool { expired.load(ordering: .relaxed) }

    /// Starts the deadline for the next blocking operation.
    func arm() {
        guard let timeout else { return }
        deadline.store(InterruptState.now() + UInt64(timeout * 1e9), ordering: .relaxed)
    }

    var shouldInterrupt: Bool {
        let limit = deadline.load(ordering: .relaxed)
        if limit != 0 && InterruptState.now() > limit {
            expired.store(true, ordering: .relaxed)
            return true
        }
        return false
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
