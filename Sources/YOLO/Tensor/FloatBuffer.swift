/// An immutable run of float32 values: a layer's weights or biases.
///
/// Either owns its memory (copied from an array) or borrows memory kept alive by `owner`
/// (for example a memory-mapped model file), so weights can be used where they are stored.
public final class FloatBuffer: @unchecked Sendable {
    /// First element. Valid for `count` elements for the life of this object.
    public let pointer: UnsafePointer<Float>
    public let count: Int
    private let owned: UnsafeMutablePointer<Float>?
    private let owner: AnyObject?

    /// Copies `values` into memory owned by the buffer.
    public init(_ values: [Float]) {
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: max(values.count, 1))
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { memory.initialize(from: base, count: values.count) }
        }
        pointer = UnsafePointer(memory)
        count = values.count
        owned = memory
        owner = nil
    }

    /// Allocates `count` floats, zero-filled, and lets `fill` write them (no intermediate array).
    public init(count: Int, fill: (UnsafeMutableBufferPointer<Float>) -> Void) {
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
        memory.initialize(repeating: 0, count: max(count, 1))
        fill(UnsafeMutableBufferPointer(start: memory, count: count))
        pointer = UnsafePointer(memory)
        self.count = count
        owned = memory
        owner = nil
    }

    /// Uses `count` floats at `pointer` without copying; `owner` keeps that memory alive.
    public init(borrowing pointer: UnsafePointer<Float>, count: Int, owner: AnyObject) {
        self.pointer = pointer
        self.count = count
        self.owned = nil
        self.owner = owner
    }

    deinit { owned?.deallocate() }

    /// The values as a buffer pointer.
    public var buffer: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: pointer, count: count) }

    /// A copy of the values.
    public var array: [Float] { Array(buffer) }

    @inlinable public subscript(i: Int) -> Float { pointer[i] }
}
