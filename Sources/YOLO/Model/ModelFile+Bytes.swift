import Foundation

// MARK: - Little-endian writing

/// Appends little-endian fields to a byte array (model-file writer).
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { append(value.littleEndian) }
    mutating func u32(_ value: UInt32) { append(value.littleEndian) }
    mutating func u64(_ value: UInt64) { append(value.littleEndian) }
    mutating func i32(_ value: Int) {
        precondition(value >= Int(Int32.min) && value <= Int(Int32.max), "ByteWriter: \(value) does not fit in int32")
        append(Int32(value).littleEndian)
    }
    mutating func count(_ value: Int) {
        precondition(value >= 0 && value <= Int(UInt32.max), "ByteWriter: count \(value) does not fit in uint32")
        u32(UInt32(value))
    }
    mutating func f32(_ value: Float) { u32(value.bitPattern) }
    mutating func string(_ text: String) {
        let utf8 = Array(text.utf8)
        count(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }

    /// Appends zero bytes until the length is a multiple of `alignment`.
    mutating func pad(to alignment: Int) {
        let extra = (alignment - bytes.count % alignment) % alignment
        bytes.append(contentsOf: repeatElement(0, count: extra))
    }
}

// MARK: - Bounds-checked little-endian reading

/// Reads little-endian fields from a byte range, throwing `YOLOError.invalidFile` instead of
/// reading past the end. Every count is checked against the bytes left before anything is allocated.
struct ByteReader {
    let base: UnsafeRawPointer
    let end: Int
    private(set) var offset: Int
    let path: String
    /// What is being read, for error messages (e.g. `network description`).
    var context: String

    init(base: UnsafeRawPointer, range: Range<Int>, path: String, context: String) {
        self.base = base
        self.offset = range.lowerBound
        self.end = range.upperBound
        self.path = path
        self.context = context
    }

    var remaining: Int { end - offset }

    func failure(_ message: String) -> YOLOError {
        .invalidFile(path: path, message: "\(context): \(message)")
    }

    private mutating func take<T: FixedWidthInteger>(_: T.Type, _ what: String) throws -> T {
        guard remaining >= MemoryLayout<T>.size else {
            throw failure("truncated: \(what) at byte \(offset) needs \(MemoryLayout<T>.size) bytes, \(max(remaining, 0)) left")
        }
        let value = T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += MemoryLayout<T>.size
        return value
    }

    mutating func u8(_ what: String) throws -> UInt8 { try take(UInt8.self, what) }
    mutating func u16(_ what: String) throws -> UInt16 { try take(UInt16.self, what) }
    mutating func u32(_ what: String) throws -> UInt32 { try take(UInt32.self, what) }
    mutating func u64(_ what: String) throws -> UInt64 { try take(UInt64.self, what) }
    mutating func i32(_ what: String) throws -> Int { Int(try take(Int32.self, what)) }
    mutating func f32(_ what: String) throws -> Float { Float(bitPattern: try take(UInt32.self, what)) }

    /// An int32 that must lie in `range`.
    mutating func int(_ what: String, in range: ClosedRange<Int>) throws -> Int {
        let value = try i32(what)
        guard range.contains(value) else {
            throw failure("\(what) is \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A finite float32.
    mutating func finite(_ what: String) throws -> Float {
        let value = try f32(what)
        guard value.isFinite else { throw failure("\(what) is not a finite number") }
        return value
    }

    /// A uint32 element count whose elements (`elementSize` bytes each at least) fit in what is left.
    mutating func count(_ what: String, elementSize: Int) throws -> Int {
        let value = Int(try u32(what))
        guard value <= remaining / max(elementSize, 1) else {
            throw failure("\(what) is \(value), but only \(remaining) bytes are left")
        }
        return value
    }

    /// A length-prefixed UTF-8 string.
    mutating func string(_ what: String) throws -> String {
        let length = try count("\(what) length", elementSize: 1)
        let bytes = UnsafeRawBufferPointer(start: base + offset, count: length)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw failure("\(what) is not valid UTF-8")
        }
        offset += length
        return text
    }
}
