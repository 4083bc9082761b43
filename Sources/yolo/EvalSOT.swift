import ArgumentParser
import Foundation
import YOLOEvaluation
import YOLOReport
@_spi(Engine) import YOLO

/// `yolo eval-sot SEQUENCE...`: runs the object tracker on single-object sequences and scores it as OTB does.
struct EvalSOT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval-sot",
        abstract: "Score the object tracker on single-object tracking sequences: OTB success AUC, precision at 20 px, mean IoU, frames/s.",
        discussion: """
            Each SEQUENCE is a folder with img/0001.jpg … and groundtruth.txt (one x,y,w,h line per frame). The \
            tracker is seeded with the first ground-truth box and never restarted (one-pass evaluation). Scores as \
            ../shared/reference/sot_reference.py score computes them; frames/s = frames after the first / seconds \
            spent in update (decoding excluded), one thread. The overall row averages the sequences' scores and \
            divides all frames by all seconds. --results DIR writes DIR/NAME.txt, one box per line, scorable by \
            any OTB tool.
            """)

    @Argument(help: "Sequence folders (img/ and groundtruth.txt).")
    var sequences: [String]

    @Option(help: "fast or accurate.")
    var level: TrackingLevel = .accurate

    @Option(help: ArgumentHelp("Write each sequence's boxes to DIR/NAME.txt.", valueName: "DIR"))
    var results: String?

    @Option(help: "text (a Markdown table) or json.")
    var format: Format = .text

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    struct Row {
        let name: String
        let score: SingleObjectScore
        let updates: Int
        let seconds: Double
        let lost: Int
        var fps: Double { seconds > 0 ? Double(updates) / seconds : 0 }
    }

    func run() throws {
        if let results { try ImageFiles.makeFolder(results) }
        var rows: [Row] = []
        for path in sequences {
            let row = try evaluate(path)
            rows.append(row)
            if format == .text && rows.count == 1 {
                print("| sequence | level | frames | AUC | P@20 | mean IoU | fps | lost |\n|---|---|---|---|---|---|---|---|")
            }
            if format == .text { print(text(row)) }
        }
        let n = Double(rows.count)
        let overall = (auc: rows.map(\.score.successAUC).reduce(0, +) / n, p20: rows.map(\.score.precision20).reduce(0, +) / n,
                       iou: rows.map(\.score.meanIoU).reduce(0, +) / n, frames: rows.map(\.score.frames).reduce(0, +),
                       fps: Double(rows.map(\.updates).reduce(0, +)) / max(rows.map(\.seconds).reduce(0, +), 1e-12),
                       lost: rows.map(\.lost).reduce(0, +))
        switch format {
        case .text:
            print("| overall (mean) | \(level.rawValue) | " + String(format: "%d | %.4f | %.4f | %.4f | %.1f | %d |", overall.frames,
                                                                              overall.auc, overall.p20, overall.iou, overall.fps, overall.lost))
        case .json:
            let items = rows.map { r in
                "{\"sequence\": \(JSON.string(r.name)), \"frames\": \(r.score.frames), \"auc\": \(JSON.number(r.score.successAUC, decimals: 4)), "
                    + "\"precision20\": \(JSON.number(r.score.precision20, decimals: 4)), \"mean_iou\": \(JSON.number(r.score.meanIoU, decimals: 4)), "
                    + "\"fps\": \(JSON.number(r.fps, decimals: 1)), \"lost\": \(r.lost)}"
            }
            print("{\"level\": \(JSON.string(level.rawValue)), \"sequences\": [\(items.joined(separator: ", "))], "
                  + "\"overall\": {\"auc\": \(JSON.number(overall.auc, decimals: 4)), \"precision20\": \(JSON.number(overall.p20, decimals: 4)), "
                  + "\"mean_iou\": \(JSON.number(overall.iou, decimals: 4)), \"fps\": \(JSON.number(overall.fps, decimals: 1)), \"lost\": \(overall.lost)}}")
        }
    }

    /// Tracks one sequence from its first ground-truth box and scores it; the tracker's complaints name the sequence.
    func evaluate(_ path: String) throws -> Row {
        do {
            return try track(path)
        } catch YOLOError.invalidArgument(let message) {
            throw YOLOError.invalidArgument("\(path): \(message)")
        }
    }

    private func track(_ path: String) throws -> Row {
        let sequence = try ImageSequence(path)
        guard let truthPath = sequence.groundTruthPath else {
            throw YOLOError.fileNotFound(path: (path as NSString).appendingPathComponent("groundtruth.txt"))
        }
        let truth = try SingleObjectScore.readBoxes(truthPath)
        guard let seed = truth.first else { throw YOLOError.invalidFile(path: truthPath, message: "no boxes") }
        let count = min(truth.count, sequence.files.count)
        let tracker = try ObjectTracker(image: try sequence.image(0), box: seed, level: level)
        var boxes = [seed], spent = Duration.zero, lost = 0
        for index in 1..<max(count, 1) {
            let image = try sequence.image(index)
            let start = ContinuousClock.now
            let observation = try tracker.update(with: image)
            spent += ContinuousClock.now - start
            boxes.append(observation.box)
            if observation.isLost { lost += 1 }
        }
        // Scored as written (two decimals), so the figures equal the reference scorer's on the results file.
        boxes = boxes.map { b in
            func cents(_ v: Double) -> Double { (v * 100).rounded() / 100 }
            return Rect(x: cents(b.x), y: cents(b.y), width: cents(b.width), height: cents(b.height))
        }
        let name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        if let results {
            let text = boxes.map { String(format: "%.2f,%.2f,%.2f,%.2f", $0.x, $0.y, $0.width, $0.height) }.joined(separator: "\n") + "\n"
            try FileIO.writeAtomically(Data(text.utf8), to: (results as NSString).appendingPathComponent(name + ".txt"))
        }
        return Row(name: name, score: SingleObjectScore(boxes: boxes, truth: truth), updates: count - 1, seconds: spent.seconds, lost: lost)
    }

    private func text(_ r: Row) -> String {
        "| \(r.name) | \(level.rawValue) | " + String(format: "%d | %.4f | %.4f | %.4f | %.1f | %d |", r.score.frames, r.score.successAUC,
                                                      r.score.precision20, r.score.meanIoU, r.fps, r.lost)
    }
}
