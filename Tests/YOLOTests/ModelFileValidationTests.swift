import Foundation
import Testing
@_spi(Engine) @testable import YOLO

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
        expectError("unknown layer kind 9") { $0[80] = 9 }
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
}
