// Every FFmpeg module is imported in every file of the helper: FFmpeg's headers are textual parts of several of
// these modules, and Swift finds a declaration only through the module it first read it from, which depends on
// the order files are compiled in.
import CAVCodec
import CAVDevice
import CAVFormat
import CAVUtil
import CSwScale
import Glibc
import YOLOVideoProtocol

/// Constants and helpers for FFmpeg's C API that Swift cannot import (its error codes are macros).
enum FFmpeg {
    /// `AVERROR_EOF`: `-MKTAG('E', 'O', 'F', ' ')`.
    static let endOfFile: Int32 = -0x2046_4F45
    /// `AVERROR(EAGAIN)`: the decoder wants more input (or the encoder more frames) first.
    static let again: Int32 = -EAGAIN
    /// `AVERROR_INVALIDDATA` (`-MKTAG('I','N','D','A')`).
    static let invalidData: Int32 = -0x4144_4E49
    /// `AVERROR_DECODER_NOT_FOUND` (`-MKTAG(0xF8,'D','E','C')`).
    static let decoderNotFound: Int32 = -0x4345_44F8
    /// `AV_NOPTS_VALUE`: no timestamp.
    static let noTimestamp = Int64.min

    /// FFmpeg's text for an error code, e.g. "Invalid data found when processing input".
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Quiet FFmpeg's own logging (it prints to stderr from its threads): errors go back to the client as
    /// error records, and YOLO_FFMPEG_LOG=debug|info|warning shows FFmpeg's messages for troubleshooting.
    static func configure() {
        let levels: [String: Int32] = ["quiet": AV_LOG_QUIET, "error": AV_LOG_ERROR, "warning": AV_LOG_WARNING,
                                       "info": AV_LOG_INFO, "debug": AV_LOG_DEBUG]
        let name = getenv("YOLO_FFMPEG_LOG").map { String(cString: $0) } ?? "quiet"
        av_log_set_level(levels[name] ?? AV_LOG_QUIET)
        avformat_network_init()
    }

    /// Seconds of `value` in `timeBase`, or nil for `AV_NOPTS_VALUE`.
    static func seconds(_ value: Int64, _ timeBase: AVRational) -> Double? {
        guard value != noTimestamp, timeBase.den != 0 else { return nil }
        return Double(value) * Double(timeBase.num) / Double(timeBase.den)
    }
}

/// A failure the helper reports to its client as an error record.
struct ToolError: Error {
    let kind: VideoToolWire.ErrorKind
    let message: String
    static func invalidFile(_ message: String) -> ToolError { ToolError(kind: .invalidFile, message: message) }
    static func unreadable(_ message: String) -> ToolError { ToolError(kind: .unreadable, message: message) }
    static func invalidArgument(_ message: String) -> ToolError { ToolError(kind: .invalidArgument, message: message) }
}
