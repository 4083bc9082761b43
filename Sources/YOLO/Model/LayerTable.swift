import Foundation

/// One row of the darknet-style layer table.
@_spi(Engine) public struct LayerSummary: Sendable {
    /// Layer type as darknet prints it: `conv`, `max`, `upsample`, `route`, `shortcut`, `yolo`.
    public var type: String
    /// Filters of a convolution, empty otherwise.
    public var filters: String = ""
    /// Kernel size and stride (`3 x 3 / 1`), or the source layers of a route.
    public var detail: String = ""
    /// The first input's shape.
    public var inputShape: Shape
    public var outputShape: Shape
    /// Floating-point operations: a multiply-add counts 2; a max-pool counts one per window cell
    /// (darknet's convention), so yolov3-tiny at 416 totals 5.571 BFLOPs, 5.565 of them in convolutions.
    public var flops: Double = 0
    /// Stored parameters after batch-norm folding: weights and biases.
    public var parameters: Int = 0
}

/// The layer table `yolo info` prints.
@_spi(Engine) public struct LayerTable: Sendable {
    public var rows: [LayerSummary]

    /// Summarizes `description` at the sizes in `geometry` (from `description.geometry(width:height:)`).
    public init(description: ModelDescription, geometry: [LayerGeometry]) {
        rows = zip(description.layers, geometry).map { spec, g in
            var row = LayerSummary(type: "", inputShape: g.inputShapes[0], outputShape: g.outputShape)
            switch spec {
            case .convolution(let s):
                let patch = g.inputShapes[0].channels / s.groups * s.size * s.size
                row.type = "conv"
                row.filters = "\(s.filters)"
                row.detail = "\(s.size) x \(s.size) / \(s.stride)" + (s.isGrouped ? " g\(s.groups)" : "")
                row.flops = 2 * Double(s.filters * patch * g.outputShape.planeCount)
                row.parameters = s.filters * patch + s.filters
            case .maxPool(let s):
                row.type = "max"
                row.detail = "\(s.size) x \(s.size) / \(s.stride)"
                row.flops = Double(s.size * s.size * g.outputShape.count)
            case .upsample(let s):
                row.type = "upsample"
                row.detail = "\(s.stride)x"
            case .route(let s):
                row.type = "route"
                row.detail = s.layers.map(String.init).joined(separator: " ")
            case .shortcut(let s):
                row.type = "shortcut"
                row.detail = "\(s.from)"
                row.flops = Double(g.outputShape.count)
            case .attention(let s):
                row.type = "attn"
                row.detail = "\(s.heads) heads"
                // Per head: the N × N scores (keyChannels multiply-adds each), their softmax, the values' sums.
                let n = Double(g.outputShape.planeCount)
                row.flops = Double(s.heads) * n * n * Double(2 * s.keyChannels + 2 * s.valueChannels + 3)
            case .yolo(let s) where s.isAnchorFree:
                row.type = "detect"
                row.detail = "\(s.classes) classes, \(s.distributionBins) bins"
            case .yolo(let s):
                row.type = "yolo"
                row.detail = "mask " + s.mask.map(String.init).joined(separator: ",")
            }
            return row
        }
    }

    public var totalFlops: Double { rows.reduce(0) { $0 + $1.flops } }
    public var convolutionFlops: Double { rows.filter { $0.type == "conv" }.reduce(0) { $0 + $1.flops } }
    public var totalParameters: Int { rows.reduce(0) { $0 + $1.parameters } }

    /// The table as text, one layer per line, then the totals.
    public func render() -> String {
        var lines = [pad("layer", 5) + "  " + pad("type", 8) + pad("filters", 8, right: true) + "  " + pad("size/stride", 14)
                     + pad("input", 13, right: true) + "   ->  " + pad("output", 13) + pad("BFLOPs", 8, right: true)
                     + pad("params", 10, right: true)]
        for (index, row) in rows.enumerated() {
            lines.append(pad("\(index)", 5, right: true) + "  " + pad(row.type, 8) + pad(row.filters, 8, right: true) + "  "
                         + pad(row.detail, 14) + pad(row.inputShape.description, 13, right: true) + "   ->  "
                         + pad(row.outputShape.description, 13)
                         + pad(row.flops > 0 ? String(format: "%.3f", row.flops / 1e9) : "", 8, right: true)
                         + pad(row.parameters > 0 ? "\(row.parameters)" : "", 10, right: true))
        }
        lines.append(String(format: "Total: %.3f BFLOPs (convolutions %.3f, max-pool windows %.3f), %d parameters",
                            totalFlops / 1e9, convolutionFlops / 1e9, (totalFlops - convolutionFlops) / 1e9, totalParameters))
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
}
