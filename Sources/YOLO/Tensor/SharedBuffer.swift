/// An immutable run of values shared without copying: a layer's weights, biases or packed LUT codes.
///
/// Either owns its memory (copied from an array, or filled once at creation) or borrows memory kept
/// alive by `owner` (for example a memory-mapped model file), so values can be used where they are stored.
@_spi(Engine) public final class SharedBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    /// First element. Valid for `count` elements for the life of this object.
    public let pointer: UnsafePointer<Element>
    public let count: Int
    private let owned: UnsafeMutablePointer<Element>?
    private let owner: AnyObject?

    /// Copies `values` into memory owned by the buffer.
    public init(_ values: [Element]) {
        let memory = LargeAllocation.allocate(Element.self, count: values.count)
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { memory.initialize(from: base, count: values.count) }
        }
        pointer = UnsafePointer(memory)
        count = values.count
        owned = memory
        owner = nil
    }

    /// Allocates `count` elements, zero-filled, and lets `fill` write them (no intermediate array).
    public init(count: Int, fill: (UnsafeMutableBufferPointer<Element>) -> Void) {
        let memory = LargeAllocation.allocate(Element.self, count: count)
        UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: 0,
                                                         count: max(count, 1) * MemoryLayout<Element>.stride)
        fill(UnsafeMutableBufferPointer(start: memory, count: count))
        pointer = UnsafePointer(memory)
        self.count = count
        owned = memory
        owner = nil
    }

    /// Uses `count` elements at `pointer` without copying; `owner` keeps that memory alive.
    public init(borrowing pointer: UnsafePointer<Element>, count: Int, owner: AnyObject) {
        self.pointer = pointer
        self.count = count
        self.owned = nil
        self.owner = owner
    }

    deinit { owned?.deallocate() }

    /// The values as a buffer pointer.
    public var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: pointer, count: count) }

    /// A copy of the values.
    public var array: [Element] { Array(buffer) }

    @inlinable public subscript(i: Int) -> Element { pointer[i] }
}

/// float32 weights and biases.
@_spi(Engine) public typealias FloatBuffer = SharedBuffer<Float>
/// Packed LUT codes.
@_spi(Engine) public typealias ByteBuffer = SharedBuffer<UInt8>
