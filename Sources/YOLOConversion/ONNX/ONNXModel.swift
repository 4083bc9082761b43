import Foundation
@_spi(Engine) import YOLO

/// The parts of an ONNX model (onnx.proto, `ModelProto`) the converter reads: opsets, metadata, and the main
/// graph's nodes, initializers, inputs and outputs. Subgraphs, sparse tensors, training info and functions
/// are skipped. Tensor data stays in the file's bytes until asked for (`ONNXTensor.floats()`).
@_spi(Engine) public struct ONNXModel: Sendable {
    public var irVersion: Int64 = 0
    /// (domain, version); the default domain is "" (or "ai.onnx").
    public var opsets: [(domain: String, version: Int64)] = []
    public var producer = ""
    /// `metadata_props` in file order.
    public var metadata: [(key: String, value: String)] = []
    public var graph = ONNXGraph()

    /// Most nodes, initializers, attributes, dimensions or list entries a file may hold (far above any
    /// detector: yolov8s has 300 nodes): a hostile count fails before it grows a list.
    static let maximumEntries = 1 << 20

    /// Parses `bytes`; `path` names the file in errors.
    ///
    /// - Throws: `YOLOError.invalidFile` naming the message part that is malformed.
    public init(bytes: [UInt8], path: String) throws {
        do {
            var reader = ProtobufReader(bytes)
            while !reader.isAtEnd {
                let (field, wire) = try reader.tag()
                switch (field, wire) {
                case (1, .varint): irVersion = try reader.int64()
                case (2, .lengthDelimited): producer = try reader.string()
                case (7, .lengthDelimited): graph = try ONNXGraph(ProtobufReader(bytes, range: reader.lengthDelimited()))
                case (8, .lengthDelimited):
                    var entry = ProtobufReader(bytes, range: try reader.lengthDelimited())
                    var (domain, version) = ("", Int64(0))
                    while !entry.isAtEnd {
                        let (f, w) = try entry.tag()
                        switch (f, w) {
                        case (1, .lengthDelimited): domain = try entry.string()
                        case (2, .varint): version = try entry.int64()
                        default: try entry.skip(w)
                        }
                    }
                    guard opsets.count < Self.maximumEntries else { throw ProtobufError("too many opset entries") }
                    opsets.append((domain, version))
                case (14, .lengthDelimited):
                    var entry = ProtobufReader(bytes, range: try reader.lengthDelimited())
                    var (key, value) = ("", "")
                    while !entry.isAtEnd {
                        let (f, w) = try entry.tag()
                        switch (f, w) {
                        case (1, .lengthDelimited): key = try entry.string()
                        case (2, .lengthDelimited): value = try entry.string()
                        default: try entry.skip(w)
                        }
                    }
                    guard metadata.count < Self.maximumEntries else { throw ProtobufError("too many metadata entries") }
                    metadata.append((key, value))
                default: try reader.skip(wire)
                }
            }
        } catch let error as ProtobufError {
            throw YOLOError.invalidFile(path: path, message: "not a readable ONNX model: \(error.message)")
        }
    }

    /// Reads and parses the file at `path`.
    public init(contentsOf path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw YOLOError.fileNotFound(path: path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw YOLOError.unreadableFile(path: path, reason: "cannot read it")
        }
        try self.init(bytes: [UInt8](data), path: path)
    }

    /// The version of the default-domain operator set.
    public var defaultOpset: Int64? {
        opsets.first { $0.domain.isEmpty || $0.domain == "ai.onnx" }?.version
    }
}

/// `GraphProto`: nodes in file order (topologically sorted, as ONNX requires), initializers by name.
@_spi(Engine) public struct ONNXGraph: Sendable {
    public var nodes: [ONNXNode] = []
    public var initializers: [String: ONNXTensor] = [:]
    public var inputs: [ONNXValueInfo] = []
    public var outputs: [ONNXValueInfo] = []

