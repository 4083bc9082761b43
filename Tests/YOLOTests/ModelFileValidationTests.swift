import CZlib
import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion

/// Hostile files whose checksum is right: every declared size, count, offset and enum value is
/// still checked before use. Each case edits one field of a valid file, re-signs it, and expects
/// a one-line `invalidFile` error mentioning `fragment`.
@Suite struct ModelFileValidationTests {
    let model = try! makeQuantizedTestModel()
    var bytes: [UInt8] { [UInt8](ModelFile.encode(model)) }

    /// Byte offsets of the metadata parts.
    var descriptionEnd: Int {
        var writer = ByteWriter()
        writer.description(model.description)
        return ModelFile.headerSize + writer.bytes.count
    }
    var labelsEnd: Int { descriptionEnd + 4 + model.labels.reduce(0) { $0 + 4 + $1.utf8.count } }
    /// The first tensor record (layer 0, float32) and the second (layer 2, lut6).
    var firstRecord: Int { labelsEnd + 4 }
    var secondRecord: Int { firstRecord + ModelFile.tensorRecordSize }

    func expectError(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ edit: (inout [UInt8]) -> Void) {
        var damaged = bytes
        edit(&damaged)
        resign(&damaged)
        let message = loadError(damaged)
        #expect(message?.contains(fragment) == true, "got: \(message ?? "loaded")", sourceLocation: sourceLocation)
    }

    @Test func headerFields() {
        let size = bytes.count
        expectError("truncated: \(size) of") { put(UInt64(size) << 20, at: 16, in: &$0) }
        expectError("header size is 65") { put(UInt32(65), at: 12, in: &$0) }
        expectError("does not lie inside the file") { put(UInt64.max, at: 40, in: &$0) }
        expectError("does not lie inside the file") { put(UInt64(128), at: 32, in: &$0) }
    }

    @Test func descriptionFields() {
        expectError("input size 0x32 is outside 1...8192") { put(Int32(0), at: 72, in: &$0) }
        expectError("layer count is 4294967295, but only") { put(UInt32.max, at: 76, in: &$0) }
        expectError("unknown layer kind 10") { $0[80] = 10 }  // 9 is the attention (1.6)
        expectError("filters 2147483647 is outside 1...65536") { put(Int32.max, at: 85, in: &$0) }
        expectError("unknown activation code 7") { $0[85 + 17] = 7 }
        // Layer 0's size (3) → 30: the weights no longer fit the shapes or the blobs.
        expectError("layer") { put(Int32(30), at: 89, in: &$0) }
    }

    @Test func labelAndTensorCounts() {
        expectError("label count is 4294967295, but only") { put(UInt32.max, at: descriptionEnd, in: &$0) }
        expectError("1 labels for 2 classes") { put(UInt32(1), at: descriptionEnd, in: &$0) }
        expectError("tensor count is 4294967295, but only") { put(UInt32.max, at: labelsEnd, in: &$0) }
        expectError("3 tensors for 4 convolutions") { put(UInt32(3), at: labelsEnd, in: &$0) }
    }

    @Test func tensorRecords() {
        let first = firstRecord, second = secondRecord
        expectError("record names layer 7") { put(UInt32(7), at: first, in: &$0) }
        expectError("unknown storage code 5") { $0[first + 4] = 5 }
        // What a 1.3 reader says about storage 3 (1.2 about 2): the storage byte is checked before any blob reference.
        expectError("unknown storage code 4") { $0[second + 4] = 4 }
        // A LUT record relabelled int8 (storage 3) fails on its fields or blob sizes, never misread.
        expectError("int8") { $0[second + 4] = 3; $0[second + 5] = 6 }
        expectError("unsupported LUT code width 5 bits") { $0[second + 5] = 5 }
        expectError("unknown table granularity code 3") { $0[second + 6] = 3 }
        expectError("reserved byte is 1") { $0[second + 7] = 1 }
        // Blob references: huge length, misaligned offset, offset past the end, inside the metadata.
        expectError("holds 18446744073709551615 bytes") { put(UInt64.max, at: first + 16, in: &$0) }
        expectError("does not lie 64-byte aligned") { put(UInt64(65), at: first + 8, in: &$0) }
        expectError("does not lie 64-byte aligned") { put(UInt64.max - 63, at: first + 8, in: &$0) }
        expectError("does not lie 64-byte aligned") { put(UInt64(64), at: second + 8, in: &$0) }
        expectError("table should be absent") { put(UInt64(64), at: first + 40, in: &$0) }
    }

