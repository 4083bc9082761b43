/// The target as a tracker keeps it: centre and size in frame pixels.
struct TargetState {
    var centerX: Double, centerY: Double
    var width: Double, height: Double

    /// The box, top-left origin.
    var box: Rect { Rect(x: centerX - width / 2, y: centerY - height / 2, width: width, height: height) }
}

/// One algorithm behind `ObjectTracker`: seeded with a frame and a target, then moved frame by frame.
protocol TrackingEngine: AnyObject {
    /// The target in the frame and the confidence (0…1). The engine updates its model itself when confident.
    func track(_ frame: TrackingFrame) -> (TargetState, Double)
}

extension TargetState {
    /// The state with its centre clamped to the frame and its size to [`minimum`, the frame's size × 2].
    func clamped(frameWidth: Int, frameHeight: Int, minimum: Double) -> TargetState {
        TargetState(centerX: min(max(centerX, 0), Double(frameWidth)), centerY: min(max(centerY, 0), Double(frameHeight)),
                    width: min(max(width, minimum), 2 * Double(frameWidth)),
                    height: min(max(height, minimum), 2 * Double(frameHeight)))
    }
}

extension TargetState {
    /// Shifts of the response peak under this many cells are taken as no motion: the filter's fit to its label is
    /// not exactly symmetric, and its sub-cell bias would otherwise walk the box off a still object frame by frame.
    static let deadZone = 0.1

    /// Moves the centre by a response peak's shift (cells) at `cellPixels` frame pixels per cell.
    mutating func move(by peak: ResponsePeak, cellPixels: (Double, Double)) {
        if abs(peak.dx) >= Self.deadZone || abs(peak.dy) >= Self.deadZone {
            centerX += peak.dx * cellPixels.0
            centerY += peak.dy * cellPixels.1
        }
    }
}
