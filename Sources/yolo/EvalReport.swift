import Foundation
import YOLOReport
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOEvaluation

/// What `yolo eval` prints: the 12 figures (pycocotools' layout or JSON), what they cover, per-class AP.
struct EvalReport {
    let evaluation: COCOEvaluation
    let truth: COCOAnnotations
    /// Results read or produced (before skipping).
    let resultCount: Int
    /// The model run, when there was one.
    let run: Eval.RunOutcome?

    // MARK: Warnings

    /// One line each, for stderr.
    var warnings: [String] {
        var lines: [String] = []
        let counts = evaluation.resultCounts
        if counts.unknownImage > 0 {
            lines.append("\(counts.unknownImage) results for image ids not in the annotations were skipped")
        }
        if counts.unknownCategory > 0 {
            lines.append("\(counts.unknownCategory) results for category ids not in the annotations were skipped")
        }
        if let run {
            if let map = run.categoryMap, !map.unmatchedClasses.isEmpty {
                lines.append("classes without a category in the annotations, not scored (\(run.unmapped) detections): "
                             + map.unmatchedClasses.joined(separator: ", "))
            }
            if run.failed > 0 { lines.append("\(run.failed) of \(run.planned) images could not be read and are left out of the figures") }
            if run.interrupted { lines.append("interrupted: the figures cover the \(run.covered.count) images run so far") }
        }
        return lines
    }

    // MARK: Text

    /// A coverage line, the 12 pycocotools lines, and optionally the per-class table.
    func text(perClass: Bool) -> String {
        var lines = [coverage]
        lines.append(evaluation.summary.text())
        if perClass {
            lines.append("")
            lines.append(row(["id", "category", "objects", "detections", "AP", "AP50"]))
            for c in evaluation.categories {
                lines.append(row([String(c.categoryID), c.name, String(c.groundTruthCount), String(c.detectionCount),
                                  figure(c.ap), figure(c.ap50)]))
            }
        }
        return lines.joined(separator: "\n")
    }

    private var coverage: String {
        var text = "\(evaluation.imageCount) images, \(evaluation.objectCount) objects, \(truth.categories.count) categories; "
            + "\(evaluation.resultCounts.evaluated) of \(resultCount) results scored"
        if let run {
            text += String(format: "; model run: %d of %d images in %.1f s", run.covered.count, run.planned, run.seconds)
            if let map = run.categoryMap { text += " (category map: \(map.kind.rawValue))" }
        }
        return text
    }

    /// Table columns: id and name left-aligned, numbers right-aligned.
    private func row(_ cells: [String]) -> String {
        let widths = [4, 20, 8, 10, 7, 7]
        return zip(cells, widths).enumerated().map { index, item in
            let padding = String(repeating: " ", count: max(item.1 - item.0.count, 0))
            return index < 2 ? item.0 + padding : padding + item.0
        }.joined(separator: " ")
    }

    private func figure(_ value: Double) -> String {
        value < 0 ? "-" : String(format: "%.4f", value)
    }

    // MARK: JSON

    /// Every figure at full precision (shortest round-trip decimal), for scripts.
    func json(perClass: Bool) -> String {
        var fields: [String] = []
        fields.append("\"images\": \(evaluation.imageCount)")
        fields.append("\"objects\": \(evaluation.objectCount)")
        fields.append("\"results\": \(resultCount)")
        let counts = evaluation.resultCounts
        fields.append("\"resultsScored\": \(counts.evaluated)")
        fields.append("\"resultsSkipped\": {\"unknownImage\": \(counts.unknownImage), \"unknownCategory\": \(counts.unknownCategory)}")
        for (name, value) in evaluation.summary.jsonFields { fields.append("\"\(name)\": \(value)") }
        fields.append("\"stats\": [\(evaluation.summary.values.map { "\($0)" }.joined(separator: ", "))]")
        if let run {
            fields.append("\"run\": {\"planned\": \(run.planned), \"covered\": \(run.covered.count), \"failed\": \(run.failed), "
                          + "\"interrupted\": \(run.interrupted), \"seconds\": \(run.seconds)}")
        }
        if perClass {
            let rows = evaluation.categories.map { c in
                "    {\"id\": \(c.categoryID), \"name\": \(quoted(c.name)), \"objects\": \(c.groundTruthCount), "
                    + "\"detections\": \(c.detectionCount), \"AP\": \(c.ap), \"AP50\": \(c.ap50)}"
            }
            fields.append("\"perClass\": [\n" + rows.joined(separator: ",\n") + "\n  ]")
        }
        return "{\n  " + fields.joined(separator: ",\n  ") + "\n}"
    }

    private func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [])
        let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"?\"]"
        return String(array.dropFirst().dropLast())
    }
}
