// MARK: - Tensor records and blobs

/// One convolution's parameters as read from a tensor record.
enum TensorRecord {
    case float(ConvolutionParameters)
    case lut(QuantizedConvolution)
    case int8(Int8ConvolutionParameters)
}

/// Checks blob references against the file and turns them into buffers borrowing the file's bytes.
struct TensorLayout {
    let base: UnsafeRawPointer
    let fileSize: Int
    /// First byte after the metadata: no blob may start before it.
    let blobStart: Int
    let owner: AnyObject

    /// Reads a blob reference (offset u64, length u64) that must hold exactly `expected` bytes
    /// (0 for an absent blob: then both fields must be 0). Returns the blob's offset.
    func blob(_ reader: inout ByteReader, _ what: String, expected: Int) throws -> Int {
        let offset = try reader.u64("\(what) offset"), length = try reader.u64("\(what) length")
        if expected == 0 {
            guard offset == 0 && length == 0 else { throw reader.failure("\(what) should be absent, found \(length) bytes at \(offset)") }
            return 0
        }
        guard length == UInt64(expected) else {
            throw reader.failure("\(what) holds \(length) bytes, expected \(expected)")
        }
        return try placed(offset, length, reader, what).lowerBound
    }

    /// Reads the reference of a blob whose length the file decides (a zlib stream: at least 1 byte).
    /// Returns the blob's byte range.
    func compressedBlob(_ reader: inout ByteReader, _ what: String) throws -> Range<Int> {
        let offset = try reader.u64("\(what) offset"), length = try reader.u64("\(what) length")
        guard length >= 1 else { throw reader.failure("\(what) hold 0 bytes, not a zlib stream") }
        return try placed(offset, length, reader, what)
    }

    /// Checks that `length` bytes at `offset` lie 64-byte aligned inside the blob area.
    private func placed(_ offset: UInt64, _ length: UInt64, _ reader: ByteReader, _ what: String) throws -> Range<Int> {
        guard offset % UInt64(ModelFile.alignment) == 0, offset >= UInt64(blobStart),
              offset <= UInt64(fileSize), length <= UInt64(fileSize) - offset else {
            throw reader.failure("\(what) (\(length) bytes at \(offset)) does not lie \(ModelFile.alignment)-byte aligned inside the blob area \(blobStart)..<\(fileSize)")
        }
        return Int(offset)..<Int(offset + length)
    }

