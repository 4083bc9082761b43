import YOLO

/// One frame's result from `Detector.detections(in:options:policy:realtime:)`.
public struct FrameDetections: Sendable {
    /// The frame (index, time, upright image, frames dropped before it).
    public let frame: VideoFrame
    /// The frame's detections, most confident first (boxes normalized to the frame, as `Detector.detect` gives).
    public let detections: [Detection]
    /// From the frame's arrival (decoded) to its result: time waiting for the detector, then `detectionTime`.
    public let latency: Duration
    /// The forward pass and decoding of boxes for this frame.
    public let detectionTime: Duration

    /// The frame's decode index (`frame.index`).
    public var index: Int { frame.index }
    /// The frame's presentation time in seconds (`frame.time`).
    public var time: Double { frame.time }
    /// Frames dropped before this one so far (`frame.dropped`).
    public var dropped: Int { frame.dropped }
}

extension Detector {
    /// Detection on the frames of `source` as they come: decoding runs on its own thread and overlaps the
    /// forward passes; `policy` (default: the source's, `.latest` for cameras and streams) decides which frames
    /// are detected. Iterate with `for try await`; leaving the loop stops decoding, and cancelling the task
    /// stops it too and ends the loop with `CancellationError`.
    public func detections(in source: VideoSource, options: DetectionOptions = DetectionOptions(),
                           policy: FramePolicy? = nil, realtime: Bool = false) -> VideoDetections {
        VideoDetections(detector: self, frames: source.frames(policy: policy, realtime: realtime), options: options)
    }
}

/// The per-frame results of `Detector.detections(in:options:policy:realtime:)`, pulled one frame at a time.
public struct VideoDetections: AsyncSequence, Sendable {
    /// One frame's detections.
    public typealias Element = FrameDetections
    let detector: Detector
    let frames: VideoFrames
    let options: DetectionOptions

    /// Starts decoding (see `VideoFrames`).
    public func makeAsyncIterator() -> Iterator {
        Iterator(detector: detector, frames: frames.makeAsyncIterator(), options: options)
    }

    /// Detects each frame as it is pulled.
    public struct Iterator: AsyncIteratorProtocol {
        let detector: Detector
        var frames: VideoFrames.Iterator
        let options: DetectionOptions

        /// The next frame's detections; nil at the end of the source.
        /// - Throws: `CancellationError` once the iterating task is cancelled; the source's decoding errors.
        public mutating func next() async throws -> FrameDetections? {
            try Task.checkCancellation()
            guard let frame = try await frames.next() else { return nil }
            let start = ContinuousClock.now
            let detections = try await detector.detections(in: frame.image, options: options)
            let end = ContinuousClock.now
            return FrameDetections(frame: frame, detections: detections, latency: end - frame.arrival, detectionTime: end - start)
        }
    }
}
