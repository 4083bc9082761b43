/// A YOLO detection head. In the forward pass it passes the raw (pre-sigmoid) tensor through;
/// decoding into boxes happens in the detection stage from `anchors`, `mask` and `classes`.
///
/// Channel layout: `anchor · (5 + classes) + [tx, ty, tw, th, objectness, class logits...]`; for an
/// anchor-free head (`distributionBins` > 0): `4 · distributionBins` box logits (left, top, right, bottom,
/// each `distributionBins` bins), then `classes` class logits.
@_spi(Engine) public struct YOLOHead: Layer {
    public let inputs: [Int]
    public let outputShape: Shape
    /// Pairs (width, height) in network-input pixels, all anchors of the model.
    public let anchors: [(width: Float, height: Float)]
    /// Indices into `anchors` used by this head.
    public let mask: [Int]
    public let classes: Int
    /// Darknet's `scale_x_y` (1 for yolov3).
    public let scaleXY: Float
    /// AlexeyAB's `new_coords=1`: outputs already logistic, squared sizes (`YOLOSpec.newCoords`).
    public let newCoords: Bool
    /// Bins per box side of an anchor-free head (`YOLOSpec.distributionBins`); 0 for an anchor head.
    public let distributionBins: Int

    public init(input: Int, shape: Shape, anchors: [(width: Float, height: Float)], mask: [Int], classes: Int,
                scaleXY: Float = 1, newCoords: Bool = false, distributionBins: Int = 0) {
        precondition(shape.channels == (distributionBins > 0 ? 4 * distributionBins + classes : mask.count * (classes + 5)),
                     "YOLOHead: channel count mismatch")
        self.distributionBins = distributionBins
        self.inputs = [input]
        self.outputShape = shape
        self.anchors = anchors
        self.mask = mask
        self.classes = classes
        self.scaleXY = scaleXY
        self.newCoords = newCoords
    }

    public var algorithm: String { "passthrough" }

    /// Copies the input, unless the workspace placed the output on it (`Workspace.routeAliases`: it does).
    public func forward(_ io: LayerIO) {
        guard io.output != UnsafeMutablePointer(mutating: io.input) else { return }
        io.output.update(from: io.input, count: outputShape.count)
    }
}
