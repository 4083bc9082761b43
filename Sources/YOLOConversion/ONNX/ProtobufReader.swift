/// A reader of the protobuf wire format over bytes in memory: the few pieces the ONNX reader needs.
///
/// Every length is checked against the bytes left before it is used, so a damaged or hostile file ends in
/// `ProtobufError`, never in a read past the end or an allocation sized by the file. Fields are visited in
/// file order; the caller decides which field numbers it knows and skips the rest (`skip`).
struct ProtobufReader {
    /// The wire types (protobuf encoding guide). Groups (3, 4) are obsolete and rejected.
    enum WireType: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
    }

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    /// A reader over `bytes[range]`.
    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    var isAtEnd: Bool { position >= end }

    /// The next field's number and wire type.
    mutating func tag() throws(ProtobufError) -> (field: Int, wire: WireType) {
        let key = try varint()
        let field = key >> 3
        guard field >= 1, field <= 536_870_911 else { throw ProtobufError("field number \(field) out of range") }
        guard let wire = WireType(rawValue: UInt8(key & 7)) else {
            throw ProtobufError("field \(field) has unsupported wire type \(key & 7)")
        }
        return (Int(field), wire)
    }

    /// A base-128 varint (at most 10 bytes).
    mutating func varint() throws(ProtobufError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw ProtobufError("varint runs past the end") }
            let byte = bytes[position]
            position += 1
            guard shift < 64 else { throw ProtobufError("varint longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint as a signed 64-bit value (int64/int32 fields: two's complement).
    mutating func int64() throws(ProtobufError) -> Int64 { Int64(bitPattern: try varint()) }

    mutating func fixed32() throws(ProtobufError) -> UInt32 {
        guard end - position >= 4 else { throw ProtobufError("fixed32 runs past the end") }
        var value: UInt32 = 0
        for k in 0..<4 { value |= UInt32(bytes[position + k]) << (8 * k) }
        position += 4
        return value
    }

    mutating func fixed64() throws(ProtobufError) -> UInt64 {
        guard end - position >= 8 else { throw ProtobufError("fixed64 runs past the end") }
        var value: UInt64 = 0
        for k in 0..<8 { value |= UInt64(bytes[position + k]) << (8 * k) }
        position += 8
        return value
    }

    /// The byte range of a length-delimited field, checked against the bytes left; the reader moves past it.
    mutating func lengthDelimited() throws(ProtobufError) -> Range<Int> {
        let length = try varint()
        guard length <= UInt64(end - position) else {
            throw ProtobufError("a field of \(length) bytes runs past the end (\(end - position) left)")
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    /// A length-delimited field as UTF-8 text (invalid sequences repaired).
    mutating func string() throws(ProtobufError) -> String {
        let range = try lengthDelimited()
        return String(decoding: bytes[range], as: UTF8.self)
    }

    /// Skips a field of wire type `wire`.
    mutating func skip(_ wire: WireType) throws(ProtobufError) {
        switch wire {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .lengthDelimited: _ = try lengthDelimited()
        case .fixed32: _ = try fixed32()
        }
    }

    /// A repeated int64 field, packed (one length-delimited run) or not (one varint); appended to `values`.
    /// `limit` bounds the total count.
    mutating func int64s(_ wire: WireType, into values: inout [Int64], limit: Int) throws(ProtobufError) {
        switch wire {
        case .varint:
            guard values.count < limit else { throw ProtobufError("more than \(limit) integers") }
            values.append(try int64())
        case .lengthDelimited:
            var packed = ProtobufReader(bytes, range: try lengthDelimited())
            while !packed.isAtEnd {
                guard values.count < limit else { throw ProtobufError("more than \(limit) integers") }
                values.append(try packed.int64())
            }
        default:
            throw ProtobufError("an integer list has wire type \(wire.rawValue)")
        }
    }

    /// A repeated float field, packed or not; appended to `values`. `limit` bounds the total count.
    mutating func floats(_ wire: WireType, into values: inout [Float], limit: Int) throws(ProtobufError) {
        switch wire {
        case .fixed32:
            guard values.count < limit else { throw ProtobufError("more than \(limit) floats") }
            values.append(Float(bitPattern: try fixed32()))
        case .lengthDelimited:
            let range = try lengthDelimited()
            guard range.count % 4 == 0 else { throw ProtobufError("a packed float list of \(range.count) bytes") }
            guard range.count / 4 <= limit - values.count else { throw ProtobufError("more than \(limit) floats") }
            var packed = ProtobufReader(bytes, range: range)
            values.reserveCapacity(values.count + range.count / 4)
            while !packed.isAtEnd { values.append(Float(bitPattern: try packed.fixed32())) }
        default:
            throw ProtobufError("a float list has wire type \(wire.rawValue)")
        }
    }
}

/// A malformed protobuf encoding: what was wrong.
struct ProtobufError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
