import CAVCodec
import CAVDevice
import CAVFormat
import CAVUtil
import CSwScale
import YOLOVideoProtocol

/// Writes RGB frames as a video file with FFmpeg (H.264 through libx264 when the build has it, else the
/// container's default codec). The encoding half of the helper; the client picks the (temporary) output file,
/// renames it when the video is finished and deletes it otherwise.
final class Encoder {
    /// The encoded size (even numbers, as 4:2:0 chroma needs; the client rounds).
    let width: Int
    let height: Int
    /// The encoder used, e.g. `libx264`.
    let codecName: String

    private var output: UnsafeMutablePointer<AVFormatContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let converter = PixelConverter()
    private var lastTimestamp = Int64.min
    /// One frame at the nominal rate, in the 90 kHz clock: the duration given to each packet, without which
    /// MP4's edit list ends at the last frame's start and players drop that frame.
    private let frameTicks: Int64
    /// Timestamps in 1/90 000 s (MPEG's clock): fine enough for variable frame rates.
    private static let clock = AVRational(num: 1, den: 90_000)

    /// Opens `file` for writing frames of `width × height` at a nominal `frameRate`, in the container that
    /// `name`'s extension names.
    init(file: String, name: String, width: Int, height: Int, frameRate: Double) throws(ToolError) {
        FFmpeg.configure()
        self.width = width
        self.height = height
        guard width >= 2, height >= 2, width <= VideoToolWire.maximumSide, height <= VideoToolWire.maximumSide,
              width % 2 == 0, height % 2 == 0 else { throw .invalidArgument("cannot write a \(width)x\(height) video") }
        guard let container = av_guess_format(nil, name, nil) else {
            throw .invalidArgument("unknown video format; use a name ending in .mp4, .mkv, .mov or .avi")
        }
        guard avformat_alloc_output_context2(&output, container, nil, file) >= 0, let output else {
            throw .unreadable("cannot set up the video container")
        }
        let codec = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(container.pointee.video_codec)
        guard let codec, let newStream = avformat_new_stream(output, nil), let encoder = avcodec_alloc_context3(codec) else {
            avformat_free_context(output)
            self.output = nil
            throw .unreadable("no video encoder for this format in this FFmpeg build")
        }
        stream = newStream
        self.encoder = encoder
        codecName = String(cString: codec.pointee.name)
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        encoder.pointee.time_base = Encoder.clock
        let rate = frameRate.isFinite && frameRate > 0 ? frameRate : 25
        frameTicks = max(1, Int64((90_000 / rate).rounded()))
        encoder.pointee.framerate = AVRational(num: Int32((rate * 1000).rounded()), den: 1000)
        encoder.pointee.gop_size = Int32(max(1, (rate * 2).rounded()))
        if output.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if codecName == "libx264" {
            av_dict_set(&options, "preset", "veryfast", 0)
            av_dict_set(&options, "crf", "23", 0)
        }
        var status = avcodec_open2(encoder, codec, &options)
        if status >= 0 { status = avcodec_parameters_from_context(stream.pointee.codecpar, encoder) }
        stream.pointee.time_base = Encoder.clock
        if status >= 0 && output.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            status = avio_open(&output.pointee.pb, file, AVIO_FLAG_WRITE)
        }
        if status >= 0 { status = avformat_write_header(output, nil) }
        guard status >= 0 else {
            close()
            throw .unreadable("cannot start writing the video: \(FFmpeg.message(status))")
        }
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let frame else { close(); throw .unreadable("out of memory") }
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        guard av_frame_get_buffer(frame, 0) >= 0 else { close(); throw .unreadable("out of memory") }
    }

    deinit { close() }

    /// Appends the RGB `pixels` (`imageWidth × imageHeight`, resampled if that differs from the video's size)
    /// shown at `time` seconds.
    func write(_ pixels: UnsafeRawBufferPointer, imageWidth: Int, imageHeight: Int, time: Double) throws(ToolError) {
        guard let frame, let encoder else { throw .invalidArgument("the video is already finished") }
        guard av_frame_make_writable(frame) >= 0 else { throw .unreadable("out of memory") }
        guard converter.fill(frame, from: pixels, width: imageWidth, height: imageHeight) else {
            throw .unreadable("cannot convert a \(imageWidth)x\(imageHeight) frame")
        }
        var stamp = Int64((max(time, 0) * 90_000).rounded())
        if stamp <= lastTimestamp { stamp = lastTimestamp + 1 }
        lastTimestamp = stamp
        frame.pointee.pts = stamp
        let sent = avcodec_send_frame(encoder, frame)
        guard sent >= 0 else { throw .unreadable("cannot encode a frame: \(FFmpeg.message(sent))") }
        try drain()
    }

    /// Flushes the encoder, writes the container's index and closes the file.
    func finish() throws(ToolError) {
        guard let encoder, let output else { return }
        _ = avcodec_send_frame(encoder, nil)
        try drain()
        let trailer = av_write_trailer(output)
        guard trailer >= 0 else { throw .unreadable("cannot finish the video: \(FFmpeg.message(trailer))") }
        close()
    }

    /// Writes the packets the encoder has ready.
    private func drain() throws(ToolError) {
        guard let encoder, let packet, let output else { return }
        while true {
            let received = avcodec_receive_packet(encoder, packet)
            if received == FFmpeg.again || received == FFmpeg.endOfFile { return }
            guard received >= 0 else { throw .unreadable("cannot encode: \(FFmpeg.message(received))") }
            if packet.pointee.duration <= 0 { packet.pointee.duration = frameTicks }
            av_packet_rescale_ts(packet, encoder.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let written = av_interleaved_write_frame(output, packet)
            guard written >= 0 else { throw .unreadable("cannot write: \(FFmpeg.message(written))") }
        }
    }

    private func close() {
        av_packet_free(&packet)
        av_frame_free(&frame)
        avcodec_free_context(&encoder)
        if let output {
            if output.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&output.pointee.pb) }
            avformat_free_context(output)
            self.output = nil
        }
    }
}
