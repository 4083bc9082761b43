import Foundation

// MARK: - Loading

extension Model {
    /// Loads a SwiftYOLO model file (`.yolo`), memory-mapping it: float32 blobs are used where they
    /// lie in the mapping, without copying.
    ///
    /// Every size, offset, count and enum value is checked before it is used, and the whole file
    /// against its checksum, so a truncated, corrupted or foreign file gives one `YOLOError` line.
    /// - Parameter path: the `.yolo` file.
    /// - Parameter residency: whether LUT layers are expanded to float32 now (`.expanded`, the
    ///   default) or kept as codes and expanded layer by layer when used (`.codes`).
    public init(contentsOf path: String, residency: WeightResidency = .expanded) throws {
        let file = try MappedFile(path: path)
        self = try ModelFile.decode(file.bytes, owner: file, path: path, residency: residency)
    }

    /// Loads a model file from bytes in memory (copied once into 64-byte aligned storage);
    /// `path` is only used in error messages.
    public init(modelFileData data: Data, path: String, residency: WeightResidency = .expanded) throws {
        let storage = AlignedBytes(data)
        self = try ModelFile.decode(storage.bytes, owner: storage, path: path, residency: residency)
    }
}

/// Bytes copied into 64-byte aligned memory, kept alive as the owner of buffers that borrow them.
final class AlignedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    init(_ data: Data) {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(data.count, 1), alignment: ModelFile.alignment)
        data.withUnsafeBytes { if let base = $0.baseAddress { memory.copyMemory(from: base, byteCount: data.count) } }
        bytes = UnsafeRawBufferPointer(start: memory, count: data.count)
    }

    deinit { bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() } }
}

