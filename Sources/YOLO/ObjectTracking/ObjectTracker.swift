/// Follows one object through the frames of a stream, from a box around it in the first frame: any object, no
/// detector in the loop (Vision's `VNTrackObjectRequest`).
///
/// ```swift
/// let tracker = try ObjectTracker(image: first, box: Rect(x: 120, y: 80, width: 60, height: 90))   // pixels
/// for image in frames {
///     let seen = try tracker.update(with: image)
///     if seen.isLost { break }                      // confidence ≤ 0.3
///     print(seen.box, seen.confidence)
/// }
/// ```
///
/// Boxes are in pixels of the frame with a top-left origin (`ObjectObservation.normalizedBox` gives 0…1).
/// Every frame must have the seed frame's size. Several trackers in one stream share the per-frame work when
/// they are updated together with ``update(_:with:)``. A tracker is `Sendable`: its state is
/// behind a lock, so calls from several threads are safe and take turns.
public final class ObjectTracker: Sendable {
    /// The algorithm this tracker runs.
    public let level: TrackingLevel
    /// The width every frame must have, in pixels (the seed frame's).
    public let frameWidth: Int
    /// The height every frame must have, in pixels (the seed frame's).
    public let frameHeight: Int
    private let state: Locked<State>

    private struct State: @unchecked Sendable {  // the engine is only touched under the lock
        let engine: any TrackingEngine
        var frameIndex = 0
        var last: ObjectObservation
    }

    /// Seeds a tracker with `box` (pixels of `frame`, top-left origin; clipped to the frame).
    /// - Throws: `YOLOError.invalidArgument` when the box is not finite, is under 2 pixels wide or high, lies
    ///   outside the frame, or keeps under 2 pixels of width or height inside it.
    init(frame: TrackingFrame, box: Rect, level: TrackingLevel = .accurate) throws {
        let (w, h) = (Double(frame.width), Double(frame.height))
        guard [box.x, box.y, box.width, box.height].allSatisfy(\.isFinite) else {
            throw YOLOError.invalidArgument("the box \(Self.text(box)) is not a finite rectangle")
        }
        guard box.width >= 2, box.height >= 2 else {
            throw YOLOError.invalidArgument("the box \(Self.text(box)) is too small to track: at least 2x2 pixels")
        }
        let clipped = Rect(x1: max(box.minX, 0), y1: max(box.minY, 0), x2: min(box.maxX, w), y2: min(box.maxY, h))
        guard clipped.width > 0, clipped.height > 0 else {
            throw YOLOError.invalidArgument("the box \(Self.text(box)) lies outside the \(frame.width)x\(frame.height) frame")
        }
        guard clipped.width >= 2, clipped.height >= 2 else {
            throw YOLOError.invalidArgument("the box \(Self.text(box)) is too small to track: at least 2x2 pixels inside the frame")
        }
        let target = TargetState(centerX: clipped.midX, centerY: clipped.midY, width: clipped.width, height: clipped.height)
        let engine: any TrackingEngine = switch level {
        case .fast: FastTrackingEngine(frame: frame, target: target)
        case .accurate: AccurateTrackingEngine(frame: frame, target: target)
        }
        self.level = level
        (frameWidth, frameHeight) = (frame.width, frame.height)
        let first = ObjectObservation(box: clipped, frameWidth: frame.width, frameHeight: frame.height, confidence: 1, frameIndex: 0)
        state = Locked(State(engine: engine, last: first))
    }

    /// Seeds a tracker with `box` in pixels of `image`.
    public convenience init(image: Image, box: Rect, level: TrackingLevel = .accurate) throws {
        try self.init(frame: TrackingFrame(image), box: box, level: level)
    }

    /// Seeds a tracker with a box normalized to `image` (0…1, top-left origin, as `Detection.box`).
    public convenience init(image: Image, normalizedBox: Rect, level: TrackingLevel = .accurate) throws {
        try self.init(image: image, box: normalizedBox.scaled(width: Double(image.width), height: Double(image.height)), level: level)
    }

    /// Seeds a tracker with a detection's box in `image` (the image it was detected in).
    public convenience init(image: Image, detection: Detection, level: TrackingLevel = .accurate) throws {
        try self.init(image: image, normalizedBox: detection.box, level: level)
    }

    /// The latest observation: the seed box with confidence 1 before the first update.
    public var lastObservation: ObjectObservation { state.withLock { $0.last } }

    /// Finds the object in the next frame of the stream.
    /// - Throws: `YOLOError.invalidArgument` when the frame's size differs from the seed frame's.
    func update(with frame: TrackingFrame) throws -> ObjectObservation {
        guard frame.width == frameWidth, frame.height == frameHeight else {
            throw YOLOError.invalidArgument("a \(frame.width)x\(frame.height) frame for a tracker seeded on a \(frameWidth)x\(frameHeight) frame")
        }
        return state.withLock { state in
            let (target, confidence) = state.engine.track(frame)
            state.frameIndex += 1
            state.last = ObjectObservation(box: target.box, frameWidth: frameWidth, frameHeight: frameHeight,
                                           confidence: confidence, frameIndex: state.frameIndex)
            return state.last
        }
    }

    /// Finds the object in the next image of the stream.
    public func update(with image: Image) throws -> ObjectObservation {
        try update(with: TrackingFrame(image))
    }

    /// Updates several trackers following objects in one stream with one image, preparing the frame once.
    public static func update(_ trackers: [ObjectTracker], with image: Image) throws -> [ObjectObservation] {
        let frame = TrackingFrame(image)
        return try trackers.map { try $0.update(with: frame) }
    }

    private static func text(_ r: Rect) -> String {
        [r.x, r.y, r.width, r.height].map { abs($0) < 1e15 && $0 == $0.rounded() ? String(Int($0)) : "\($0)" }.joined(separator: ",")
    }
}
