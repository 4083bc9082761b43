import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOTestSupport
import YOLOVideo

/// What an embedding app sees of the API: clipped boxes (and the unclipped option), the synchronous `detect`
/// inside `async` code beside the asynchronous `detections(in:)`, cancellation, and the tracking pipeline's
/// low-score detections.
@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct DetectorAPITests {
    static func samples() throws -> [Image] {
        try ["astronaut", "camera", "chelsea", "coffee"].map { try Image(contentsOf: TestPaths.root + "/Samples/\($0).png") }
    }

    /// Default: every box inside the image, in normalized and in pixel coordinates; `clipsBoxes = false`: the
    /// same detections (classes, scores, order) with the network's boxes, of which the clipped ones are the
    /// clipping; at least one sample box extends past an edge, so the clipping is seen.
    @Test func boxesAreClippedToTheImageUnlessAskedNot() throws {
        let detector = try Detector(model: #require(TinyYOLO.model))
        var unclippedOptions = DetectionOptions()
        unclippedOptions.clipsBoxes = false
        var outside = 0
        for image in try Self.samples() {
            let clipped = try detector.detect(image)
            let unclipped = try detector.detect(image, options: unclippedOptions)
            #expect(clipped.count == unclipped.count)
            for (c, u) in zip(clipped, unclipped) {
                #expect(c.classIndex == u.classIndex && c.labels == u.labels && c.objectness == u.objectness)
                #expect(c.box == u.box.clippedToUnit)
                let (w, h) = (Double(image.width), Double(image.height))
                let p = c.pixelRect(width: image.width, height: image.height)
                #expect(p.minX >= 0 && p.minY >= 0 && p.maxX <= w * (1 + 1e-12) && p.maxY <= h * (1 + 1e-12), "\(p)")
                if u.box != c.box { outside += 1 }
            }
        }
        #expect(outside > 0, "no sample box reaches past an edge: clipping is not exercised")
    }

    /// Inside an `async` function `try detector.detect(image)` is the synchronous call (it compiles without
    /// `await`: an async overload would make that an error), and `detections(in:)` awaits the same bits.
    @Test func synchronousAndAsynchronousDetectionFromAsyncCode() async throws {
        let detector = try Detector(model: #require(TinyYOLO.model))
        var found = 0
        for image in try Self.samples() {
            let now = try detector.detect(image)
            let awaited = try await detector.detections(in: image)
            #expect(now == awaited)
            found += now.count
        }
        #expect(found > 0)
    }

    /// A cancelled task's `detections(in:)` throws `CancellationError` before any pass.
    @Test func cancelledTaskGetsCancellationError() async throws {
        let detector = try Detector(model: #require(TinyYOLO.model))
        let image = try Self.samples()[0]
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await detector.detections(in: image)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    /// Cancelling the task that iterates a video's detections ends the loop with `CancellationError` (not a
    /// quiet end that looks like the end of the stream), for detections and for tracks.
    @Test(.enabled(if: VideoClips.available, VideoClips.noFFmpeg))
    func cancellingVideoIterationThrowsCancellationError() async throws {
        let detector = try Detector(model: #require(TinyYOLO.model))
        let clip = try VideoClips.moving("api-cancel.mp4", seconds: 2)
        for tracking in [false, true] {
            let task = Task { () -> Int in
                var frames = 0
                if tracking {
                    for try await _ in detector.tracks(in: try VideoSource(clip)) {
                        frames += 1
                        if frames == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                } else {
                    for try await _ in detector.detections(in: try VideoSource(clip)) {
                        frames += 1
                        if frames == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
                return frames
            }
            await #expect(throws: CancellationError.self, "tracking: \(tracking)") { try await task.value }
        }
    }

    /// `tracks(in:)` gives the tracker the boxes between its low threshold (0.1) and the caller's confidence
    /// (0.25), which its second association needs: its tracks are those of a `Tracker` fed the frames' detections
    /// at 0.1 (such boxes occur on the clip); and it reports the detections a run at 0.25 finds, bit for bit.
    @Test(.enabled(if: VideoClips.available, VideoClips.noFFmpeg))
    func trackingSeesLowScoreBoxesAndReportsAtTheCallersConfidence() async throws {
        let detector = try Detector(model: #require(TinyYOLO.model))
        let clip = try VideoClips.moving("api-tracks.mp4", seconds: 1)
        var low = DetectionOptions()
        low.confidenceThreshold = 0.1
        let source = try VideoSource(clip)
        var parameters = Tracker.Parameters()
        parameters.frameRate = source.frameRate ?? parameters.frameRate
        var tracker = Tracker(parameters: parameters)
        var reported: [[Detection]] = []
        var lowScoreBoxes = 0
        for try await result in detector.tracks(in: source) {
            reported.append(result.detections)
            let given = try detector.detect(result.frame.image, options: low)
            lowScoreBoxes += given.filter { $0.confidence <= 0.25 }.count
            #expect(result.objects == tracker.update(given, time: result.time), "frame \(result.index)")
        }
        var direct: [[Detection]] = []
        for try await result in detector.detections(in: try VideoSource(clip)) { direct.append(result.detections) }
        #expect(reported == direct)
        #expect(!reported.isEmpty)
        #expect(lowScoreBoxes > 0, "no box between 0.1 and 0.25 on the clip: the low-score path is not exercised")
    }
}
