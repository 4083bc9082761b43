import Foundation

/// An axis-aligned rectangle: origin (`x`, `y`) and size.
///
/// In `Detection.box` and `DetectionOptions.regionOfInterest` coordinates are normalized to the full,
/// upright image: (0, 0) is its top-left corner, (1, 1) its bottom-right.
public struct Rect: Sendable, Hashable, CustomStringConvertible {
    /// The left edge.
    public var x: Double
    /// The top edge (a top-left origin, y growing downwards).
    public var y: Double
    /// The width (may be negative only if built so; detections are never).
    public var width: Double
    /// The height.
    public var height: Double

    /// The rectangle with origin (`x`, `y`) and size `width × height`.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle from corner (x1, y1) to corner (x2, y2).
    public init(x1: Double, y1: Double, x2: Double, y2: Double) {
        self.init(x: x1, y: y1, width: x2 - x1, height: y2 - y1)
    }

    /// The unit square: the whole image.
    public static let unit = Rect(x: 0, y: 0, width: 1, height: 1)

    /// The left edge, `x`.
    public var minX: Double { x }
    /// The top edge, `y`.
    public var minY: Double { y }
    /// The right edge, `x + width`.
    public var maxX: Double { x + width }
    /// The bottom edge, `y + height`.
    public var maxY: Double { y + height }
    /// The horizontal centre.
    public var midX: Double { x + width / 2 }
    /// The vertical centre.
    public var midY: Double { y + height / 2 }
    /// `width × height`, 0 for an empty or inverted rectangle.
    public var area: Double { max(width, 0) * max(height, 0) }

    /// Intersection over union with `other`; 0 when they do not overlap.
    public func iou(_ other: Rect) -> Double {
        let w = min(maxX, other.maxX) - max(minX, other.minX)
        let h = min(maxY, other.maxY) - max(minY, other.minY)
        guard w > 0, h > 0 else { return 0 }
        let intersection = w * h
        return intersection / (area + other.area - intersection)
    }

    /// Distance-IoU as darknet's `box_diounms` computes it for DIoU-NMS: IoU − (d²/c²)^beta, d the distance
    /// of the centres, c the diagonal of the smallest rectangle enclosing both (IoU alone when c is 0).
    /// Never above the IoU, so it can only suppress pairs that overlap.
    @_spi(Engine) public func distanceIoU(_ other: Rect, beta: Double) -> Double {
        let iou = iou(other)
        let cw = max(maxX, other.maxX) - min(minX, other.minX)
        let ch = max(maxY, other.maxY) - min(minY, other.minY)
        let c = cw * cw + ch * ch
        guard c > 0 else { return iou }
        let (dx, dy) = (midX - other.midX, midY - other.midY)
        return iou - pow((dx * dx + dy * dy) / c, beta)
    }

    /// This rectangle clipped to the unit square (may become empty); itself, unchanged, when it lies inside.
    public var clippedToUnit: Rect {
        if minX >= 0, minY >= 0, maxX <= 1, maxY <= 1 { return self }
        let x1 = min(max(minX, 0), 1), y1 = min(max(minY, 0), 1)
        let x2 = min(max(maxX, 0), 1), y2 = min(max(maxY, 0), 1)
        return Rect(x1: x1, y1: y1, x2: max(x1, x2), y2: max(y1, y2))
    }

    /// This normalized rectangle in pixels of an image of `width × height`.
    public func scaled(width w: Double, height h: Double) -> Rect {
        Rect(x: x * w, y: y * h, width: width * w, height: height * h)
    }

    /// The same normalized rectangle with a lower-left origin (Apple Vision's convention).
    public var flippedVertically: Rect { Rect(x: x, y: 1 - maxY, width: width, height: height) }

    public var description: String { "(\(x), \(y), \(width)x\(height))" }
}
