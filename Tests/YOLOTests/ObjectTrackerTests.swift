import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct ObjectTrackerTests {
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