    init() {}

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var reader = reader
        var count = 0
        while !reader.isAtEnd {
            let (field, wire) = try reader.tag()
            count += 1
            guard count <= ONNXModel.maximumEntries else { throw ProtobufError("graph has too many entries") }
            switch (field, wire) {
            case (1, .lengthDelimited): nodes.append(try ONNXNode(ProtobufReader(reader.bytes, range: reader.lengthDelimited())))
            case (5, .lengthDelimited):
                let tensor = try ONNXTensor(ProtobufReader(reader.bytes, range: reader.lengthDelimited()))
                initializers[tensor.name] = tensor
            case (11, .lengthDelimited): inputs.append(try ONNXValueInfo(ProtobufReader(reader.bytes, range: reader.lengthDelimited())))
            case (12, .lengthDelimited): outputs.append(try ONNXValueInfo(ProtobufReader(reader.bytes, range: reader.lengthDelimited())))
            default: try reader.skip(wire)
            }
        }
    }
}

/// `NodeProto`: one operator application.
@_spi(Engine) public struct ONNXNode: Sendable {
    public var name = ""
    public var opType = ""
    public var domain = ""
    /// Input tensor names; "" marks an omitted optional input.
    public var inputs: [String] = []
    public var outputs: [String] = []
    public var attributes: [ONNXAttribute] = []

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var reader = reader
        while !reader.isAtEnd {
            let (field, wire) = try reader.tag()
            switch (field, wire) {
            case (1, .lengthDelimited):
                guard inputs.count < ONNXModel.maximumEntries else { throw ProtobufError("node has too many inputs") }
                inputs.append(try reader.string())
            case (2, .lengthDelimited):
                guard outputs.count < ONNXModel.maximumEntries else { throw ProtobufError("node has too many outputs") }
                outputs.append(try reader.string())
            case (3, .lengthDelimited): name = try reader.string()
            case (4, .lengthDelimited): opType = try reader.string()
            case (7, .lengthDelimited): domain = try reader.string()
            case (5, .lengthDelimited):
                guard attributes.count < ONNXModel.maximumEntries else { throw ProtobufError("node has too many attributes") }
                attributes.append(try ONNXAttribute(ProtobufReader(reader.bytes, range: reader.lengthDelimited())))
            default: try reader.skip(wire)
            }
        }
    }

    /// The attribute called `name`, if present.
    public func attribute(_ name: String) -> ONNXAttribute? { attributes.first { $0.name == name } }

    /// How errors name this node: `'name' (OpType)`.
    public var label: String { "node '\(name)' (\(opType))" }
}

/// `AttributeProto`: the scalar, list and tensor kinds (graphs and sparse tensors are skipped).
@_spi(Engine) public struct ONNXAttribute: Sendable {
    public var name = ""
    /// `AttributeProto.AttributeType` (1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS, 7 INTS, 8 STRINGS, ...).
    public var type: Int64 = 0
    public var float: Float = 0
    public var int: Int64 = 0
    public var string = ""
    public var tensor: ONNXTensor?
    public var floats: [Float] = []
    public var ints: [Int64] = []

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var reader = reader
        let limit = ONNXModel.maximumEntries
        while !reader.isAtEnd {
            let (field, wire) = try reader.tag()
            switch (field, wire) {
            case (1, .lengthDelimited): name = try reader.string()
            case (20, .varint): type = try reader.int64()
            case (2, .fixed32): float = Float(bitPattern: try reader.fixed32())
            case (3, .varint): int = try reader.int64()
            case (4, .lengthDelimited): string = try reader.string()
            case (5, .lengthDelimited): tensor = try ONNXTensor(ProtobufReader(reader.bytes, range: reader.lengthDelimited()))
            case (7, .fixed32), (7, .lengthDelimited): try reader.floats(wire, into: &floats, limit: limit)
            case (8, .varint), (8, .lengthDelimited): try reader.int64s(wire, into: &ints, limit: limit)
            default: try reader.skip(wire)
            }
        }
    }
}

