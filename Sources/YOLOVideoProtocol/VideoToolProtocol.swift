import Glibc

// The wire format between YOLOVideo (the client) and the `yolo-video` helper, which alone links FFmpeg.
//
// The client starts the helper with a Unix stream socket as its standard input and output (a socket, not a
// pipe, so a client whose helper died gets EPIPE from `send(…, MSG_NOSIGNAL)` instead of SIGPIPE) and its own
// standard error. Every number is little-endian; a record starts with one tag byte; a string is a u32 byte
// count and UTF-8 bytes. Protocol version 1.
//
// Decoding: `yolo-video decode --kind file|stream|camera --threads N --timeout SECONDS LOCATION`.
//   helper → 'H' u32 version, i32 width, i32 height (as stored), i32 clockwise rotation (0/90/180/270),
//            f64 frame rate (NaN: none), i64 declared frame count (−1: none), f64 duration (NaN: none),
//            string decoder name                                                      — or an error record.
//   then, for each frame the client wants:
//   client → 'N' u8 convert (1: RGB pixels wanted; 0: decode only, for frames a stride policy skips)
//   helper → 'F' i64 index, f64 presentation time (s), i32 width, i32 height, u8 converted,
//            then width × height × 3 bytes of packed RGB24 (top row first) when converted
//            — or 'E' (the end of the stream) — or an error record (the helper then answers the next request
//            as its decoder does after that error: the end for a truncated file, another read for a broken one).
//
// Encoding: `yolo-video encode --width W --height H --frame-rate R --name NAME OUTPUT`: writes OUTPUT in the
// container NAME's extension names (the client passes the final path as NAME and a temporary as OUTPUT).
//   helper → 'H' u32 version, string encoder name                                      — or an error record.
//   client → 'F' f64 time (s), i32 width, i32 height, then width × height × 3 bytes of packed RGB24
//   helper → 'K' (written)                                                              — or an error record.
//   client → 'D' (no more frames)
//   helper → 'K' (the file is complete and closed)                                      — or an error record.
//
// Error record: 'X' u8 kind, string message (without the file's name; the client adds it).
//   kinds: 'f' the file is invalid (damaged, not a video), 'u' cannot read or write it (I/O, network, device),
//          'a' an invalid argument (e.g. an unknown container for the output's name).
//
// The helper exits when its input ends (the client closed it or died). Sizes: each side at most
// `VideoToolWire.maximumSide`, checked by the reader before anything is allocated.

/// The `yolo-video` helper's wire format (the comment above this type describes it).
package enum VideoToolWire {
    package static let version: UInt32 = 1
    package static let maximumSide = 16_384
    package static let header: UInt8 = UInt8(ascii: "H")
    package static let next: UInt8 = UInt8(ascii: "N")
    package static let frame: UInt8 = UInt8(ascii: "F")
    package static let end: UInt8 = UInt8(ascii: "E")
    package static let ok: UInt8 = UInt8(ascii: "K")
    package static let done: UInt8 = UInt8(ascii: "D")
    package static let error: UInt8 = UInt8(ascii: "X")

    /// An error record's kind.
    package enum ErrorKind: UInt8, Sendable {
        case invalidFile = 0x66       // 'f'
        case unreadable = 0x75        // 'u'
        case invalidArgument = 0x61   // 'a'
    }

    /// The connection ended or broke (the other side exited or closed it).
    package struct Closed: Error {
        package init() {}
    }
    /// The other side sent something this version does not understand.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }
}

/// Fields appended to a record, then sent in one go.
package struct WireMessage {
    package private(set) var bytes: [UInt8]

    package init(_ tag: UInt8) { bytes = [tag] }

    package mutating func u8(_ value: UInt8) { bytes.append(value) }
    package mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func i32(_ value: Int32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func i64(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func f64(_ value: Double) { i64(Int64(bitPattern: value.bitPattern)) }
    package mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        u32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Blocking reads and writes of whole records on one file descriptor (a socket, or a pipe when the helper
/// is run by hand).
package struct WireConnection: Sendable {
    package let descriptor: Int32

    package init(descriptor: Int32) { self.descriptor = descriptor }

    /// Writes every byte; throws `Closed` when the other side has gone.
    package func send(_ buffer: UnsafeRawBufferPointer) throws {
        guard var pointer = buffer.baseAddress else { return }
        var left = buffer.count
        while left > 0 {
            var written = Glibc.send(descriptor, pointer, left, Int32(MSG_NOSIGNAL))
            if written < 0 && errno == ENOTSOCK { written = Glibc.write(descriptor, pointer, left) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw VideoToolWire.Closed() }
            pointer += written
            left -= written
        }
    }

    package func send(_ message: WireMessage) throws {
        try message.bytes.withUnsafeBytes { try send($0) }
    }

    /// Fills `buffer` exactly; throws `Closed` at the end of the input or on an error.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws {
        guard var pointer = buffer.baseAddress else { return }
        var left = buffer.count
        while left > 0 {
            let count = Glibc.read(descriptor, pointer, left)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw VideoToolWire.Closed() }
            pointer += count
            left -= count
        }
    }

    package func u8() throws -> UInt8 {
        var value: UInt8 = 0
        try withUnsafeMutableBytes(of: &value) { try receive(into: $0) }
        return value
    }
    package func u32() throws -> UInt32 {
        var value: UInt32 = 0
        try withUnsafeMutableBytes(of: &value) { try receive(into: $0) }
        return UInt32(littleEndian: value)
    }
    package func i32() throws -> Int32 { Int32(bitPattern: try u32()) }
    package func i64() throws -> Int64 {
        var value: Int64 = 0
        try withUnsafeMutableBytes(of: &value) { try receive(into: $0) }
        return Int64(littleEndian: value)
    }
    package func f64() throws -> Double { Double(bitPattern: UInt64(bitPattern: try i64())) }

    /// A string of at most `limit` bytes.
    package func string(limit: Int = 4096) throws -> String {
        let count = Int(try u32())
        guard count <= limit else { throw VideoToolWire.Malformed("a string of \(count) bytes (at most \(limit))") }
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try receive(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A frame size read from the wire, checked before anything is allocated for it.
    package func size() throws -> (width: Int, height: Int) {
        let width = Int(try i32()), height = Int(try i32())
        guard width > 0, height > 0, width <= VideoToolWire.maximumSide, height <= VideoToolWire.maximumSide else {
            throw VideoToolWire.Malformed("a frame size of \(width)x\(height)")
        }
        return (width, height)
    }

    /// `width × height × 3` bytes of RGB.
    package func pixels(width: Int, height: Int) throws -> [UInt8] {
        let count = width * height * 3
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try receive(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}
