/// Darknet's route layer: the channel-wise concatenation of earlier layers' outputs, in cfg order.
///
/// With `groups > 1` each source contributes only its `groupIndex`-th slice of channels
/// (AlexeyAB's extension used by yolov4-tiny). All sources must share height and width.
@_spi(Engine) public struct Route: Layer {
    public let inputs: [Int]
    public let inputShapes: [Shape]
    public let outputShape: Shape
    public let groups: Int
    public let groupIndex: Int
    /// Bytes per element: 4 (float), or 1 between int8 layers (every source in the same u8 format).
    public let elementBytes: Int

    public init(inputs: [Int], inputShapes: [Shape], groups: Int = 1, groupIndex: Int = 0, elementBytes: Int = 4) {
        self.elementBytes = elementBytes
        precondition(!inputs.isEmpty && inputs.count == inputShapes.count, "Route: needs inputs")
        precondition(groups >= 1 && groupIndex >= 0 && groupIndex < groups, "Route: bad group")
        let first = inputShapes[0]
        precondition(inputShapes.allSatisfy { $0.height == first.height && $0.width == first.width },
                     "Route: inputs differ in size")
        self.inputs = inputs
        self.inputShapes = inputShapes
        self.groups = groups
        self.groupIndex = groupIndex
        self.outputShape = Shape(channels: inputShapes.reduce(0) { $0 + $1.channels / groups },
                                 height: first.height, width: first.width)
    }

    public var algorithm: String { elementBytes == 1 ? "copy (u8)" : "copy" }

    /// Copies each part into place, except parts already there: the workspace lets a route be a view of
    /// its one source, and lets sources write straight into the route's output (`Workspace.routeAliases`).
    public func forward(_ io: LayerIO) {
        var destination = UnsafeMutableRawPointer(io.output)
        for (k, shape) in inputShapes.enumerated() {
            let part = shape.count / groups * elementBytes
            let source = UnsafeRawPointer(io.inputs[k]) + groupIndex * part
            if source != UnsafeRawPointer(destination) { destination.copyMemory(from: source, byteCount: part) }
            destination += part
        }
    }
}
