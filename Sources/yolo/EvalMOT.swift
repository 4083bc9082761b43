import ArgumentParser
import Foundation
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOMOTMetrics

/// `yolo eval-mot`: multi-object tracking metrics of a MOTChallenge results file, as py-motmetrics computes them.
struct EvalMOT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval-mot",
        abstract: "Score tracking results against MOTChallenge ground truth: MOTA, MOTP, IDF1 and the rest, computed as py-motmetrics 1.4.0 does.",
        discussion: """
            Both files are MOTChallenge text (frame, id, x, y, width, height, confidence, ...):
              yolo eval-mot --gt gt/gt.txt --results tracker/SEQUENCE.txt
            Ground-truth rows with confidence 0 are ignored. An object and a hypothesis can match when their \
            boxes' IoU is at least --iou. MOTP is the mean 1 − IoU of the matches (py-motmetrics' convention: \
            lower is better).
            """)

    @Option(help: "MOTChallenge ground-truth file (gt.txt).")
    var gt: String

    @Option(help: "The tracker's MOTChallenge results file.")
    var results: String

    @Option(help: "Least IoU for an object and a hypothesis to match.")
    var iou: Double = 0.5

    @Option(help: "Output: text (a table) or json (every figure at full precision, py-motmetrics' names).")
    var format: Format = .text

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    func validate() throws {
        guard iou > 0, iou <= 1 else { throw ValidationError("--iou must be in (0, 1], got \(iou)") }
    }

    func run() throws {
        let truth = try MOTChallengeFile.read(path: gt)
        let tracks = try MOTChallengeFile.read(path: results)
        let summary = MOTEvaluation.evaluate(groundTruth: truth, results: tracks, iouThreshold: iou)
        for warning in Self.warnings(truth: truth, results: tracks) { printError("yolo: warning: \(warning)") }
        print(format == .json ? json(summary) : text(summary))
    }

    // MARK: Warnings

    /// One line each: inputs that make the figures meaningless or suggest a mistake.
    static func warnings(truth: [MOTChallengeRecord], results: [MOTChallengeRecord]) -> [String] {
        var lines: [String] = []
        if !truth.contains(where: { $0.confidence >= MOTEvaluation.groundTruthMinimumConfidence }) {
            lines.append("the ground truth has no row with confidence 1: the figures over objects are undefined")
        }
        if results.isEmpty {
            lines.append("the results file has no rows: every object is a miss")
        } else if !truth.isEmpty, Set(truth.map(\.frame)).isDisjoint(with: results.map(\.frame)) {
            lines.append("the results and the ground truth share no frame number (frames counted from 0 instead of 1?)")
        }
        return lines
    }

    // MARK: Text

    /// A coverage line, then one figure per line.
    func text(_ s: MOTSummary) -> String {
        var lines = ["\(s.frames) frames, \(s.objects) object appearances (\(s.uniqueObjects) objects), "
                     + "\(s.predictions) hypotheses; match at IoU ≥ \(iou)"]
        lines.append(row("MOTA", percent(s.mota), "1 − (misses + switches + false positives) / objects"))
        lines.append(row("MOTP", decimal(s.motp), "mean 1 − IoU of the matches (lower is better)"))
        lines.append(row("IDF1", percent(s.idf1), "identity F1: 2 IDTP / (objects + hypotheses)"))
        lines.append(row("IDP", percent(s.idp), "identity precision: IDTP / (IDTP + IDFP)"))
        lines.append(row("IDR", percent(s.idr), "identity recall: IDTP / (IDTP + IDFN)"))
        lines.append(row("Recall", percent(s.recall), "(matches + switches) / objects"))
        lines.append(row("Precision", percent(s.precision), "(matches + switches) / hypotheses"))
        lines.append(row("matches", String(s.matches), "pairs keeping or starting an identity"))
        lines.append(row("ID switches", String(s.switches), "an object paired with another hypothesis than before"))
        lines.append(row("false positives", String(s.falsePositives), "hypotheses with no object"))
        lines.append(row("misses", String(s.misses), "objects with no hypothesis"))
        lines.append(row("fragmentations", String(s.fragmentations), "tracking interrupted, then resumed"))
        lines.append(row("mostly tracked", String(s.mostlyTracked), "objects tracked in ≥ 80 % of their frames"))
        lines.append(row("partially tracked", String(s.partiallyTracked), "in 20 % to 80 %"))
        lines.append(row("mostly lost", String(s.mostlyLost), "in < 20 %"))
        lines.append(row("transfers", String(s.transfers), "a hypothesis moving to another object"))
        lines.append(row("ascends", String(s.ascends), "a switch to a hypothesis never paired before"))
        lines.append(row("migrations", String(s.migrations), "a transfer to an object never paired before"))
        lines.append(row("IDTP IDFP IDFN", "\(s.idtp) \(s.idfp) \(s.idfn)", "after the best matching of whole trajectories"))
        return lines.joined(separator: "\n")
    }

    /// Name left-aligned, value right-aligned, then what it means.
    private func row(_ name: String, _ value: String, _ meaning: String) -> String {
        let padding = String(repeating: " ", count: max(28 - name.count - value.count, 1))
        return name + padding + value + "   " + meaning
    }

    private func percent(_ value: Double) -> String {
        value.isFinite ? String(format: "%.2f %%", value * 100) : "-"
    }

    private func decimal(_ value: Double) -> String {
        value.isFinite ? String(format: "%.4f", value) : "-"
    }

    // MARK: JSON

    /// Every figure under py-motmetrics' name at full precision (shortest round-trip decimal; null where a
    /// ratio is undefined), and what was compared.
    func json(_ s: MOTSummary) -> String {
        var fields = ["\"groundTruth\": \(quoted(gt))", "\"results\": \(quoted(results))", "\"iouThreshold\": \(iou)"]
        for (name, value) in s.figures {
            let number = !value.isFinite ? "null" : value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
            fields.append("\"\(name)\": \(number)")
        }
        return "{\n  " + fields.joined(separator: ",\n  ") + "\n}"
    }

    private func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"?\"]"
        return String(array.dropFirst().dropLast())
    }
}
