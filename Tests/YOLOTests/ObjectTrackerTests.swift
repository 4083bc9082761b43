import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct ObjectTrackerTests {
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

    @Test func badBoxesAreUserErrors() throws {
        let image = TrackingClips.square(at: 100)
        for box in [Rect(x: 400, y: 10, width: 20, height: 20), Rect(x: -50, y: -50, width: 20, height: 20),
                    Rect(x: 10, y: 10, width: 0, height: 20), Rect(x: 10, y: 10, width: 1, height: 1),
                    Rect(x: 10, y: 10, width: .nan, height: 5), Rect(x: 319.5, y: 10, width: 30, height: 30),
                    Rect(x: 1e308, y: 1e308, width: 1e308, height: 1e308), Rect(x: -1e308, y: 0, width: 1e308, height: 240)] {
            #expect(throws: YOLOError.self, "\(box)") { try ObjectTracker(image: image, box: box, level: .fast) }
        }
        // Partly outside: clipped to the frame.
        let tracker = try ObjectTracker(image: image, box: Rect(x: -10, y: 200, width: 40, height: 80), level: .fast)
        #expect(tracker.lastObservation.box == Rect(x: 0, y: 200, width: 30, height: 40))
    }

    @Test func frameOfAnotherSizeIsAUserError() throws {
        let tracker = try ObjectTracker(image: TrackingClips.square(at: 100), box: Rect(x: 100, y: 96, width: 48, height: 48))
        let other = Image(width: 160, height: 120, pixels: [UInt8](repeating: 0, count: 160 * 120 * 3))
        #expect(throws: YOLOError.self) { try tracker.update(with: other) }
    }

    @Test func seedsFromNormalizedBoxesAndDetections() throws {
        let image = TrackingClips.square(at: 100)
        let normalized = Rect(x: 100.0 / 320, y: 96.0 / 240, width: 48.0 / 320, height: 48.0 / 240)
        let a = try ObjectTracker(image: image, normalizedBox: normalized, level: .fast)
        let b = try ObjectTracker(image: image, detection: Detection(box: normalized, classIndex: 0, label: "thing", confidence: 0.9), level: .fast)
        for tracker in [a, b] {
            let seen = try tracker.update(with: TrackingClips.square(at: 108))
            #expect(abs(seen.box.x - 108) < 3 && abs(seen.box.y - 96) < 3, "\(seen.box)")
            #expect(abs(seen.normalizedBox.x - seen.box.x / 320) < 1e-12)
            #expect(seen.visionBoundingBox.y == 1 - seen.normalizedBox.maxY)
        }
    }

    /// Ten `.fast` trackers updated together with one frame conversion (`update(_:with:)`) see what each would
    /// see updated alone. (Their speed, issue 36's 30 frames/s bar, is a benchmark: Benchmarks/, "object trackers".)
    @Test func updatingTogetherEqualsUpdatingAlone() throws {
        let frames = (0..<6).map { t in TrackingClips.square(at: 100 + 6 * t) }
        let boxes = [Rect(x: 100, y: 96, width: 48, height: 48)] + (1..<10).map { (i: Int) -> Rect in
            Rect(x: Double(10 + (i % 5) * 60), y: Double(20 + (i / 5) * 140), width: 40, height: 40 + 4 * Double(i))
        }
        let together = try boxes.map { try ObjectTracker(image: frames[0], box: $0, level: .fast) }
        let alone = try boxes.map { try ObjectTracker(image: frames[0], box: $0, level: .fast) }
        for frame in frames.dropFirst() {
            let shared = try ObjectTracker.update(together, with: frame)
            #expect(try shared == alone.map { try $0.update(with: frame) })
        }
        #expect(abs(together[0].lastObservation.box.x - 130) < 3, "the square's tracker followed it")
    }

    /// Several threads updating one tracker take turns (it is `Sendable`); the result is one of the sequences.
    @Test func concurrentUpdatesAreSafe() async throws {
        let tracker = try ObjectTracker(image: TrackingClips.square(at: 100), box: Rect(x: 100, y: 96, width: 48, height: 48), level: .fast)
        let frame = TrackingFrame(TrackingClips.square(at: 100))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for _ in 0..<5 { _ = try tracker.update(with: frame) } } }
            try await group.waitForAll()
        }
        #expect(tracker.lastObservation.frameIndex == 20)
    }
}
