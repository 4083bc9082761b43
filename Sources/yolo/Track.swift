import ArgumentParser
import Foundation
@_spi(Engine) import YOLO
import YOLOVideo

struct Track: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Detect and track objects in a video, stream or camera: persistent ids across frames (ByteTrack).",
        discussion: """
            Prints, per frame, each tracked object with its id (text), or one JSON object per frame (jsonl: frame, \
            time, dropped, objects with track_id). --save writes the video with boxes coloured by track, the id and \
            a short trail. --count-line x1,y1,x2,y2 (pixels) counts the tracks that cross the line, per class, and \
            prints the totals at the end. Takes every detection option of `yolo detect`.
            """)

    @OptionGroup var detection: Detect

    @Option(name: .customLong("count-line"), help: "Count tracks crossing the segment x1,y1,x2,y2 (frame pixels), per class.")
    var countLine: String?

    @Flag(name: .customLong("per-class"), help: "Never continue a track with a detection of another class.")
    var perClass = false

    @Option(name: .customLong("track-buffer"), help: "Frames (at 30 frames/s) a lost track is kept for re-identification.")
    var trackBuffer = 30

    var kernelOptions: KernelOptions { detection.kernelOptions }

    func validate() throws {
        guard detection.isVideo else { throw ValidationError("yolo track takes one video file, stream URL or camera") }
        guard trackBuffer >= 0 else { throw ValidationError("--track-buffer must be 0 or more") }
        _ = try parsedLine()
    }

    func parsedLine() throws -> (Double, Double, Double, Double)? {
        guard let countLine else { return nil }
        let v = countLine.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 4, v.allSatisfy(\.isFinite), v[0] != v[2] || v[1] != v[3] else {
            throw ValidationError("--count-line must be x1,y1,x2,y2 (two distinct points in pixels), got '\(countLine)'")
        }
        return (v[0], v[1], v[2], v[3])
    }

    func run() throws {
        let options = try detection.detectionOptions()
        // --conf is what counts as a detection: new tracks and the first association start there, as
        // Ultralytics' track_high_thresh and new_track_thresh; boxes down to the low threshold (0.1) still
        // keep tracks alive (ByteTrack's second association), detected whatever --conf says.
        var parameters = Tracker.Parameters(trackBuffer: trackBuffer, perClass: perClass)
        parameters.highThreshold = max(options.confidenceThreshold, parameters.lowThreshold)
        parameters.newTrackThreshold = parameters.highThreshold
        let tracking = TrackingRun(parameters: parameters, line: try parsedLine())
        try detection.runVideo(options: options, tracking: tracking)
        if let totals = tracking.countsText { print(totals) }
    }
}

/// What one `yolo track` run keeps beside the tracker (which runs in `Detector.tracks`): trails for drawing,
/// line-crossing counts.
final class TrackingRun: @unchecked Sendable {  // used by one task at a time
    let parameters: Tracker.Parameters
    private let line: (Double, Double, Double, Double)?
    private var trails: [Int: [(x: Double, y: Double)]] = [:]
    private var counted: Set<Int> = []
    private var counts: [String: Int] = [:]
    static let trailLength = 30

    init(parameters: Tracker.Parameters, line: (Double, Double, Double, Double)?) {
        self.parameters = parameters
        self.line = line
    }

    /// Updates trails and counts with the frame's tracks (boxes in frame pixels).
    func update(_ result: FrameTracks) {
        let (w, h) = (Double(result.frame.image.width), Double(result.frame.image.height))
        for object in result.objects {
            let point = (x: object.box.midX * w, y: object.box.maxY * h)  // bottom centre: where the object stands
            var trail = trails[object.id, default: []]
            if let last = trail.last, let line, !counted.contains(object.id), Self.crosses(last, point, line) {
                counted.insert(object.id)
                counts[object.label, default: 0] += 1
            }
            trail.append(point)
            if trail.count > Self.trailLength { trail.removeFirst() }
            trails[object.id] = trail
        }
        let live = Set(result.objects.map(\.id))
        trails = trails.filter { live.contains($0.key) }
    }

    /// Boxes coloured by track, `#id label NN%` tags and trails.
    func annotate(_ image: Image, _ objects: [TrackedObject]) -> Image {
        var copy = image
        for object in objects {
            let color = Image.classColor(index: object.id % 24, count: 24)
            for point in trails[object.id, default: []] {
                copy.fillRectangle(x: Int(point.x) - 2, y: Int(point.y) - 2, width: 5, height: 5, color: color)
            }
            let r = object.box.scaled(width: Double(image.width), height: Double(image.height))
            copy.labelBox(x: r.x, y: r.y, width: r.width, height: r.height,
                          label: "#\(object.id) \(object.label) \(Int((object.score * 100).rounded()))%", color: color)
        }
        if let line {
            let steps = Int(max(abs(line.2 - line.0), abs(line.3 - line.1))) + 1
            for i in 0...steps {
                let t = Double(i) / Double(steps)
                copy.fillRectangle(x: Int(line.0 + (line.2 - line.0) * t) - 1, y: Int(line.1 + (line.3 - line.1) * t) - 1,
                                   width: 3, height: 3, color: Image.Color(r: 255, g: 255, b: 0))
            }
        }
        return copy
    }

    /// Totals for `--count-line`, nil without one.
    var countsText: String? {
        guard line != nil else { return nil }
        let parts = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        return "crossed the line: " + (parts.isEmpty ? "none" : parts.joined(separator: ", "))
    }

    /// Whether segment a→b crosses the counting line (touching an end counts).
    static func crosses(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ l: (Double, Double, Double, Double)) -> Bool {
        func side(_ px: Double, _ py: Double, _ qx: Double, _ qy: Double, _ rx: Double, _ ry: Double) -> Double {
            (qx - px) * (ry - py) - (qy - py) * (rx - px)
        }
        let d1 = side(l.0, l.1, l.2, l.3, a.x, a.y), d2 = side(l.0, l.1, l.2, l.3, b.x, b.y)
        let d3 = side(a.x, a.y, b.x, b.y, l.0, l.1), d4 = side(a.x, a.y, b.x, b.y, l.2, l.3)
        return d1 * d2 <= 0 && d3 * d4 <= 0 && !(d1 == 0 && d2 == 0)
    }
}
