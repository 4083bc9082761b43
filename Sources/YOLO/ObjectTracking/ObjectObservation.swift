/// Where a tracked object is in one frame: `ObjectTracker`'s answer (Vision's `VNDetectedObjectObservation`).
public struct ObjectObservation: Sendable, Equatable {
    /// The object's box in pixels of the frame, top-left origin (not clipped: it may reach past an edge).
    public let box: Rect
    /// `box` normalized to the frame (0…1, top-left origin).
    public let normalizedBox: Rect
    /// How sure the tracker is that the box still holds the object, 0…1, from the correlation response's
    /// peak-to-sidelobe ratio (docs/TRACKING.md says how). Vision's conventions apply: above 0.5 tracking,
    /// 0.3 or below lost.
    public let confidence: Double
    /// The frame's index in the tracker's stream: 0 for the seed frame, then 1, 2, ….
    public let frameIndex: Int

    /// Confidence at or below which the object counts as lost.
    public static let lostThreshold = 0.3

    /// Whether the object is lost (`confidence <= lostThreshold`): the box is the last place the tracker
    /// believed in, and its model is no longer updated until the object is found again.
    public var isLost: Bool { confidence <= Self.lostThreshold }

    /// `normalizedBox` with a lower-left origin, as Vision's `boundingBox`.
    public var visionBoundingBox: Rect { normalizedBox.flippedVertically }

    init(box: Rect, frameWidth: Int, frameHeight: Int, confidence: Double, frameIndex: Int) {
        self.box = box
        normalizedBox = Rect(x: box.x / Double(frameWidth), y: box.y / Double(frameHeight),
                             width: box.width / Double(frameWidth), height: box.height / Double(frameHeight))
        self.confidence = min(max(confidence, 0), 1)
        self.frameIndex = frameIndex
    }
}
