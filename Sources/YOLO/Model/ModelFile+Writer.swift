import Foundation

// MARK: - Writing

extension ModelFile {
    /// One blob to place: its bytes, in writing order.
    private struct Blob {
        var bytes: UnsafeRawBufferPointer
        var offset = 0
    }

    /// Bytes of one tensor record in the metadata: layer u32, storage u8, bits u8, granularity u8,
    /// reserved u8, then four blob references (offset u64, length u64): weights or codes, biases,
    /// table, scales (the last two zero for float32).
    static let tensorRecordSize = 8 + 4 * 16

    /// Encodes `model` as a model file. Every convolution must have parameters, either float
    /// (`convolutions`) or codes (`quantizedConvolutions`). Deterministic: the same model, note and
    /// choice of code storage give the same bytes (with the same zlib).
    ///
    /// - Parameter model: the model to encode (loaded, or returned by `ModelConverter`).
    /// - Parameter note: free text stored in the file (e.g. the conversion settings).
    /// - Parameter compressCodes: store LUT codes as zlib streams (storage 2, deflated at level 9;
    ///   lossless, inflated at load), or as plain bit streams (storage 1, used in place from the
    ///   memory map, readable by 1.0–1.2 readers). Float32 weights are never compressed.
    public static func encode(_ model: Model, note: String = "", compressCodes: Bool = true) -> Data {
        encode(model, note: note, minor: minorVersion, compressCodes: compressCodes)
    }

    /// `encode` in the layout of minor version `minor` (tests write older files with it); codes are
    /// deflated only when `compressCodes` and `minor` ≥ 3 (storage 2 is a 1.3 code).
    static func encode(_ model: Model, note: String, minor: UInt16, compressCodes: Bool = false) -> Data {
        let deflate = compressCodes && minor >= 3
        let description = model.description
        precondition(minor >= 5 || !description.heads.contains { $0.spec.isAnchorFree }, "ModelFile.encode: anchor-free heads need format 1.5")
        precondition(minor >= 6 || !description.layers.contains {
            switch $0 {
            case .attention: return true
            case .convolution(let s): return s.isGrouped
            default: return false
            }
        }, "ModelFile.encode: grouped convolutions and attention need format 1.6")
        let convolutionIndices = description.layers.indices.filter {
            if case .convolution = description.layers[$0] { return true }
            return false
        }
        // Keep every buffer alive while its bytes are copied.
        var blobs: [Blob] = []
        var owners: [AnyObject] = []
        func raw(_ buffer: FloatBuffer) -> UnsafeRawBufferPointer {
            owners.append(buffer)
            return UnsafeRawBufferPointer(buffer.buffer)
        }
        for index in convolutionIndices {
            if let q = model.int8Convolutions[index] {
                precondition(minor >= 4, "ModelFile.encode: int8 layers need format 1.4")
                owners.append(q.weights.values)
                blobs.append(Blob(bytes: UnsafeRawBufferPointer(q.weights.values.buffer)))
                blobs.append(Blob(bytes: raw(q.biases)))
                blobs.append(Blob(bytes: raw(FloatBuffer(Self.int8Quantization(q)))))
                blobs.append(Blob(bytes: raw(q.weights.scales)))
            } else if let q = model.quantizedConvolutions[index] {
                let codes = deflate ? ByteBuffer(ZlibStream.deflate(UnsafeRawBufferPointer(q.weights.codes.buffer))) : q.weights.codes
                owners.append(codes)
                blobs.append(Blob(bytes: UnsafeRawBufferPointer(codes.buffer)))
                blobs.append(Blob(bytes: raw(q.biases)))
                blobs.append(Blob(bytes: raw(q.weights.table)))
                blobs.append(Blob(bytes: raw(q.weights.scales)))
            } else {
                guard let p = model.convolutions[index] else {
                    preconditionFailure("ModelFile.encode: layer \(index) has no parameters")
                }
                blobs.append(Blob(bytes: raw(p.weights)))
                blobs.append(Blob(bytes: raw(p.biases)))
            }
        }
        // The metadata's length does not depend on the offsets, so measure it first.
        let lutStorage = deflate ? Storage.lutDeflated : .lut
        let metadataLength = metadata(model, indices: convolutionIndices, blobs: blobs, lutStorage: lutStorage, note: note, minor: minor).count
        var cursor = roundUp(headerSize + metadataLength)
        for i in blobs.indices {
            blobs[i].offset = cursor
            cursor = roundUp(cursor + blobs[i].bytes.count)
        }
        let fileSize = cursor

        var writer = ByteWriter()
        writer.bytes.reserveCapacity(fileSize)
        writer.bytes.append(contentsOf: magic)
        writer.u16(majorVersion)
        writer.u16(minor)
        writer.u32(UInt32(headerSize))
        writer.u64(UInt64(fileSize))
        writer.u64(0)  // checksum, filled in below
        writer.u64(UInt64(headerSize))
        writer.u64(UInt64(metadataLength))
        writer.u64(0)
        writer.u64(0)
        writer.bytes.append(contentsOf: metadata(model, indices: convolutionIndices, blobs: blobs, lutStorage: lutStorage,
                                                 note: note, minor: minor))
        for blob in blobs {
            writer.pad(to: alignment)
            precondition(writer.bytes.count == blob.offset, "ModelFile.encode: blob layout drifted")
            writer.bytes.append(contentsOf: blob.bytes)
        }
        writer.pad(to: alignment)
        precondition(writer.bytes.count == fileSize, "ModelFile.encode: size drifted")
        withExtendedLifetime(owners) {}
        let sum = writer.bytes.withUnsafeBytes { checksum($0) }
        withUnsafeBytes(of: sum.littleEndian) { source in
            for k in 0..<8 { writer.bytes[checksumOffset + k] = source[k] }
        }
        return Data(writer.bytes)
    }

