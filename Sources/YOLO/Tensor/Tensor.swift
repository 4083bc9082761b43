/// A dense float32 tensor with a CHW `Shape` (batch 1), owning its storage.
///
/// Used at the edges of the engine (network inputs, head outputs, `.npy` files). Inside a forward
/// pass layers work on raw pointers into a `Workspace` and never allocate.
@_spi(Engine) public struct Tensor: Sendable, Equatable {
    public var shape: Shape
    /// Elements in CHW order; `values.count == shape.count`.
    public var values: [Float]

    public init(shape: Shape, values: [Float]) {
        precondition(values.count == shape.count, "Tensor: \(values.count) values for shape \(shape)")
        self.shape = shape
        self.values = values
    }

    /// A tensor of zeros.
    public init(zeros shape: Shape) {
        self.init(shape: shape, values: [Float](repeating: 0, count: shape.count))
    }

    /// Copies `shape.count` floats from `pointer`.
    public init(shape: Shape, copying pointer: UnsafePointer<Float>) {
        self.init(shape: shape, values: Array(UnsafeBufferPointer(start: pointer, count: shape.count)))
    }

    /// Element (c, y, x).
    public subscript(c: Int, y: Int, x: Int) -> Float {
        get { values[(c * shape.height + y) * shape.width + x] }
        set { values[(c * shape.height + y) * shape.width + x] = newValue }
    }

    /// Largest absolute element-wise difference to `other` (same shape required).
    public func maxAbsDifference(_ other: Tensor) -> Float {
        precondition(shape == other.shape, "maxAbsDifference: \(shape) vs \(other.shape)")
        var worst: Float = 0
        for i in values.indices {
            let d = abs(values[i] - other.values[i])
            if d > worst || d.isNaN { worst = d }
        }
        return worst
    }
}