extension ModelFile {
    /// Decodes a whole model file held in `bytes` (64-byte aligned), which `owner` keeps alive.
    static func decode(_ bytes: UnsafeRawBufferPointer, owner: AnyObject, path: String,
                       residency: WeightResidency) throws -> Model {
        func fail(_ message: String) -> YOLOError { .invalidFile(path: path, message: message) }
        let size = bytes.count
        let prefix = Array(bytes.prefix(magic.count))
        guard prefix == Array(magic.prefix(prefix.count)), size > 0 else {
            throw fail(size == 0 ? "empty file, not a SwiftYOLO model" : "not a SwiftYOLO model file (bad magic bytes)")
        }
        guard size >= headerSize else {
            throw fail("truncated: \(size) bytes, shorter than the \(headerSize)-byte header")
        }
        let base = bytes.baseAddress!
        var header = ByteReader(base: base, range: magic.count..<headerSize, path: path, context: "header")
        let major = try header.u16("major version"), minor = try header.u16("minor version")
        guard major == majorVersion else {
            throw fail("model file version \(major).\(minor) is not supported (this reader reads version \(majorVersion).x)")
        }
        let declaredHeader = try header.u32("header size")
        let declaredSize = try header.u64("file size")
        let storedSum = try header.u64("checksum")
        let metadataOffset = try header.u64("metadata offset")
        let metadataLength = try header.u64("metadata length")
        guard declaredHeader == headerSize else { throw fail("header size is \(declaredHeader), expected \(headerSize)") }
        guard declaredSize == UInt64(size) else {
            throw fail(declaredSize > UInt64(size)
                       ? "truncated: \(size) of \(declaredSize) bytes"
                       : "\(UInt64(size) - declaredSize) unexpected bytes after the declared end (\(declaredSize) bytes)")
        }
        guard size % alignment == 0 else { throw fail("file size \(size) is not a multiple of \(alignment)") }
        let actualSum = checksum(bytes)
        guard actualSum == storedSum else {
            throw fail("checksum mismatch (stored \(hex(storedSum)), computed \(hex(actualSum))): the file is corrupted")
        }
        guard metadataOffset == UInt64(headerSize), metadataLength <= UInt64(size - headerSize) else {
            throw fail("metadata at \(metadataOffset) (\(metadataLength) bytes) does not lie inside the file")
        }
        let metadataEnd = headerSize + Int(metadataLength)
        var reader = ByteReader(base: base, range: headerSize..<metadataEnd, path: path, context: "network description")
        let description = try reader.description()
        let geometry: [LayerGeometry]
        do {
            geometry = try description.shapes(width: description.inputShape.width, height: description.inputShape.height, limits: .standard)
        } catch {
            throw reader.failure(error.message)
        }
        reader.context = "labels"
        let labelCount = try reader.count("label count", elementSize: 4)
        guard labelCount == 0 || labelCount == description.classCount else {
            throw reader.failure("\(labelCount) labels for \(description.classCount) classes")
        }
        var labels: [String] = []
        for i in 0..<labelCount { labels.append(try reader.string("label \(i)")) }

        let layout = TensorLayout(base: base, fileSize: size, blobStart: metadataEnd, owner: owner)
        var model = Model(description: description, convolutions: [:], labels: labels)
        reader.context = "tensor table"
        let convolutions = description.layers.indices.filter {
            if case .convolution = description.layers[$0] { return true }
            return false
        }
        var records: [Int: TensorRecord] = [:]
        var pending: [TensorLayout.PendingInflation] = []
        let tensorCount = try reader.count("tensor count", elementSize: tensorRecordSize)
        guard tensorCount == convolutions.count else {
            throw reader.failure("\(tensorCount) tensors for \(convolutions.count) convolutions")
        }
        for index in convolutions {
            guard case .convolution(let spec) = description.layers[index] else { continue }
            reader.context = "tensor of layer \(index)"
            // A grouped convolution's filter reads its group's channels only (the validator checked the division).
            let inChannels = geometry[index].inputShapes[0].channels / spec.groups
            let (patch, o1) = inChannels.multipliedReportingOverflow(by: spec.size * spec.size)
            guard !o1, patch <= size * 8 else { throw reader.failure("\(inChannels)x\(spec.size)x\(spec.size) weights per filter cannot fit in the file") }
            records[index] = try layout.readRecord(&reader, layer: index, filters: spec.filters, rowLength: patch,
                                                   pending: &pending)
            if spec.isGrouped {
                guard case .float? = records[index] else { throw reader.failure("a grouped convolution's weights must be float32 (storage 0)") }
            }
        }
        // Deflated codes (1.3) inflate once every record has passed its checks, all layers in parallel.
        try TensorLayout.inflate(pending)
        for (index, record) in records {
            switch record {
            case .float(let p): model.convolutions[index] = p
            case .lut(let q):
                if residency == .codes { model.quantizedConvolutions[index] = q } else { model.convolutions[index] = q.expanded() }
            case .int8(let q):
                model.int8Convolutions[index] = q
            }
        }
        reader.context = "note"
        _ = try reader.string("note")
        if minor >= 1 {
            // 1.1: the preferred scaling. Older files have none; theirs is inferred from the layers,
            // which gives what the converter of that time assumed for every model it could read.
            reader.context = "preferred scaling"
            let code = try reader.u8("preferred scaling")
            guard let fitting = ModelFileCodes.fitting(code) else { throw reader.failure("unknown scaling code \(code)") }
            (model.description.preferredScaling, model.description.preferredResampling) = fitting
        }
        if minor >= 2 {
            // 1.2: the suppression kind (0 greedy, 1 DIoU) and its beta.
            reader.context = "suppression"
            let kind = try reader.u8("suppression kind")
            let beta = try reader.f32("beta_nms")
            switch kind {
            case 0: model.description.suppression = .greedy
            case 1:
                guard beta.isFinite, beta > 0, beta <= 1000 else { throw reader.failure("beta_nms \(beta) is not a positive number") }
                model.description.suppression = .distanceIoU(beta: beta)
            default: throw reader.failure("unknown suppression kind \(kind)")
            }
        }
        if minor >= 5 {
            // 1.5: the value of the letterbox padding.
            reader.context = "letterbox fill"
            let fill = try reader.f32("letterbox fill")
            guard fill.isFinite, fill >= 0, fill <= 1 else { throw reader.failure("letterbox fill \(fill) is not in [0, 1]") }
            model.description.letterboxFill = fill
        }
        if reader.remaining > 0 && minor <= minorVersion {
            throw reader.failure("\(reader.remaining) unexpected bytes after the metadata")
        }
        if residency == .expanded && convolutions.contains(where: { if case .lut = records[$0] { return true }; return false }) {
            // The codes are expanded, so copy the few float blobs (biases, float layers) too and
            // let the mapping go: otherwise its pages would stay resident for a few kilobytes.
            for (index, p) in model.convolutions {
                model.convolutions[index] = ConvolutionParameters(weights: FloatStorage.copy(p.weights), biases: FloatStorage.copy(p.biases))
            }
        }
        return model
    }

    private static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}