    /// The codes of a storage-2 tensor: owned memory of exactly `expected` bytes, to be filled by
    /// inflating the zlib stream in `range` (`inflate(_:)`, after every record was read, so that the
    /// streams of all layers inflate in parallel). A stream too short to inflate to `expected` bytes at
    /// deflate's largest ratio fails here, before anything is allocated.
    func deflatedCodes(_ range: Range<Int>, expected: Int, _ reader: ByteReader,
                       pending: inout [PendingInflation]) throws -> ByteBuffer {
        guard expected <= range.count * ZlibStream.maxRatio else {
            throw reader.failure("deflated codes: \(range.count) bytes cannot inflate to the \(expected) bytes expected")
        }
        let codes = ByteBuffer(count: expected) { _ in }
        pending.append(PendingInflation(stream: UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count),
                                        target: UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: codes.pointer),
                                                                              count: expected),
                                        reader: reader))
        return codes
    }

    /// One layer's deflated codes waiting to be inflated into the buffer `deflatedCodes` allocated (not
    /// yet shared with anything else), with the reader that names the layer in an error.
    struct PendingInflation: @unchecked Sendable {
        let stream: UnsafeRawBufferPointer
        let target: UnsafeMutableRawBufferPointer
        let reader: ByteReader
    }

    /// Inflates every pending stream, the largest first, dealt round-robin to the machine's cores
    /// (yolov4-tiny's codes inflate at ~260 MB/s per core: 23 ms on one). A stream that would
    /// inflate to more than its buffer, ends short, is corrupt or has bytes after its end fails; the
    /// error named is that of the first such layer in file order.
    static func inflate(_ pending: [PendingInflation]) throws {
        let order = pending.indices.sorted { pending[$0].target.count > pending[$1].target.count }
        var problems = [String?](repeating: nil, count: pending.count)
        let workers = min(Threading.defaultThreadCount, pending.count)
        problems.withUnsafeMutableBufferPointer { problems in
            let results = UncheckedSendable(problems)
            Parallel.forRanges(workers, threads: workers) { parts in
                for worker in parts {
                    for slot in Swift.stride(from: worker, to: order.count, by: workers) {
                        let job = pending[order[slot]]
                        results.value[order[slot]] = ZlibStream.inflate(job.stream, into: job.target)
                    }
                }
            }
        }
        if let index = problems.firstIndex(where: { $0 != nil }), let problem = problems[index] {
            throw pending[index].reader.failure("deflated codes: \(problem)")
        }
    }

    /// `count` float32 values at `offset`, borrowed from the file.
    func floats(at offset: Int, count: Int) -> FloatBuffer {
        FloatBuffer(borrowing: (base + offset).assumingMemoryBound(to: Float.self), count: count, owner: owner)
    }

    /// `count` float32s needing `4·count` bytes, with the count checked against the file first.
    func floatBytes(_ count: Int, _ reader: ByteReader, _ what: String) throws -> Int {
        guard count >= 0, count <= fileSize / 4 else { throw reader.failure("\(what): \(count) floats cannot fit in the file") }
        return count * 4
    }

    /// Reads the record of convolution `layer` (`filters × rowLength` weights).
    func readRecord(_ reader: inout ByteReader, layer: Int, filters: Int, rowLength: Int,
                    pending: inout [PendingInflation]) throws -> TensorRecord {
        let recordLayer = Int(try reader.u32("layer index"))
        guard recordLayer == layer else { throw reader.failure("record names layer \(recordLayer)") }
        let storageCode = try reader.u8("storage"), bits = try reader.u8("bits")
        let granularityCode = try reader.u8("table granularity"), reserved = try reader.u8("reserved byte")
        guard reserved == 0 else { throw reader.failure("reserved byte is \(reserved), not 0") }
        guard let storage = ModelFile.Storage(rawValue: storageCode) else { throw reader.failure("unknown storage code \(storageCode)") }
        let (count, overflow) = filters.multipliedReportingOverflow(by: rowLength)
        guard !overflow, count <= fileSize * 8 else { throw reader.failure("\(filters)x\(rowLength) weights cannot fit in the file") }
        let biasBytes = try floatBytes(filters, reader, "biases")
        switch storage {
        case .float32:
            guard bits == 0, granularityCode == 0 else { throw reader.failure("float32 tensor with bits \(bits), granularity \(granularityCode)") }
            let weights = try blob(&reader, "weights", expected: try floatBytes(count, reader, "weights"))
            let biases = try blob(&reader, "biases", expected: biasBytes)
            _ = try blob(&reader, "table", expected: 0)
            _ = try blob(&reader, "scales", expected: 0)
            let parameters = ConvolutionParameters(weights: floats(at: weights, count: count), biases: floats(at: biases, count: filters))
            if let problem = WeightSanity.problem(in: parameters.weights.buffer, name: "weight")
                ?? WeightSanity.problem(in: parameters.biases.buffer, name: "bias") {
                throw reader.failure(problem)
            }
            return .float(parameters)
        case .int8:
            return try int8Record(&reader, bits: bits, granularityCode: granularityCode, filters: filters, rowLength: rowLength,
                                  biasBytes: biasBytes)
        case .lut, .lutDeflated:
            return try lutRecord(&reader, deflated: storage == .lutDeflated, pending: &pending, bits: bits, granularityCode: granularityCode,
                                 filters: filters, rowLength: rowLength, biasBytes: biasBytes)
        }
    }

    /// The rest of a LUT record (storage 1, or 2 with `deflated` codes) after its storage byte:
    /// `filters × rowLength` codes, `biasBytes` bytes of biases.
    private func lutRecord(_ reader: inout ByteReader, deflated: Bool, pending: inout [PendingInflation],
                           bits: UInt8, granularityCode: UInt8,
                           filters: Int, rowLength: Int, biasBytes: Int) throws -> TensorRecord {
        guard let type = LUTType(rawValue: bits) else { throw reader.failure("unsupported LUT code width \(bits) bits (supported: 8, 6, 4)") }
        guard let granularity = LUTGranularity(rawValue: granularityCode) else {
            throw reader.failure("unknown table granularity code \(granularityCode)")
        }
        let scaleCount = granularity == .perChannel ? filters : 1
        let codeBytes = type.packedByteCount(codes: filters * rowLength)
        let codes: Range<Int>
        if deflated {
            codes = try compressedBlob(&reader, "deflated codes")
        } else {
            let offset = try blob(&reader, "codes", expected: codeBytes)
            codes = offset..<offset + codeBytes
        }
        let biases = try blob(&reader, "biases", expected: biasBytes)
        let table = try blob(&reader, "table", expected: type.tableSize * 4)
        let scales = try blob(&reader, "scales", expected: scaleCount * 4)
        let tableBuffer = floats(at: table, count: type.tableSize)
        let scaleBuffer = floats(at: scales, count: scaleCount)
        guard tableBuffer.buffer.allSatisfy(\.isFinite), scaleBuffer.buffer.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            throw reader.failure("table or scales hold non-finite or negative values")
        }
        // The largest weight the codes can expand to must pass the same check as float weights.
        let largest = tableBuffer.buffer.reduce(Float(0)) { max($0, $1.magnitude) } * scaleBuffer.buffer.reduce(Float(0), max)
        let biasBuffer = floats(at: biases, count: filters)
        if let problem = WeightSanity.problem(in: CollectionOfOne(largest), name: "weight")
            ?? WeightSanity.problem(in: biasBuffer.buffer, name: "bias") {
            throw reader.failure(problem)
        }
        // Plain codes are used where they lie in the file; deflated ones are inflated last, after every
        // cheaper check has passed.
        let codeBuffer = deflated
            ? try deflatedCodes(codes, expected: codeBytes, reader, pending: &pending)
            : ByteBuffer(borrowing: (base + codes.lowerBound).assumingMemoryBound(to: UInt8.self), count: codeBytes, owner: owner)
        let weights = LUTWeights(type: type, granularity: granularity, rows: filters, rowLength: rowLength,
                                 table: tableBuffer, scales: scaleBuffer, codes: codeBuffer)
        return .lut(QuantizedConvolution(weights: weights, biases: biasBuffer))
    }
}

