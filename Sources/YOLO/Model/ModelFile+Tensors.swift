// MARK: - Tensor records and blobs

/// One convolution's parameters as read from a tensor record.
enum TensorRecord {
    case float(ConvolutionParameters)
    case lut(QuantizedConvolution)
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
        guard offset % UInt64(ModelFile.alignment) == 0, offset >= UInt64(blobStart),
              offset <= UInt64(fileSize), length <= UInt64(fileSize) - offset else {
            throw reader.failure("\(what) (\(length) bytes at \(offset)) does not lie \(ModelFile.alignment)-byte aligned inside the blob area \(blobStart)..<\(fileSize)")
        }
        return Int(offset)
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
    func readRecord(_ reader: inout ByteReader, layer: Int, filters: Int, rowLength: Int) throws -> TensorRecord {
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
        case .lut:
            guard let type = LUTType(rawValue: bits) else { throw reader.failure("unsupported LUT code width \(bits) bits (supported: 8, 6, 4)") }
            guard let granularity = LUTGranularity(rawValue: granularityCode) else {
                throw reader.failure("unknown table granularity code \(granularityCode)")
            }
            let scaleCount = granularity == .perChannel ? filters : 1
            let codes = try blob(&reader, "codes", expected: type.packedByteCount(codes: count))
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
            let weights = LUTWeights(type: type, granularity: granularity, rows: filters, rowLength: rowLength,
                                     table: tableBuffer, scales: scaleBuffer,
                                     codes: ByteBuffer(borrowing: (base + codes).assumingMemoryBound(to: UInt8.self),
                                                       count: type.packedByteCount(codes: count), owner: owner))
            return .lut(QuantizedConvolution(weights: weights, biases: biasBuffer))
        }
    }
}
