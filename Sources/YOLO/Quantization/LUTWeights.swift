/// Whether a quantized layer has one table or one per output channel.
public enum LUTGranularity: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// One table for the whole layer.
    case perLayer = 0
    /// One table per output channel (filter).
    case perChannel = 1

    /// `per-layer` or `per-channel`, as the command line spells it.
    public var description: String { self == .perLayer ? "per-layer" : "per-channel" }

    /// Parses `per-layer` or `per-channel`.
    @_spi(Engine) public init?(name: String) {
        guard let value = LUTGranularity.allCases.first(where: { $0.description == name }) else { return nil }
        self = value
    }
}

/// The weights of one convolution stored as LUT codes.
///
/// A weight of row (output channel) `r` with code `i` is `ŵ = scale[r] · table[i]` in float32,
/// where `table` holds `2^bits` normalized values (ascending, within [−1, 1]) shared by the layer
/// and `scale[r]` is the row's float32 scale (per channel) or the one layer scale (per layer).
/// So each output channel has its own table `scale[r] · table`, stored as 4 bytes per channel
/// plus one shared shape: full independent per-channel tables would cost `2^bits · 4` bytes
/// per channel (3.8 MB for yolov3-tiny at 8 bits, more than its whole weight budget).
///
/// Codes are `rows × rowLength` values in row-major order, packed as `type.traits` describes.
@_spi(Engine) public struct LUTWeights: Sendable {
    public let type: LUTType
    public let granularity: LUTGranularity
    /// Output channels (filters).
    public let rows: Int
    /// Weights per row: `inChannels · size²`.
    public let rowLength: Int
    /// `2^bits` floats.
    public let table: FloatBuffer
    /// `rows` floats (per channel) or 1 float (per layer).
    public let scales: FloatBuffer
    /// `type.packedByteCount(codes: rows · rowLength)` bytes.
    public let codes: ByteBuffer

    /// - Precondition: the buffer sizes fit `type`, `granularity`, `rows` and `rowLength`
    ///   (the model-file reader checks this for user files before calling).
    public init(type: LUTType, granularity: LUTGranularity, rows: Int, rowLength: Int,
                table: FloatBuffer, scales: FloatBuffer, codes: ByteBuffer) {
        precondition(rows > 0 && rowLength > 0, "LUTWeights: empty layer")
        precondition(table.count == type.tableSize, "LUTWeights: \(table.count) table entries for \(type)")
        precondition(scales.count == (granularity == .perChannel ? rows : 1), "LUTWeights: \(scales.count) scales for \(granularity) with \(rows) rows")
        precondition(codes.count == type.packedByteCount(codes: rows * rowLength), "LUTWeights: \(codes.count) code bytes for \(rows)x\(rowLength) \(type) codes")
        self.type = type
        self.granularity = granularity
        self.rows = rows
        self.rowLength = rowLength
        self.table = table
        self.scales = scales
        self.codes = codes
    }

    /// Number of weights: `rows · rowLength`.
    public var count: Int { rows * rowLength }

    /// Bytes the codes, table and scales take (what a model file stores for these weights).
    public var storedByteCount: Int { codes.count + 4 * table.count + 4 * scales.count }

    /// The scale of row `row`.
    @inlinable public func scale(ofRow row: Int) -> Float {
        granularity == .perChannel ? scales[row] : scales[0]
    }

    // MARK: Expansion (to float)

    /// Writes the float weights of rows `range` to `output` (`range.count · rowLength` floats,
    /// row-major). Allocates nothing.
    public func expand(rows range: Range<Int>, into output: UnsafeMutablePointer<Float>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= rows, "LUTWeights.expand: rows \(range) outside 0..<\(rows)")
        let expand = type.traits.expand
        for row in range {
            expand(codes.pointer, row * rowLength, rowLength, table.pointer, scale(ofRow: row),
                   output + (row - range.lowerBound) * rowLength)
        }
    }

    /// All weights as floats, `[rows][rowLength]`, in memory owned by the returned buffer
    /// (written in place: no temporary array).
    public func expanded() -> FloatBuffer {
        FloatStorage.buffer(count: count) { expand(rows: 0..<rows, into: $0) }
    }

    /// The codes, unpacked (one per element; for tests and reports).
    public func unpackedCodes() -> [UInt8] {
        let traits = type.traits
        return (0..<count).map { traits.code(codes.pointer, at: $0) }
    }
}

/// Float memory allocated once and filled in place, owned by the `FloatBuffer` that borrows it.
///
/// Large weight buffers built through a temporary `[Float]` cost a second copy, and glibc keeps
/// the freed temporaries in its heap, so resident memory would grow by the copies.
final class FloatStorage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>

    private init(count: Int) {
        pointer = LargeAllocation.allocate(Float.self, count: count)
        pointer.initialize(repeating: 0, count: count)
    }

    deinit { pointer.deallocate() }

    /// A buffer of `count` floats written by `fill`.
    static func buffer(count: Int, fill: (UnsafeMutablePointer<Float>) -> Void) -> FloatBuffer {
        let storage = FloatStorage(count: count)
        fill(storage.pointer)
        return FloatBuffer(borrowing: storage.pointer, count: count, owner: storage)
    }

    /// An owned copy of `source`.
    static func copy(_ source: FloatBuffer) -> FloatBuffer {
        buffer(count: source.count) { $0.update(from: source.pointer, count: source.count) }
    }
}