    // MARK: Deflated codes (storage 2, 1.3)

    /// Layer 2's codes reference (offset u64, length u64) and the code bytes its stream must inflate to.
    var codesReference: Int { secondRecord + 8 }
    var layer2Codes: [UInt8] { model.quantizedConvolutions[2]!.weights.codes.array }

    func u64(_ bytes: [UInt8], at offset: Int) -> Int {
        Int(bytes[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Appends `stream` (64-byte aligned) to the file and makes it the codes blob referenced at `reference`.
    static func replaceCodes(_ bytes: inout [UInt8], at reference: Int, with stream: [UInt8]) {
        let offset = bytes.count
        bytes += stream + [UInt8](repeating: 0, count: (64 - stream.count % 64) % 64)
        put(UInt64(bytes.count), at: 16, in: &bytes)
        put(UInt64(offset), at: reference, in: &bytes)
        put(UInt64(stream.count), at: reference + 8, in: &bytes)
    }

    static func deflated(_ bytes: [UInt8]) -> [UInt8] { bytes.withUnsafeBytes { ZlibStream.deflate($0) } }

    @Test func deflatedCodesMustInflateToExactlyTheCodes() {
        let codes = layer2Codes, reference = codesReference, expected = codes.count
        #expect(bytes[secondRecord + 4] == 2, "layer 2 is stored deflated")
        var moved = bytes
        Self.replaceCodes(&moved, at: reference, with: Self.deflated(codes))
        resign(&moved)
        #expect(loadError(moved) == nil, "the same stream elsewhere loads")
        expectError("tensor of layer 2: deflated codes: the zlib stream inflates to more than the expected \(expected) bytes") {
            Self.replaceCodes(&$0, at: reference, with: Self.deflated(codes + [0]))
        }
        expectError("the zlib stream inflates to \(expected - 1) bytes, expected \(expected)") {
            Self.replaceCodes(&$0, at: reference, with: Self.deflated(Array(codes.dropLast())))
        }
        expectError("3 bytes follow the end of the zlib stream") {
            Self.replaceCodes(&$0, at: reference, with: Self.deflated(codes) + [0, 0x78, 0xDA])
        }
    }

    @Test func damagedDeflatedCodes() {
        let reference = codesReference, offset = u64(bytes, at: reference), length = u64(bytes, at: reference + 8)
        expectError("tensor of layer 2: deflated codes hold 0 bytes") { put(UInt64(0), at: reference + 8, in: &$0) }
        expectError("deflated codes (\(length) bytes at \(offset + 1)) does not lie 64-byte aligned") { put(UInt64(offset + 1), at: reference, in: &$0) }
        expectError("does not lie 64-byte aligned inside the blob area") { put(UInt64(bytes.count), at: reference + 8, in: &$0) }
        // Cut short: the trailer's last byte, or half the stream.
        expectError("the zlib stream is truncated") { put(UInt64(length - 1), at: reference + 8, in: &$0) }
        expectError("the zlib stream is truncated") { put(UInt64(length / 2), at: reference + 8, in: &$0) }
        // A damaged header, a damaged Adler-32 trailer, a damaged byte in the middle.
        expectError("the zlib stream is corrupt (incorrect header check)") { $0[offset] ^= 0x01 }
        expectError("the zlib stream is corrupt (incorrect data check)") { $0[offset + length - 1] ^= 0x01 }
        expectError("tensor of layer 2: deflated codes: the zlib stream") { $0[offset + length / 2] ^= 0x10 }
        // Not even the smallest stream's header.
        expectError("the zlib stream is truncated") { put(UInt64(1), at: reference + 8, in: &$0) }
    }

    /// The layers' streams inflate in parallel after every record was read; with two damaged streams
    /// the error still names the first damaged layer in file order, and a later one alone is named too.
    @Test func theFirstDamagedStreamInFileOrderIsNamed() throws {
        let records = tensorRecordOffsets(model)
        let deflatedRecords = records.filter { bytes[$0 + 4] == 2 }
        try #require(deflatedRecords.count >= 2 && deflatedRecords.first == secondRecord)
        let last = try #require(deflatedRecords.last)
        let lastLayer = Int(bytes[last]) | Int(bytes[last + 1]) << 8
        func damage(_ record: Int, in bytes: inout [UInt8]) {
            let offset = u64(bytes, at: record + 8), length = u64(bytes, at: record + 16)
            bytes[offset + length - 1] ^= 0x01   // the Adler-32 trailer
        }
        for residency in [WeightResidency.codes, .expanded] {
            var both = bytes
            damage(last, in: &both)
            damage(secondRecord, in: &both)
            resign(&both)
            let message = loadError(both, residency: residency)
            #expect(message?.contains("tensor of layer 2: deflated codes: the zlib stream is corrupt") == true, "\(message ?? "loaded")")
            var later = bytes
            damage(last, in: &later)
            resign(&later)
            let laterMessage = loadError(later, residency: residency)
            #expect(laterMessage?.contains("tensor of layer \(lastLayer): deflated codes: the zlib stream is corrupt") == true,
                    "\(laterMessage ?? "loaded")")
        }
    }

    /// A decompression bomb: a valid stream of 100 MB of zeros (about 100 KB) as a 216-byte layer's codes.
    /// Inflation stops at the layer's size: one error, in both residencies, and no 100 MB allocation.
    @Test func decompressionBomb() throws {
        let bomb = zlibStreamOfZeros(100 << 20)
        #expect(bomb.count < 200_000)
        var damaged = bytes
        Self.replaceCodes(&damaged, at: codesReference, with: bomb)
        resign(&damaged)
        for residency in [WeightResidency.codes, .expanded] {
            let message = loadError(damaged, residency: residency)
            #expect(message?.contains("inflates to more than the expected \(layer2Codes.count) bytes") == true, "\(message ?? "loaded")")
        }
    }

    /// A stream too short to inflate to a layer's codes even at deflate's best ratio (1032:1) fails before
    /// anything is allocated for them.
    @Test func streamTooShortForItsLayer() throws {
        let model = try ModelConverter.convert(try makeTestModel(classes: 80), settings: ConversionSettings(type: .lut8))
        let codes = try #require(model.quantizedConvolutions[10]?.weights.codes)
        #expect(codes.count == 255 * 16)
        var bytes = [UInt8](ModelFile.encode(model))
        let reference = tensorRecordOffsets(model)[3] + 8
        put(UInt64(3), at: reference + 8, in: &bytes)
        resign(&bytes)
        let message = loadError(bytes)
        #expect(message == "tensor of layer 10: deflated codes: 3 bytes cannot inflate to the 4080 bytes expected", "\(message ?? "loaded")")
    }
}

/// A zlib stream of `count` zero bytes, deflated 1 MB at a time (the zeros are never all in memory).
func zlibStreamOfZeros(_ count: Int) -> [UInt8] {
    var z = z_stream()
    precondition(deflateInit_(&z, 9, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    defer { deflateEnd(&z) }
    let zeros = [UInt8](repeating: 0, count: 1 << 20)
    var output = [UInt8](), chunk = [UInt8](repeating: 0, count: 1 << 16)
    var left = count
    zeros.withUnsafeBytes { input in
        repeat {
            let n = min(left, zeros.count)
            left -= n
            z.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
            z.avail_in = uInt(n)
            let flush = left == 0 ? Z_FINISH : Z_NO_FLUSH
            var status: Int32
            repeat {
                status = chunk.withUnsafeMutableBytes { out in
                    z.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    z.avail_out = uInt(out.count)
                    return deflate(&z, flush)
                }
                output += chunk[0..<chunk.count - Int(z.avail_out)]
            } while z.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)
        } while left > 0
    }
    return output
}