    /// Writes `model` to `path` as a SwiftYOLO model file (`.yolo`), atomically: a reader never sees
    /// a half-written file. The same model, note and code storage give the same bytes (see
    /// `encode(_:note:compressCodes:)`).
    ///
    /// - Parameters:
    ///   - model: the model to save (float or quantized).
    ///   - path: the file to write; its folder must exist.
    ///   - note: free text stored in the file's metadata, e.g. how the model was converted.
    ///   - compressCodes: deflate LUT codes (storage 2, the default) or store them plain (storage 1).
    /// - Throws: `YOLOError.unreadableFile` when the file cannot be written.
    public static func write(_ model: Model, to path: String, note: String = "", compressCodes: Bool = true) throws {
        try FileIO.writeAtomically(encode(model, note: note, compressCodes: compressCodes), to: path)
    }

    /// An int8 record's quantization blob: input scale, input zero point, output scale (0: none), output zero
    /// point, as f32.
    static func int8Quantization(_ q: Int8ConvolutionParameters) -> [Float] {
        [q.input.scale, Float(q.input.zeroPoint), q.output?.scale ?? 0, Float(q.output?.zeroPoint ?? 0)]
    }

    private static func roundUp(_ value: Int) -> Int {
        (value + alignment - 1) / alignment * alignment
    }

    /// Description, labels, tensor records (blob references in `blobs` order; LUT tensors as
    /// `lutStorage`) and the note.
    private static func metadata(_ model: Model, indices: [Int], blobs: [Blob], lutStorage: Storage, note: String,
                                 minor: UInt16) -> [UInt8] {
        var writer = ByteWriter()
        writer.description(model.description)
        writer.count(model.labels.count)
        for label in model.labels { writer.string(label) }
        writer.count(indices.count)
        var next = 0
        func reference() {
            writer.u64(UInt64(blobs[next].offset))
            writer.u64(UInt64(blobs[next].bytes.count))
            next += 1
        }
        for index in indices {
            writer.count(index)
            if model.int8Convolutions[index] != nil {
                writer.u8(Storage.int8.rawValue)
                writer.u8(8)
                writer.u8(LUTGranularity.perChannel.rawValue)
                writer.u8(0)
                for _ in 0..<4 { reference() }
            } else if let q = model.quantizedConvolutions[index] {
                writer.u8(lutStorage.rawValue)
                writer.u8(q.weights.type.rawValue)
                writer.u8(q.weights.granularity.rawValue)
                writer.u8(0)
                for _ in 0..<4 { reference() }
            } else {
                writer.u8(Storage.float32.rawValue)
                writer.u8(0)
                writer.u8(0)
                writer.u8(0)
                reference()
                reference()
                for _ in 0..<4 { writer.u64(0) }
            }
        }
        writer.string(note)
        if minor >= 1 { writer.u8(ModelFileCodes.code(model.description.preferredScaling, model.description.preferredResampling)) }
        if minor >= 2 {
            switch model.description.suppression {
            case .greedy: writer.u8(0); writer.f32(0)
            case .distanceIoU(let beta): writer.u8(1); writer.f32(beta)
            }
        }
        if minor >= 5 { writer.f32(model.description.letterboxFill) }
        return writer.bytes
    }
}
