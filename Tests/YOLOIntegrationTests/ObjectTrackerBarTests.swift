import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Issue 36's confidence and still-scene bars, frame by frame at both levels: integration tests because they
/// run hundreds of tracker updates (50 s in a debug build, a few seconds in `make test`'s release build).
@Suite struct ObjectTrackerBarTests {
    /// The square moves right 8 px a frame from x = 100, starts leaving the 320-pixel frame at frame 22 and is gone at 28.
    @Test(arguments: TrackingLevel.allCases)
    func confidenceFallsWhenTheObjectLeaves(level: TrackingLevel) throws {
        let tracker = try ObjectTracker(image: TrackingClips.square(at: 100), box: Rect(x: 100, y: 96, width: 48, height: 48), level: level)
        var confidences: [Int: Double] = [:]
        for t in 1...40 {
            let seen = try tracker.update(with: TrackingClips.square(at: 100 + 8 * t))
            confidences[t] = seen.confidence
            if t <= 20 {
                #expect(seen.confidence > 0.5, "frame \(t): \(seen.confidence)")
                #expect(abs(seen.box.x - Double(100 + 8 * t)) < 4, "frame \(t): \(seen.box)")
            }
        }
        // The square starts leaving at frame 22 (x 276: its right edge is cut) and is gone from frame 28 (x 324).
        // Bar: under 0.3 within 10 frames of leaving, and from then on.
        let leaving = 22
        #expect(((leaving + 10)...40).allSatisfy { confidences[$0]! < 0.3 }, "\(confidences.sorted { $0.key < $1.key })")
    }

    /// One photo repeated 200 frames: the box must not shrink or walk (Vision's box does).
    @Test(arguments: TrackingLevel.allCases)
    func stillSceneKeepsTheBox(level: TrackingLevel) throws {
        let photo = try Image(contentsOf: TestPaths.root + "/Samples/astronaut.png")
        let seed = Rect(x: 180, y: 40, width: 140, height: 160)
        let tracker = try ObjectTracker(image: photo, box: seed, level: level)
        let frame = TrackingFrame(photo)
        var last = tracker.lastObservation
        for _ in 1..<200 { last = try tracker.update(with: frame) }
        #expect(last.frameIndex == 199)
        #expect(last.box.iou(seed) >= 0.95, "\(last.box)")
        #expect(last.confidence > 0.5)
    }
}
