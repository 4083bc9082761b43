import Foundation
@_spi(Engine) import YOLO
import YOLOVideoProtocol

/// Writes RGB images as a video file (H.264 through libx264 when the FFmpeg build has it, else the
/// container's default codec), atomically: frames go to a hidden temporary file next to `path` that
/// `finish()` renames over it; a writer dropped or failing before that leaves nothing behind. Use it from
/// one task or thread at a time (it may move between them).
///
/// FFmpeg runs in the `yolo-video` helper (see `VideoTool`): the writer starts it, sends it each image and
/// waits for it to be encoded, so `write` reports an encoding error for the image that caused it.
public final class VideoWriter: @unchecked Sendable {
    public let path: String
    /// The encoded size (the first image's, rounded down to even numbers as 4:2:0 chroma needs).
    public let width: Int
    public let height: Int
    /// The encoder used, e.g. `libx264`.
    public let codecName: String

    private let temporary: String
    private let tool: VideoToolProcess
    private var done = false

    /// Opens `path` for writing frames of `width × height` at a nominal `frameRate` (frames carry their own times).
    public init(path: String, width: Int, height: Int, frameRate: Double) throws {
        self.path = path
        self.width = width & ~1
        self.height = height & ~1
        guard self.width >= 2, self.height >= 2, self.width <= VideoToolWire.maximumSide, self.height <= VideoToolWire.maximumSide else {
            throw YOLOError.invalidArgument("\(path): cannot write a \(width)x\(height) video")
        }
        let temporary = FileIO.temporaryPath(for: path)
        self.temporary = temporary
        var failed = true
        defer { if failed { FileIO.discardTemporary(temporary) } }
        let rate = frameRate.isFinite && frameRate > 0 ? frameRate : 25
        let tool = try VideoToolProcess(["encode", "--width", String(self.width), "--height", String(self.height),
                                         "--frame-rate", String(rate), "--name", path, "--", temporary], subject: path)
        self.tool = tool
        do {
            let tag = try tool.connection.u8()
            if tag == VideoToolWire.error { throw tool.error(subject: path) }
            guard tag == VideoToolWire.header else { throw VideoToolWire.Malformed("a record \(tag) instead of the header") }
            let version = try tool.connection.u32()
            guard version == VideoToolWire.version else { throw VideoToolWire.Malformed("protocol version \(version), not \(VideoToolWire.version)") }
            codecName = try tool.connection.string()
        } catch let error as YOLOError {
            tool.stop()
            throw error
        } catch {
            throw tool.broken(subject: path, error)
        }
        failed = false
    }

    deinit {
        if !done { discard() }
    }

    /// Appends `image` shown at `time` seconds (resampled if its size differs from the video's).
    public func write(_ image: Image, time: Double) throws {
        guard !done else { throw YOLOError.invalidArgument("\(path): the video is already finished") }
        guard (1...VideoToolWire.maximumSide).contains(image.width), (1...VideoToolWire.maximumSide).contains(image.height) else {
            throw YOLOError.invalidArgument("\(path): cannot write a \(image.width)x\(image.height) image")
        }
        var record = WireMessage(VideoToolWire.frame)
        record.f64(time)
        record.i32(Int32(image.width))
        record.i32(Int32(image.height))
        try exchange {
            try tool.connection.send(record)
            try image.pixels.withUnsafeBytes { try tool.connection.send($0) }
        }
    }

    /// Flushes the encoder, writes the container's index and renames the file into place.
    public func finish() throws {
        guard !done else { return }
        try exchange { try tool.connection.send(WireMessage(VideoToolWire.done)) }
        tool.stop(kill: false)
        done = true
        try FileIO.commitTemporary(temporary, to: path)
    }

    /// Abandons the video: nothing is left at `path` (nor the temporary).
    public func discard() {
        tool.stop()
        done = true
        FileIO.discardTemporary(temporary)
    }

    /// Sends a request and waits for the helper's answer; on an error, discards the video and throws it.
    private func exchange(_ request: () throws -> Void) throws {
        do {
            try request()
            let tag = try tool.connection.u8()
            if tag == VideoToolWire.ok { return }
            let error = tag == VideoToolWire.error ? tool.error(subject: path)
                : tool.broken(subject: path, VideoToolWire.Malformed("a record \(tag) instead of an acknowledgement"))
            discard()
            throw error
        } catch let error as YOLOError {
            discard()
            throw error
        } catch {
            let failure = tool.broken(subject: path, error)
            discard()
            throw failure
        }
    }
}
