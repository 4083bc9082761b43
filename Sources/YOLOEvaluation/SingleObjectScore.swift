import Foundation
import YOLO

/// One-pass (OTB) scores of a single-object tracker's boxes against the ground truth, as the OTB toolkit and
/// got10k's OTB experiment compute them (and `../shared/reference/sot_reference.py score`).
///
/// Frame 1 counts as the ground truth's own box (the tracker's seed). Per frame, the IoU of the boxes and the
/// distance between their centres, centre = (x + (w − 1) / 2, y + (h − 1) / 2). Success AUC: the mean over the
/// 21 thresholds 0, 0.05, …, 1 of the fraction of frames whose IoU exceeds the threshold; precision at 20 px:
/// the fraction of frames whose centre error is at most 20 pixels. Only the first min(boxes, truth) frames count.
public struct SingleObjectScore: Sendable, Equatable {
    /// Frames scored.
    public let frames: Int
    /// Area under the success curve, 0…1.
    public let successAUC: Double
    /// Fraction of frames with a centre error of at most 20 pixels.
    public let precision20: Double
    /// Mean IoU over the frames.
    public let meanIoU: Double

    /// Scores `boxes` (pixels, top-left origin, one per frame) against `truth`.
    public init(boxes: [Rect], truth: [Rect]) {
        let n = min(boxes.count, truth.count)
        var ious: [Double] = [], within = 0
        for i in 0..<n {
            let (b, g) = (i == 0 ? truth[0] : boxes[i], truth[i])
            ious.append(b.iou(g))
            let dx = (b.x + (b.width - 1) / 2) - (g.x + (g.width - 1) / 2)
            let dy = (b.y + (b.height - 1) / 2) - (g.y + (g.height - 1) / 2)
            if (dx * dx + dy * dy).squareRoot() <= 20 { within += 1 }
        }
        frames = n
        guard n > 0 else { (successAUC, precision20, meanIoU) = (0, 0, 0); return }
        let thresholds = (0...20).map { Double($0) / 20 }
        successAUC = thresholds.map { t in Double(ious.filter { $0 > t }.count) / Double(n) }.reduce(0, +) / 21
        precision20 = Double(within) / Double(n)
        meanIoU = ious.reduce(0, +) / Double(n)
    }

    /// Reads a boxes file: one box per line, `x,y,w,h` (commas, tabs or spaces between the numbers; blank lines
    /// skipped; values after the fourth ignored), as OTB's `groundtruth_rect.txt` and trackers' results files.
    /// - Throws: `YOLOError` naming the file and line when it is missing or a line holds fewer than four numbers.
    public static func readBoxes(_ path: String) throws -> [Rect] {
        guard FileManager.default.fileExists(atPath: path) else { throw YOLOError.fileNotFound(path: path) }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw YOLOError.unreadableFile(path: path, reason: "not a UTF-8 text file")
        }
        var boxes: [Rect] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(whereSeparator: { $0 == "," || $0 == "\t" || $0 == " " || $0 == "\r" })
            if fields.isEmpty { continue }
            let v = fields.prefix(4).compactMap { Double($0) }
            guard v.count == 4, v.allSatisfy(\.isFinite) else {
                throw YOLOError.invalidFile(path: path, message: "line \(index + 1): expected x,y,w,h (four numbers), got '\(line.prefix(80))'")
            }
            boxes.append(Rect(x: v[0], y: v[1], width: v[2], height: v[3]))
        }
        return boxes
    }
}
