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
    /// From `parallelBytes` on, the threads copy equal shares of the bytes (blocks of `copyBlock`).
    public func forward(_ io: LayerIO) {
        var total = 0
        forEachCopy(io) { _, _, bytes in total += bytes }
        guard total > 0 else { return }
        let block = Self.copyBlock
        Parallel.forRanges((total + block - 1) / block, threads: total >= Self.parallelBytes ? io.threads : 1) { blocks in
            let (start, end) = (blocks.lowerBound * block, min(total, blocks.upperBound * block))
            var base = 0
            forEachCopy(io) { source, destination, bytes in
                let (low, high) = (max(start, base), min(end, base + bytes))
                if low < high { (destination + (low - base)).copyMemory(from: source + (low - base), byteCount: high - low) }
                base += bytes
            }
        }
    }

    /// Bytes of copies from which a route's threads share them (below, waking a worker costs about what it saves),
    /// and the share's unit.
    static let parallelBytes = 524_288
    static let copyBlock = 4_096

    /// `body(source, destination, bytes)` for each part not already in place, in order.
    @inline(__always)
    func forEachCopy(_ io: LayerIO, _ body: (UnsafeRawPointer, UnsafeMutableRawPointer, Int) -> Void) {
        var destination = UnsafeMutableRawPointer(io.output)
        for (k, shape) in inputShapes.enumerated() {
            let part = shape.count / groups * elementBytes
            let source = UnsafeRawPointer(io.inputs[k]) + groupIndex * part
            if source != UnsafeRawPointer(destination) { body(source, destination, part) }
            destination += part
        }
    }
}
