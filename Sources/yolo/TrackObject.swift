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
        try frames.forEach { image, time in try run.handle(image, time: time, source: source) }
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