// MARK: - Int8 records (1.4)

extension TensorLayout {
    /// The rest of an int8 record (storage 3) after its storage byte: bits 8, per-channel granularity; blobs:
    /// `filters × rowLength` s8 values (−127…127), the biases, the quantization (4 f32: input scale > 0, input
    /// zero point, output scale ≥ 0 with 0 for none, output zero point; zero points whole numbers 0…255) and
    /// the per-channel scales (finite, ≥ 0).
    fileprivate func int8Record(_ reader: inout ByteReader, bits: UInt8, granularityCode: UInt8,
                                filters: Int, rowLength: Int, biasBytes: Int) throws -> TensorRecord {
        guard bits == 8, granularityCode == LUTGranularity.perChannel.rawValue else {
            throw reader.failure("int8 tensor with bits \(bits), granularity \(granularityCode) (expected 8, per-channel)")
        }
        let count = filters * rowLength
        let values = try blob(&reader, "int8 weights", expected: count)
        let biases = try blob(&reader, "biases", expected: biasBytes)
        let quantization = try blob(&reader, "quantization", expected: 16)
        let scales = try blob(&reader, "scales", expected: 4 * filters)
        let q = floats(at: quantization, count: 4)
        func zeroPoint(_ value: Float, _ what: String) throws -> UInt8 {
            guard value >= 0, value <= 255, value.rounded() == value else { throw reader.failure("\(what) zero point \(value) is not a code 0...255") }
            return UInt8(value)
        }
        guard q[0].isFinite, q[0] > 0 else { throw reader.failure("input scale \(q[0]) is not a positive number") }
        guard q[2].isFinite, q[2] >= 0 else { throw reader.failure("output scale \(q[2]) is not a number ≥ 0") }
        let input = ActivationQuantization(scale: q[0], zeroPoint: try zeroPoint(q[1], "input"))
        let output = q[2] > 0 ? ActivationQuantization(scale: q[2], zeroPoint: try zeroPoint(q[3], "output")) : nil
        let scaleBuffer = floats(at: scales, count: filters)
        guard scaleBuffer.buffer.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            throw reader.failure("scales hold non-finite or negative values")
        }
        let valueBuffer = SharedBuffer<Int8>(borrowing: (base + values).assumingMemoryBound(to: Int8.self), count: count, owner: owner)
        guard !valueBuffer.buffer.contains(Int8.min) else { throw reader.failure("int8 weights hold -128 (the codes are -127...127)") }
        let largest = scaleBuffer.buffer.reduce(Float(0), max) * Float(Int8Weights.maximum)
        let biasBuffer = floats(at: biases, count: filters)
        if let problem = WeightSanity.problem(in: CollectionOfOne(largest), name: "weight")
            ?? WeightSanity.problem(in: biasBuffer.buffer, name: "bias") {
            throw reader.failure(problem)
        }
        let weights = Int8Weights(rows: filters, rowLength: rowLength, values: valueBuffer, scales: scaleBuffer)
        return .int8(Int8ConvolutionParameters(weights: weights, biases: biasBuffer, input: input, output: output))
    }
}
