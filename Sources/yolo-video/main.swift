// yolo-video: the FFmpeg helper of the YOLOVideo library. It is the only program of SwiftYOLO that links
// FFmpeg (Debian's FFmpeg libraries are built under the GPL, version 2 or later), so the `yolo` tool and apps
// using YOLOVideo link no GPL library; they run this program and exchange frames with it over its standard
// input and output (Sources/YOLOVideoProtocol describes the records). It is meant to be run by YOLOVideo,
// not by hand; a binary of it is distributed under the GPL's terms (docs/THIRD_PARTY.md).
import Glibc
import YOLOVideoProtocol

let usage = """
    usage: yolo-video decode --kind file|stream|camera --threads N --timeout SECONDS LOCATION
           yolo-video encode --width W --height H --frame-rate R --name NAME OUTPUT
    The FFmpeg helper of SwiftYOLO's YOLOVideo library, which runs it and talks to it over standard input and
    output (records described in Sources/YOLOVideoProtocol/VideoToolProtocol.swift).
    It links FFmpeg, GPL-2.0-or-later as Debian builds it: this program is distributed under the GPL's terms
    (GPL-3.0 or later for the combination with SwiftYOLO's Apache-2.0 code; docs/THIRD_PARTY.md).
    """

func fail(_ message: String) -> Never {
    let line = Array("yolo-video: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

/// `--name value` options and one positional argument.
func parse(_ arguments: ArraySlice<String>, options names: Set<String>) -> (options: [String: String], positional: String) {
    var options: [String: String] = [:], positional: String?
    var rest = arguments
    while let argument = rest.popFirst() {
        if argument == "--" {
            guard rest.count == 1, positional == nil else { fail("expected one location after --\n\(usage)") }
            positional = rest.popFirst()
        } else if argument.hasPrefix("--"), names.contains(String(argument.dropFirst(2))) {
            guard let value = rest.popFirst() else { fail("\(argument) needs a value\n\(usage)") }
            options[String(argument.dropFirst(2))] = value
        } else if positional == nil && !argument.hasPrefix("--") {
            positional = argument
        } else {
            fail("unexpected argument \(argument)\n\(usage)")
        }
    }
    guard let positional else { fail("missing the location\n\(usage)") }
    for name in names where options[name] == nil { fail("missing --\(name)\n\(usage)") }
    return (options, positional)
}

func number(_ text: String?, _ name: String) -> Double {
    guard let text, let value = Double(text), value.isFinite else { fail("--\(name) takes a number") }
    return value
}

let output = WireConnection(descriptor: 1)
let input = WireConnection(descriptor: 0)

/// An error record.
func record(_ error: ToolError) -> WireMessage {
    var message = WireMessage(VideoToolWire.error)
    message.u8(error.kind.rawValue)
    message.string(error.message)
    return message
}

/// Sends an error record and exits.
func report(_ error: ToolError) -> Never {
    try? output.send(record(error))
    exit(1)
}

/// Decodes frames as the client asks for them, until the stream ends, fails, or the client goes.
func decode(_ arguments: ArraySlice<String>) -> Never {
    let (options, location) = parse(arguments, options: ["kind", "threads", "timeout"])
    guard let kind = Decoder.Kind(rawValue: options["kind"]!) else { fail("--kind takes file, stream or camera") }
    let decoder: Decoder
    do {
        decoder = try Decoder(location, kind: kind, decoderThreads: Int(number(options["threads"], "threads")),
                              timeout: number(options["timeout"], "timeout"))
    } catch {
        report(error)
    }
    var header = WireMessage(VideoToolWire.header)
    header.u32(VideoToolWire.version)
    header.i32(Int32(decoder.width))
    header.i32(Int32(decoder.height))
    header.i32(Int32(decoder.rotation))
    header.f64(decoder.frameRate ?? .nan)
    header.i64(Int64(decoder.declaredFrameCount ?? -1))
    header.f64(decoder.duration ?? .nan)
    header.string(decoder.codecName)
    do {
        try output.send(header)
        while true {
            guard try input.u8() == VideoToolWire.next else { fail("expected a frame request") }
            let convert = try input.u8() != 0
            let decoded: Decoder.Decoded?
            do {
                decoded = try decoder.next(convert: convert)
            } catch {
                // As an in-process decoder would: the error for this request; the next request reads on (a file
                // found truncated has ended, a broken read may be retried).
                try output.send(record(error))
                continue
            }
            guard let decoded else {
                try output.send(WireMessage(VideoToolWire.end))
                continue
            }
            var record = WireMessage(VideoToolWire.frame)
            record.i64(Int64(decoded.index))
            record.f64(decoded.time)
            record.i32(Int32(decoded.width))
            record.i32(Int32(decoded.height))
            record.u8(decoded.pixels == nil ? 0 : 1)
            try output.send(record)
            if let pixels = decoded.pixels { try output.send(pixels) }
        }
    } catch {
        exit(0)  // the client closed the connection
    }
}

/// Encodes the frames the client sends into OUTPUT.
func encode(_ arguments: ArraySlice<String>) -> Never {
    let (options, file) = parse(arguments, options: ["width", "height", "frame-rate", "name"])
    let encoder: Encoder
    do {
        encoder = try Encoder(file: file, name: options["name"]!, width: Int(number(options["width"], "width")),
                              height: Int(number(options["height"], "height")), frameRate: number(options["frame-rate"], "frame-rate"))
    } catch {
        report(error)
    }
    var header = WireMessage(VideoToolWire.header)
    header.u32(VideoToolWire.version)
    header.string(encoder.codecName)
    do {
        try output.send(header)
        while true {
            let tag = try input.u8()
            if tag == VideoToolWire.done {
                do { try encoder.finish() } catch { report(error) }
                try output.send(WireMessage(VideoToolWire.ok))
                exit(0)
            }
            guard tag == VideoToolWire.frame else { fail("expected a frame or the end") }
            let time = try input.f64()
            let (width, height) = try input.size()
            let pixels = try input.pixels(width: width, height: height)
            let failure = pixels.withUnsafeBytes { bytes -> ToolError? in
                do {
                    try encoder.write(bytes, imageWidth: width, imageHeight: height, time: time)
                    return nil
                } catch let error as ToolError {
                    return error
                } catch {
                    return ToolError.unreadable("\(error)")
                }
            }
            if let failure { report(failure) }
            try output.send(WireMessage(VideoToolWire.ok))
        }
    } catch {
        exit(1)  // the client went away before the end: the unfinished file is the client's to delete
    }
}

signal(SIGPIPE, SIG_IGN)
let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "decode": decode(arguments.dropFirst())
case "encode": encode(arguments.dropFirst())
case "--help", "-h": print(usage); exit(0)
default: fail("expected decode or encode\n\(usage)")
}