/// `ValueInfoProto` of a tensor: name, element type and dimensions (nil for a symbolic or missing one).
@_spi(Engine) public struct ONNXValueInfo: Sendable {
    public var name = ""
    public var elementType: Int64 = 0
    public var dimensions: [Int64?] = []

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var reader = reader
        while !reader.isAtEnd {
            let (field, wire) = try reader.tag()
            switch (field, wire) {
            case (1, .lengthDelimited): name = try reader.string()
            case (2, .lengthDelimited):  // TypeProto
                var type = ProtobufReader(reader.bytes, range: try reader.lengthDelimited())
                while !type.isAtEnd {
                    let (f, w) = try type.tag()
                    guard f == 1, w == .lengthDelimited else { try type.skip(w); continue }  // tensor_type
                    var tensor = ProtobufReader(reader.bytes, range: try type.lengthDelimited())
                    while !tensor.isAtEnd {
                        let (g, v) = try tensor.tag()
                        switch (g, v) {
                        case (1, .varint): elementType = try tensor.int64()
                        case (2, .lengthDelimited):  // TensorShapeProto
                            var shape = ProtobufReader(reader.bytes, range: try tensor.lengthDelimited())
                            while !shape.isAtEnd {
                                let (h, x) = try shape.tag()
                                guard h == 1, x == .lengthDelimited else { try shape.skip(x); continue }
                                guard dimensions.count < ONNXModel.maximumEntries else { throw ProtobufError("too many dimensions") }
                                var dimension = ProtobufReader(reader.bytes, range: try shape.lengthDelimited())
                                var value: Int64?
                                while !dimension.isAtEnd {
                                    let (d, y) = try dimension.tag()
                                    if d == 1, y == .varint { value = try dimension.int64() } else { try dimension.skip(y) }
                                }
                                dimensions.append(value)
                            }
                        default: try tensor.skip(v)
                        }
                    }
                }
            default: try reader.skip(wire)
            }
        }
    }
}

/// `TensorProto`: dimensions, element type and data, kept as a range of the file's bytes until converted.
@_spi(Engine) public struct ONNXTensor: Sendable {
    /// `TensorProto.DataType` codes this reader converts.
    public enum DataType: Int64, Sendable {
        case float = 1, int32 = 6, int64 = 7, float16 = 10, double = 11
    }

    public var name = ""
    public var dimensions: [Int64] = []
    public var dataType: Int64 = 0
    private var bytes: [UInt8] = []
    private var raw: Range<Int>?
    private var floatData: [Float] = []
    private var int32Data: [Int64] = []
    private var int64Data: [Int64] = []
    private var external = false

    init(_ reader: ProtobufReader) throws(ProtobufError) {
        var reader = reader
        bytes = reader.bytes
        let limit = ONNXModel.maximumEntries * 64
        while !reader.isAtEnd {
            let (field, wire) = try reader.tag()
            switch (field, wire) {
            case (1, .varint), (1, .lengthDelimited): try reader.int64s(wire, into: &dimensions, limit: 64)
            case (2, .varint): dataType = try reader.int64()
            case (4, .fixed32), (4, .lengthDelimited): try reader.floats(wire, into: &floatData, limit: limit)
            case (5, .varint), (5, .lengthDelimited): try reader.int64s(wire, into: &int32Data, limit: limit)
            case (7, .varint), (7, .lengthDelimited): try reader.int64s(wire, into: &int64Data, limit: limit)
            case (8, .lengthDelimited): name = try reader.string()
            case (9, .lengthDelimited): raw = try reader.lengthDelimited()
            case (14, .varint): external = try reader.int64() == 1
            default: try reader.skip(wire)
            }
        }
        if raw == nil { bytes = [] }
    }

