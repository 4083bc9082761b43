/// An immutable run of bytes: packed quantization codes.
///
/// Like `FloatBuffer`, it either owns its memory (copied from an array) or borrows memory kept
/// alive by `owner` (a memory-mapped model file), so codes can be used where they are stored.
public final class ByteBuffer: @unchecked Sendable {
    /// First byte. Valid for `count` bytes for the life of this object.
    public let pointer: UnsafePointer<UInt8>
    public let count: Int
    private let owned: UnsafeMutablePointer<UInt8>?
    private let owner: AnyObject?

    /// Copies `values` into memory owned by the buffer.
    public init(_ values: [UInt8]) {
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: max(values.count, 1))
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { memory.initialize(from: base, count: values.count) }
        }
        pointer = UnsafePointer(memory)
        count = values.count
        owned = memory
        owner = nil
    }

    /// Uses `count` bytes at `pointer` without copying; `owner` keeps that memory alive.
    public init(borrowing pointer: UnsafePointer<UInt8>, count: Int, owner: AnyObject) {
        self.pointer = pointer
        self.count = count
        self.owned = nil
        self.owner = owner
    }

    deinit { owned?.deallocate() }

    /// The bytes as a buffer pointer.
    public var buffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: pointer, count: count) }

    /// A copy of the bytes.
    public var array: [UInt8] { Array(buffer) }
}
