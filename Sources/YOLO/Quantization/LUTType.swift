// MARK: - Quantization types as data

/// A lookup-table (LUT) weight type: each weight is an `n`-bit code, an index into a table of
/// `2ⁿ` float values.
///
/// The behaviour of every type lives in one `LUTTraits` row (`traits`), in the manner of ggml's
/// type-traits table: how many codes pack into how many bytes, how to pack codes (writing a model
/// file), and how to expand packed codes back into floats (loading or running a model).
/// The raw value is the number of bits and is what a model file stores.
public enum LUTType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 8-bit codes, one per byte, 256-entry tables.
    case lut8 = 8
    /// 6-bit codes, four per 3 bytes, 64-entry tables.
    case lut6 = 6
    /// 4-bit codes, two per byte (low nibble first), 16-entry tables.
    case lut4 = 4

    /// The type's row of the traits table.
    @_spi(Engine) public var traits: LUTTraits {
        switch self {
        case .lut8: return LUTTraits.lut8
        case .lut6: return LUTTraits.lut6
        case .lut4: return LUTTraits.lut4
        }
    }

    /// Bits per code.
    public var bits: Int { Int(rawValue) }
    /// Entries in one table: `2^bits`.
    public var tableSize: Int { 1 << bits }
    /// `lut8`, `lut6`, `lut4`.
    public var description: String { "lut\(bits)" }

    /// Parses `lut8`, `lut6` or `lut4`.
    @_spi(Engine) public init?(name: String) {
        guard let type = LUTType.allCases.first(where: { $0.description == name }) else { return nil }
        self = type
    }

    /// Bytes needed for `count` tightly packed codes (the last group may be partial).
    func packedByteCount(codes count: Int) -> Int {
        (count * bits + 7) / 8
    }
}

/// How one `LUTType` packs and expands its codes.
///
/// Codes form one little-endian bit stream: code `i` occupies bits `[i·bits, (i+1)·bits)` of the
/// stream, bit 0 being the lowest bit of byte 0. So 4-bit codes go low nibble first, and four 6-bit
/// codes fill 3 bytes as `c0 | c1 << 6 | c2 << 12 | c3 << 18`.
@_spi(Engine) public struct LUTTraits: Sendable {
    /// Bits per code.
    public let bits: Int
    /// Codes in one packing group, which starts on a byte boundary.
    public let codesPerGroup: Int
    /// Bytes in one packing group.
    public let bytesPerGroup: Int
    /// Expands `count` codes starting at code index `first` of the stream `packed`, mapping each
    /// through `table` (scaled by `scale`), into `output`. `ŵ = scale · table[code]` in float32.
    public let expand: @Sendable (_ packed: UnsafePointer<UInt8>, _ first: Int, _ count: Int,
                                  _ table: UnsafePointer<Float>, _ scale: Float, _ output: UnsafeMutablePointer<Float>) -> Void

    static let lut8 = LUTTraits(bits: 8, codesPerGroup: 1, bytesPerGroup: 1) { packed, first, count, table, scale, output in
        let source = packed + first
        for i in 0..<count { output[i] = scale * table[Int(source[i])] }
    }

    static let lut4 = LUTTraits(bits: 4, codesPerGroup: 2, bytesPerGroup: 1) { packed, first, count, table, scale, output in
        var i = 0
        if first & 1 == 1, count > 0 {
            output[0] = scale * table[Int(packed[first >> 1] >> 4)]
            i = 1
        }
        var byte = packed + ((first + i) >> 1)
        while i + 1 < count {
            let b = byte.pointee
            output[i] = scale * table[Int(b & 0x0F)]
            output[i + 1] = scale * table[Int(b >> 4)]
            byte += 1
            i += 2
        }
        if i < count { output[i] = scale * table[Int(byte.pointee & 0x0F)] }
    }

    static let lut6 = LUTTraits(bits: 6, codesPerGroup: 4, bytesPerGroup: 3) { packed, first, count, table, scale, output in
        var i = 0
        // Leading codes up to a group boundary, then whole groups, then the tail.
        while i < count, (first + i) & 3 != 0 {
            output[i] = scale * table[Int(LUTTraits.code6(packed, first + i))]
            i += 1
        }
        var group = packed + (first + i) / 4 * 3
        while i + 3 < count {
            let word = UInt32(group[0]) | UInt32(group[1]) << 8 | UInt32(group[2]) << 16
            output[i] = scale * table[Int(word & 63)]
            output[i + 1] = scale * table[Int((word >> 6) & 63)]
            output[i + 2] = scale * table[Int((word >> 12) & 63)]
            output[i + 3] = scale * table[Int(word >> 18)]
            group += 3
            i += 4
        }
        while i < count {
            output[i] = scale * table[Int(LUTTraits.code6(packed, first + i))]
            i += 1
        }
    }

    /// The 6-bit code at index `index` of a packed stream.
    @inline(__always)
    static func code6(_ packed: UnsafePointer<UInt8>, _ index: Int) -> UInt8 {
        let group = packed + index / 4 * 3
        let word = UInt32(group[0]) | UInt32(group[1]) << 8 | UInt32(group[2]) << 16
        return UInt8((word >> UInt32(6 * (index & 3))) & 63)
    }

    // MARK: Packing (writing)

    /// Packs `codes` (each `< 2^bits`) into the tight little-endian bit stream described above.
    @_spi(Engine) public func pack(_ codes: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (codes.count * bits + 7) / 8)
        var bit = 0
        for code in codes {
            precondition(Int(code) < 1 << bits, "LUTTraits.pack: code \(code) does not fit in \(bits) bits")
            let value = UInt32(code) << UInt32(bit & 7)
            bytes[bit >> 3] |= UInt8(truncatingIfNeeded: value)
            if (bit & 7) + bits > 8 { bytes[(bit >> 3) + 1] |= UInt8(truncatingIfNeeded: value >> 8) }
            bit += bits
        }
        return bytes
    }

    /// The code at `index` of a packed stream, for any type (slow; for tests and reports).
    func code(_ packed: UnsafePointer<UInt8>, at index: Int) -> UInt8 {
        let bit = index * bits
        var word = UInt32(packed[bit >> 3])
        if (bit & 7) + bits > 8 { word |= UInt32(packed[(bit >> 3) + 1]) << 8 }
        return UInt8((word >> UInt32(bit & 7)) & UInt32((1 << bits) - 1))
    }
}
