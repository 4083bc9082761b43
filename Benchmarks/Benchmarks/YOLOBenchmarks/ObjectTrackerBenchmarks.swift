import Benchmark
import Foundation
import YOLO

/// Ten `.fast` object trackers on one 640×480 stream (issue 36's bar: at least 30 frames a second on one core):
/// boxes of 64–100 px spread over a smooth texture that shifts 2 px a frame, all ten updated with one frame
/// conversion (`ObjectTracker.update(_:with:)`). One iteration is one frame; the trackers carry their state across
/// iterations, as in a video. frames/s = 1 / (CPU time per iteration).
func objectTrackerBenchmarks() {
    let frames = (0..<32).map(texturedFrame)
    let boxes = (0..<10).map { (i: Int) -> Rect in
        let (column, row) = (Double(i % 5), Double(i / 5))
        return Rect(x: 20 + 120 * column, y: 40 + 220 * row, width: 64, height: 64 + 4 * Double(i))
    }
    guard let trackers = try? boxes.map({ try ObjectTracker(image: frames[0], box: $0, level: .fast) }) else {
        print("object trackers: could not seed the trackers"); return
    }
    let state = ObjectTrackingState(trackers: trackers)
    Benchmark("object trackers, ten .fast on one 640x480 stream, per frame",
              configuration: .init(metrics: [.wallClock, .cpuTotal], warmupIterations: 5, maxDuration: .seconds(5),
                                   maxIterations: 300)) { _ in
        state.frame += 1
        blackHole(try ObjectTracker.update(state.trackers, with: frames[state.frame % frames.count]))
    }
}

/// The trackers and frame number carried from one benchmark iteration (one frame) to the next.
final class ObjectTrackingState: @unchecked Sendable {
    let trackers: [ObjectTracker]
    var frame = 0
    init(trackers: [ObjectTracker]) { self.trackers = trackers }
}

/// Frame `t` of a 640×480 stream of smooth texture moving 2 px a frame to the left.
func texturedFrame(_ t: Int) -> Image {
    let (w, h) = (640, 480)
    var pixels = [UInt8](repeating: 0, count: w * h * 3)
    for y in 0..<h {
        for x in 0..<w {
            let v = 128 + 60 * sin(Double(x + 2 * t) / 9) * cos(Double(y) / 13) + 50 * sin(Double(x * y) / 3000)
            pixels[(y * w + x) * 3] = UInt8(max(0, min(255, v)))
            pixels[(y * w + x) * 3 + 1] = UInt8(max(0, min(255, 255 - v)))
            pixels[(y * w + x) * 3 + 2] = UInt8((x + y) % 256)
        }
    }
    return Image(width: w, height: h, pixels: pixels)
}