    /// The element count the dimensions give, or nil when one is negative or the product is absurd.
    public var elementCount: Int? {
        var count = 1
        for d in dimensions {
            guard d >= 0, d <= Int64(Int32.max) else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: Int(d))
            guard !overflow, product <= Int(Int32.max) else { return nil }
            count = product
        }
        return count
    }

    /// The values as float32 (FLOAT, FLOAT16 and DOUBLE data; raw or typed fields), checked against the dimensions.
    func floats() throws(ProtobufError) -> [Float] {
        guard !external else { throw ProtobufError("tensor '\(name)' keeps its data in an external file (not supported)") }
        guard let count = elementCount else { throw ProtobufError("tensor '\(name)' has dimensions \(dimensions)") }
        guard let type = DataType(rawValue: dataType), type == .float || type == .float16 || type == .double else {
            throw ProtobufError("tensor '\(name)' has data type \(dataType), not FLOAT, FLOAT16 or DOUBLE")
        }
        if let raw {
            let size = type == .float ? 4 : type == .float16 ? 2 : 8
            guard raw.count == count * size else {
                throw ProtobufError("tensor '\(name)' holds \(raw.count) bytes of data, its \(count) elements need \(count * size)")
            }
            return bytes.withUnsafeBytes { buffer in
                let base = buffer.baseAddress! + raw.lowerBound
                return (0..<count).map { i in
                    switch type {
                    case .float: return Float(bitPattern: UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))
                    case .float16: return Float(Self.half(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))))
                    default: return Float(Double(bitPattern: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))))
                    }
                }
            }
        }
        let values: [Float]
        switch type {
        case .float: values = floatData
        case .float16: values = int32Data.map { Self.half(UInt16(truncatingIfNeeded: $0)) }
        default: throw ProtobufError("tensor '\(name)': DOUBLE data outside raw_data is not supported")
        }
        guard values.count == count else {
            throw ProtobufError("tensor '\(name)' holds \(values.count) values, its dimensions \(dimensions) need \(count)")
        }
        return values
    }

    /// The values as integers (INT64 and INT32 data), checked against the dimensions.
    func integers() throws(ProtobufError) -> [Int64] {
        guard !external else { throw ProtobufError("tensor '\(name)' keeps its data in an external file (not supported)") }
        guard let count = elementCount else { throw ProtobufError("tensor '\(name)' has dimensions \(dimensions)") }
        guard let type = DataType(rawValue: dataType), type == .int64 || type == .int32 else {
            throw ProtobufError("tensor '\(name)' has data type \(dataType), not INT64 or INT32")
        }
        if let raw {
            let size = type == .int64 ? 8 : 4
            guard raw.count == count * size else {
                throw ProtobufError("tensor '\(name)' holds \(raw.count) bytes of data, its \(count) elements need \(count * size)")
            }
            return bytes.withUnsafeBytes { buffer in
                let base = buffer.baseAddress! + raw.lowerBound
                return (0..<count).map { i in
                    type == .int64 ? Int64(littleEndian: base.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self))
                        : Int64(Int32(littleEndian: base.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self)))
                }
            }
        }
        let values = type == .int64 ? int64Data : int32Data
        guard values.count == count else {
            throw ProtobufError("tensor '\(name)' holds \(values.count) values, its dimensions \(dimensions) need \(count)")
        }
        return values
    }

    /// IEEE 754 binary16 to float (subnormals, infinities and NaN included).
    static func half(_ bits: UInt16) -> Float {
        let sign: UInt32 = UInt32(bits >> 15) << 31
        let exponent = Int((bits >> 10) & 0x1F)
        let mantissa = UInt32(bits & 0x3FF)
        if exponent == 0 {
            let magnitude = Float(mantissa) * Float(sign: .plus, exponent: -24, significand: 1)
            return sign == 0 ? magnitude : -magnitude
        }
        if exponent == 31 { return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13)) }
        return Float(bitPattern: sign | UInt32(exponent - 15 + 127) << 23 | (mantissa << 13))
    }
}
