import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO
import YOLOVideo

/// `yolo track-object SOURCE --box x,y,w,h`: follows one object from a box, with no detector in the loop.
struct TrackObject: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        commandName: "track-object",
        abstract: "Follow one object from a box on the first frame (any object, no detector): a video, stream, camera or folder of images.",
        discussion: """
            SOURCE is a video file, stream URL or camera (/dev/videoN), or a folder of images taken in name order \
            (NAME/img/0001.jpg … as single-object tracking sequences are laid out). Prints, per frame, the box \
            (pixels x,y,w,h, top-left origin), the confidence and whether the object is lost (confidence ≤ 0.3); \
            the first frame's box is the given one. --format jsonl: {"frame": N (1-based), "box": [x, y, w, h], \
            "confidence": c, "lost": bool}. --save draws the box, solid above 0.5 confidence, dashed below. \
            --from-detection LABEL seeds from the most confident detection of LABEL on the first frame instead \
            of --box (with the model options of `yolo detect`).
            """)

    @Argument(help: "A video file, stream URL, camera, or a folder of images in name order.")
    var source: String

    @Option(help: ArgumentHelp("The object's box on the first frame: x,y,w,h in pixels, top-left origin.", valueName: "x,y,w,h"))
    var box: String?

    @Option(help: "fast (KCF-style, several hundred frames/s) or accurate (CSRT-style).")
    var level: TrackingLevel = .accurate

    @Option(help: "text (one line per frame) or jsonl (one JSON object per frame).")
    var format: Format = .text

    @Option(help: ArgumentHelp("Write the frames with the box drawn as an H.264 video.", valueName: "OUT.mp4"))
    var save: String?

    @Option(name: .customLong("from-detection"), help: ArgumentHelp("Seed from the most confident detection of this label on the first frame.", valueName: "LABEL"))
    var fromDetection: String?

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, jsonl }

    func validate() throws {
        guard (box == nil) != (fromDetection == nil) else {
            throw ValidationError("give the object as --box x,y,w,h or --from-detection LABEL (one of them)")
        }
        if let box { _ = try Self.parseBox(box) }
        if let fromDetection, fromDetection.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--from-detection needs a label, e.g. person")
        }
    }

    /// `x,y,w,h` as four finite numbers.
    static func parseBox(_ text: String) throws -> Rect {
        let v = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 4, let x = v[0], let y = v[1], let w = v[2], let h = v[3], [x, y, w, h].allSatisfy(\.isFinite) else {
            throw ValidationError("--box must be x,y,w,h (four numbers, pixels), got '\(text)'")
        }
        return Rect(x: x, y: y, width: w, height: h)
    }

    func run() throws {
        let frames = try ObjectFrames(source)
        let run = ObjectTrackingRun(command: self, frameRate: frames.frameRate)
        defer { run.discardIfUnfinished() }
        try frames.forEach { image, time in try run.handle(image, time: time) }
        try run.finish(source: source)
    }

    /// The seed box on the first frame: `--box`, or the best detection of `--from-detection`'s label.
    func seed(_ image: Image) throws -> Rect {
        if let box { return try Self.parseBox(box) }
        let label = fromDetection ?? ""
        let detector = try Detector(model: model.load(residency: .codes))
        let found = try detector.detect(image).filter { $0.label == label }.max { $0.confidence < $1.confidence }
        guard let found else { throw YOLOError.invalidArgument("\(source): no \(label) detected on the first frame") }
        return found.clippedBox.scaled(width: Double(image.width), height: Double(image.height))
    }
}

extension TrackingLevel: ExpressibleByArgument {}

/// Frames from a folder of images (name order) or a video source, read synchronously.
struct ObjectFrames {
    private let sequence: ImageSequence?
    private let video: VideoSource?

    init(_ location: String) throws {
        if ImageSequence.isFolder(location) {
            (sequence, video) = (try ImageSequence(location), nil)
        } else {
            (sequence, video) = (nil, try VideoSource(location))
        }
    }

    /// The video's frame rate; 30 for a folder.
    var frameRate: Double { video.map { $0.frameRate ?? 25 } ?? 30 }

    /// Calls `body` with each frame and its time in seconds (a folder: index / 30).
    func forEach(_ body: (Image, Double) throws -> Void) throws {
        if let sequence {
            for index in sequence.files.indices { try body(try sequence.image(index), Double(index) / 30) }
        } else if let video {
            while let frame = try video.nextFrame() { try body(frame.image, frame.time) }
        }
    }
}

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

    /// Seeds on the first frame, tracks on the others; prints the frame's line and writes its picture.
    func handle(_ image: Image, time: Double) throws {
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
