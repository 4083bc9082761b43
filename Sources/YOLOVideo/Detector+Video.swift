import YOLO

/// One frame's result from `Detector.detections(in:options:policy:)`.
public struct FrameDetections: Sendable {
    /// The frame (index, time, upright image, frames dropped before it).
    public let frame: VideoFrame
    public let detections: [Detection]
    /// From the frame's arrival (decoded) to its result: time waiting for the detector, then `detectionTime`.
    public let latency: Duration
    /// The forward pass and decoding of boxes for this frame.
    public let detectionTime: Duration

    public var index: Int { frame.index }
    public var time: Double { frame.time }
    public var dropped: Int { frame.dropped }
}

extension Detector {
    /// Detection on the frames of `source` as they come: decoding runs on its own thread and overlaps the
    /// forward passes; `policy` (default: the source's, `.latest` for cameras and streams) decides which frames
    /// are detected. Iterate with `for try await`; leaving the loop or cancelling the task stops decoding.
    public func detections(in source: VideoSource, options: DetectionOptions = DetectionOptions(),
                           policy: FramePolicy? = nil, realtime: Bool = false) -> VideoDetections {
        VideoDetections(detector: self, frames: source.frames(policy: policy, realtime: realtime), options: options)
    }
}

/// The per-frame results of `Detector.detections(in:options:policy:)`, pulled one frame at a time.
public struct VideoDetections: AsyncSequence, Sendable {
    public typealias Element = FrameDetections
    let detector: Detector
    let frames: VideoFrames
    let options: DetectionOptions

    public func makeAsyncIterator() -> Iterator {
        Iterator(detector: detector, frames: frames.makeAsyncIterator(), options: options)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let detector: Detector
        var frames: VideoFrames.Iterator
        let options: DetectionOptions

        public mutating func next() async throws -> FrameDetections? {
            guard let frame = try await frames.next() else { return nil }
            let start = ContinuousClock.now
            let detections = try await detector.detect(frame.image, options: options)
            let end = ContinuousClock.now
            return FrameDetections(frame: frame, detections: detections, latency: end - frame.arrival, detectionTime: end - start)
        }
    }
}
