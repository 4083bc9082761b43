import Foundation
@_spi(Engine) import YOLO

/// A COCO box: `[x, y, width, height]` in pixels, top-left origin, as in COCO annotation and result files.
public struct COCOBox: Sendable, Equatable, Hashable {
    /// Left edge, pixels.
    public var x: Double
    /// Top edge, pixels.
    public var y: Double
    /// Width, pixels.
    public var width: Double
    /// Height, pixels.
    public var height: Double

    /// Makes a box from its top-left corner and size, in pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// `width * height`, square pixels (what pycocotools' `loadRes` stores as a result's `area`).
    public var area: Double { width * height }

    /// The box with each number rounded to `decimals` decimal places (results files need no more than
    /// 1e-4 px; a Float-derived value printed in full has ~10 meaningless digits).
    public func rounded(decimals: Int) -> COCOBox {
        let scale = pow(10, Double(decimals))
        func round(_ value: Double) -> Double { (value * scale).rounded() / scale }
        return COCOBox(x: round(x), y: round(y), width: round(width), height: round(height))
    }

    /// The four numbers in COCO order `[x, y, width, height]`.
    public var array: [Double] { [x, y, width, height] }

    // MARK: Overlap

    /// Overlap of a detection with a ground-truth box, as COCO's bbox evaluation defines it:
    /// intersection over union, or, for a crowd ground truth, intersection over the detection's own area
    /// (a detection fully inside a crowd region scores 1). Zero when the boxes do not overlap with
    /// positive width and height. Computed in the same order of operations as pycocotools so that
    /// comparisons with the IoU thresholds come out the same.
    static func overlap(detection d: COCOBox, groundTruth g: COCOBox, crowd: Bool) -> Double {
        let overlapWidth = min(d.width + d.x, g.width + g.x) - max(d.x, g.x)
        if overlapWidth <= 0 { return 0 }
        let overlapHeight = min(d.height + d.y, g.height + g.y) - max(d.y, g.y)
        if overlapHeight <= 0 { return 0 }
        let intersection = overlapWidth * overlapHeight
        let detectionArea = d.width * d.height
        let union = crowd ? detectionArea : detectionArea + g.width * g.height - intersection
        return intersection / union
    }
}
