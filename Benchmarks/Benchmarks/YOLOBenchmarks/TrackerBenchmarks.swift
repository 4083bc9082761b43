import Benchmark
import YOLO

/// ByteTrack with 100 detections a frame (the bar: ≤ 1 ms per frame): 100 boxes moving at constant
/// velocity and bouncing off the edges, scores spread over [0.15, 1] so both associations run. One
/// benchmark iteration is one frame; the tracker carries its state across iterations, as in a video.
func trackerBenchmarks() {
    let frames = movingBoxes(count: 100, frames: 700)
    let state = TrackingState()
    Benchmark("tracker update, 100 detections per frame", configuration: .init(metrics: [.wallClock, .cpuTotal],
                                                                             warmupIterations: 10,
                                                                             maxDuration: .seconds(3), maxIterations: 600)) { _ in
        blackHole(state.tracker.update(frames[state.frame % frames.count], frame: state.frame))
        state.frame += 1
    }
}

/// The tracker and frame number carried from one benchmark iteration (one frame) to the next.
final class TrackingState: @unchecked Sendable {
    var tracker = Tracker()
    var frame = 0
}

/// `count` boxes (normalized) moving at constant velocity for `frames` frames, deterministic.
func movingBoxes(count: Int, frames: Int) -> [[Detection]] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func random() -> Double {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Double(state >> 11) / Double(1 << 53)
    }
    var objects = (0..<count).map { _ in
        (x: random() * 0.9, y: random() * 0.9, w: 0.02 + random() * 0.05, h: 0.04 + random() * 0.1,
         vx: (random() - 0.5) * 0.01, vy: (random() - 0.5) * 0.01, score: Float(0.15 + random() * 0.85))
    }
    return (0..<frames).map { _ in
        objects.indices.map { i in
            objects[i].x += objects[i].vx
            objects[i].y += objects[i].vy
            if objects[i].x < 0 || objects[i].x + objects[i].w > 1 { objects[i].vx = -objects[i].vx }
            if objects[i].y < 0 || objects[i].y + objects[i].h > 1 { objects[i].vy = -objects[i].vy }
            let o = objects[i]
            return Detection(box: Rect(x: o.x, y: o.y, width: o.w, height: o.h), classIndex: i % 3, label: "c\(i % 3)",
                             confidence: o.score)
        }
    }
}
