import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct LUTTypeTests {
    /// Packing then expanding any range of codes gives back `scale · table[code]` for each code,
    /// at every start offset (group-aligned or not) and length, for every type.
    @Test(arguments: LUTType.allCases)
    func packThenExpandRoundTrips(type: LUTType) {
        var random = SeededRandom(seed: UInt64(type.bits))
        let codes = (0..<103).map { _ in UInt8(random.next() % UInt64(type.tableSize)) }
        let packed = type.traits.pack(codes)
        #expect(packed.count == type.packedByteCount(codes: codes.count))
        let table = (0..<type.tableSize).map { Float($0) * 0.5 - 3 }
        let scale: Float = 1.5
        var output = [Float](repeating: .nan, count: codes.count)
        for first in 0..<9 {
            for count in [0, 1, 2, 3, 4, 5, 7, 8, 31, codes.count - first] {
                output.withUnsafeMutableBufferPointer { out in
                    packed.withUnsafeBufferPointer { bytes in
                        table.withUnsafeBufferPointer { t in
                            type.traits.expand(bytes.baseAddress!, first, count, t.baseAddress!, scale, out.baseAddress!)
                        }
                    }
                }
                for i in 0..<count {
                    #expect(output[i] == scale * table[Int(codes[first + i])], "\(type) first \(first) count \(count) at \(i)")
                }
            }
        }
        packed.withUnsafeBufferPointer { bytes in
            #expect((0..<codes.count).map { type.traits.code(bytes.baseAddress!, at: $0) } == codes)
        }
    }

    @Test func packingIsTheDocumentedBitStream() {
        // 4-bit: low nibble first. 6-bit: c0 | c1 << 6 | c2 << 12 | c3 << 18, little-endian.
        #expect(LUTType.lut4.traits.pack([0x1, 0xF, 0x3]) == [0xF1, 0x03])
        let codes: [UInt8] = [1, 2, 3, 63]
        let word = 1 | 2 << 6 | 3 << 12 | 63 << 18
        #expect(LUTType.lut6.traits.pack(codes) == [UInt8(word & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word >> 16)])
        #expect(LUTType.lut8.traits.pack([7, 200]) == [7, 200])
        #expect(LUTType.lut6.packedByteCount(codes: 5) == 4)
    }

    @Test func namesParse() {
        #expect(LUTType(name: "lut6") == .lut6)
        #expect(LUTType(name: "lut5") == nil)
        #expect(LUTGranularity(name: "per-layer") == .perLayer)
    }
}
