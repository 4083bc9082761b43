import Foundation
import YOLOReport
@_spi(Engine) import YOLO
import YOLOVideo

/// One `yolo track-object` run: the tracker, the output lines, the video being written.
final class ObjectTrackingRun {
    private let command: TrackObject
    private let frameRate: Double
    private var tracker: ObjectTracker?
    private var writer: VideoWriter?
    private var frames = 0, lost = 0
    private var spent = Duration.zero
    private var finished = false

    init(command: TrackObject, frameRate: Double) {
        self.command = command
        self.frameRate = frameRate
    }

    /// Seeds on the first frame, tracks on the others; prints the frame's line and writes its picture. The
    /// tracker's complaints (a bad box, a frame of another size) name the source and the frame.
    func handle(_ image: Image, time: Double, source: String) throws {
        do {
            try track(image, time: time)
        } catch YOLOError.invalidArgument(let message) {
            throw YOLOError.invalidArgument("\(source): frame \(frames + 1): \(message)")
        }
    }

    private func track(_ image: Image, time: Double) throws {
        let observation: ObjectObservation
        if let tracker {
            let start = ContinuousClock.now
            observation = try tracker.update(with: image)
            spent += ContinuousClock.now - start
        } else {
            let made = try ObjectTracker(image: image, box: try command.seed(image), level: command.level)
            tracker = made
            observation = made.lastObservation
            if let save = command.save {
                writer = try VideoWriter(path: save, width: image.width, height: image.height, frameRate: frameRate)
            }
        }
        frames += 1
        if observation.isLost { lost += 1 }
        print(Self.line(observation, frame: frames, format: command.format))
        try writer?.write(Self.drawn(image, observation), time: time)
    }

    /// Closes the video and prints the summary on stderr.
    func finish(source: String) throws {
        finished = true
        try writer?.finish()
        let updates = max(frames - 1, 0), seconds = spent.seconds
        let rate = seconds > 0 ? String(format: ", %.1f frames/s", Double(updates) / seconds) : ""
        printError("yolo: \(source): \(frames) frame\(frames == 1 ? "" : "s"), \(lost) lost\(rate)"
                   + (command.save.map { ", saved \($0)" } ?? ""))
    }

    /// On an error, `--save` leaves nothing behind.
    func discardIfUnfinished() { if !finished { writer?.discard() } }

    static func line(_ o: ObjectObservation, frame: Int, format: TrackObject.Format) -> String {
        let b = o.box
        switch format {
        case .jsonl:
            return "{\"frame\": \(frame), \"box\": [\(JSON.number(b.x, decimals: 2)), \(JSON.number(b.y, decimals: 2)), "
                + "\(JSON.number(b.width, decimals: 2)), \(JSON.number(b.height, decimals: 2))], "
                + "\"confidence\": \(JSON.number(o.confidence)), \"lost\": \(o.isLost)}"
        case .text:
            return String(format: "frame %d: %.1f,%.1f %.1fx%.1f %d%%", frame, b.x, b.y, b.width, b.height, Int((o.confidence * 100).rounded()))
                + (o.isLost ? " lost" : "")
        }
    }

    /// The frame with the box: a solid outline above 0.5 confidence, dashed at or below.
    static func drawn(_ image: Image, _ o: ObjectObservation) -> Image {
        var copy = image
        let color = o.confidence > 0.5 ? Image.Color(r: 0, g: 255, b: 0) : Image.Color(r: 255, g: 160, b: 0)
        let (x, y) = (Int(o.box.x.rounded()), Int(o.box.y.rounded()))
        let (w, h) = (max(Int(o.box.width.rounded()), 1), max(Int(o.box.height.rounded()), 1))
        if o.confidence > 0.5 {
            copy.drawRectangle(x: x, y: y, width: w, height: h, color: color, thickness: 2)
        } else {
            for s in stride(from: 0, to: w, by: 12) {
                copy.fillRectangle(x: x + s, y: y, width: min(6, w - s), height: 2, color: color)
                copy.fillRectangle(x: x + s, y: y + h - 2, width: min(6, w - s), height: 2, color: color)
            }
            for s in stride(from: 0, to: h, by: 12) {
                copy.fillRectangle(x: x, y: y + s, width: 2, height: min(6, h - s), color: color)
                copy.fillRectangle(x: x + w - 2, y: y + s, width: 2, height: min(6, h - s), color: color)
            }
        }
        return copy
    }
}
