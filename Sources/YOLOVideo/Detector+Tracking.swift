import YOLO

/// One frame's result from `Detector.tracks(in:options:tracking:policy:realtime:)`.
public struct FrameTracks: Sendable {
    /// The frame (index, time, upright image, frames dropped before it).
    public let frame: VideoFrame
    /// The frame's detections above the caller's `DetectionOptions.confidenceThreshold`, most confident first:
    /// what `detections(in:options:)` gives for the frame.
    public let detections: [Detection]
    /// The tracks the tracker reports after this frame (ByteTrack's confirmed tracks, ids from 1).
    public let objects: [TrackedObject]
    /// From the frame's arrival (decoded) to its result: time waiting for the detector, then detection.
    public let latency: Duration

    /// The frame's decode index (`frame.index`).
    public var index: Int { frame.index }
    /// The frame's presentation time in seconds (`frame.time`).
    public var time: Double { frame.time }
    /// Frames dropped before this one so far (`frame.dropped`).
    public var dropped: Int { frame.dropped }
}

extension Detector {
    /// Detection and ByteTrack tracking (`Tracker`) on the frames of `source`, as `detections(in:)` runs them.
    ///
    /// ByteTrack's second association matches tracks left over with low-score boxes (`Tracker.Parameters.lowThreshold`
    /// to `highThreshold`, 0.1 to 0.25 by default), which a detector run at the usual 0.25 never reports. So frames
    /// are detected at the lower of `options.confidenceThreshold` and the tracker's `lowThreshold`, the tracker
    /// gets all of those, and `FrameTracks.detections` keeps the ones above `options.confidenceThreshold` (with
    /// `options.maximumDetections` applied after): the same detections, bit for bit, as a run at that threshold.
    ///
    /// ```swift
    /// for try await result in detector.tracks(in: try VideoSource("street.mp4")) {
    ///     for object in result.objects { print(object.id, object.label, object.box) }
    /// }
    /// ```
    ///
    /// - Parameter tracking: the tracker's settings; its `frameRate` becomes the source's when the source
    ///   declares one (lost tracks are kept for `trackBuffer` frames at 30 frames/s, scaled by it).
    public func tracks(in source: VideoSource, options: DetectionOptions = DetectionOptions(),
                       tracking: Tracker.Parameters = Tracker.Parameters(), policy: FramePolicy? = nil,
                       realtime: Bool = false) -> VideoTracks {
        var parameters = tracking
        parameters.frameRate = source.frameRate ?? tracking.frameRate
        var detecting = options
        detecting.confidenceThreshold = Swift.min(options.confidenceThreshold, parameters.lowThreshold)
        detecting.maximumDetections = Int.max
        var reporting = options
        reporting.maximumDetections = options.maximumDetections ?? model.preferredMaximumDetections ?? Int.max
        return VideoTracks(detections: detections(in: source, options: detecting, policy: policy, realtime: realtime),
                           reporting: reporting, parameters: parameters)
    }
}

/// The per-frame results of `Detector.tracks(in:options:tracking:policy:realtime:)`, pulled one frame at a time;
/// each iteration has a tracker of its own.
public struct VideoTracks: AsyncSequence, Sendable {
    /// One frame's detections and tracks.
    public typealias Element = FrameTracks
    let detections: VideoDetections
    let reporting: DetectionOptions
    let parameters: Tracker.Parameters

    /// Starts decoding, with a new tracker.
    public func makeAsyncIterator() -> Iterator {
        Iterator(detections: detections.makeAsyncIterator(), reporting: reporting, tracker: Tracker(parameters: parameters))
    }

    /// Detects and tracks each frame as it is pulled.
    public struct Iterator: AsyncIteratorProtocol {
        var detections: VideoDetections.Iterator
        let reporting: DetectionOptions
        var tracker: Tracker

        /// The next frame's detections and tracks; nil at the end of the source.
        /// - Throws: `CancellationError` once the iterating task is cancelled; the source's decoding errors.
        public mutating func next() async throws -> FrameTracks? {
            guard let result = try await detections.next() else { return nil }
            let objects = tracker.update(result.detections, time: result.time)
            return FrameTracks(frame: result.frame, detections: Self.reported(result.detections, reporting), objects: objects,
                               latency: result.latency)
        }

        /// The detections a run at `options.confidenceThreshold` gives, from those of a run at a lower one:
        /// suppression only lets a box remove less probable ones, so the boxes above the threshold are the same
        /// and only classes at or below it go (with the detections left with none).
        static func reported(_ detections: [Detection], _ options: DetectionOptions) -> [Detection] {
            let threshold = options.confidenceThreshold
            var kept: [Detection] = detections.compactMap { detection in
                guard detection.confidence > threshold else { return nil }
                var detection = detection
                detection.labels.removeAll { $0.confidence <= threshold }
                return detection
            }
            if let limit = options.maximumDetections, kept.count > limit { kept.removeSubrange(limit...) }
            return kept
        }
    }
}
