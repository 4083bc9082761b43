import Foundation
@_spi(Engine) import YOLO

/// What `yolo detect` prints for one image.
package struct DetectionReport: Sendable {
    package var path: String
    package var image: Image
    package var detections: [Detection]
    package var elapsed: Duration

    package init(path: String, image: Image, detections: [Detection], elapsed: Duration) {
        self.path = path
        self.image = image
        self.detections = detections
        self.elapsed = elapsed
    }

    /// Pixel corners in the upright original, clipped to it.
    package func corners(_ detection: Detection) -> (Double, Double, Double, Double) {
        let r = detection.clippedBox.scaled(width: Double(image.sourceWidth), height: Double(image.sourceHeight))
        return (r.minX, r.minY, r.maxX, r.maxY)
    }

    /// Darknet-like text: a header line, then `label: NN%  x1,y1 x2,y2` per detection.
    package func text() -> String {
        let header = "\(path): \(image.sourceWidth)x\(image.sourceHeight), \(detections.count) object\(detections.count == 1 ? "" : "s") (\(elapsed.formattedMilliseconds))"
        return ([header] + detectionLines()).joined(separator: "\n")
    }

    /// One JSON object: image, width, height, detections [label, classIndex, confidence, box, labels, objectness].
    package func json(pretty: Bool) -> String {
        let items = detectionItems()
        let head = "\"image\": \(JSON.string(path)), \"width\": \(image.sourceWidth), \"height\": \(image.sourceHeight), "
            + "\"time_ms\": \(JSON.number(elapsed.milliseconds))"
        if pretty {
            let body = items.isEmpty ? "[]" : "[\n    " + items.joined(separator: ",\n    ") + "\n  ]"
            return "{\n  \(head.replacingOccurrences(of: ", \"", with: ",\n  \""))," + "\n  \"detections\": \(body)\n}"
        }
        return "{\(head), \"detections\": [\(items.joined(separator: ", "))]}"
    }

    /// One JSON object per detection.
    package func detectionItems() -> [String] {
        detections.map { d -> String in
            let (x1, y1, x2, y2) = corners(d)
            let labels = d.labels.map { "{\"label\": \(JSON.string($0.label)), \"classIndex\": \($0.classIndex), \"confidence\": \(JSON.number($0.confidence))}" }
            return "{\"label\": \(JSON.string(d.label)), \"classIndex\": \(d.classIndex), \"confidence\": \(JSON.number(d.confidence)), "
                + "\"box\": [\(JSON.number(x1)), \(JSON.number(y1)), \(JSON.number(x2)), \(JSON.number(y2))], "
                + "\"objectness\": \(JSON.number(d.objectness)), \"labels\": [\(labels.joined(separator: ", "))]}"
        }
    }

    /// The detection lines of `text()` (without its header).
    package func detectionLines() -> [String] {
        detections.map { d in
            let (x1, y1, x2, y2) = corners(d)
            let others = d.labels.dropFirst().map { "\($0.label) \(Int(($0.confidence * 100).rounded()))%" }
            return "\(d.label): \(Int((d.confidence * 100).rounded()))%  \(Int(x1)),\(Int(y1)) \(Int(x2)),\(Int(y2))"
                + (others.isEmpty ? "" : "  (also \(others.joined(separator: ", ")))")
        }
    }
}

/// Minimal JSON text helpers (exact control over field order and number format).
package enum JSON {
    package static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    package static func number(_ value: Double, decimals: Int = 3) -> String {
        guard value.isFinite else { return "null" }
        var text = String(format: "%.\(decimals)f", value)
        while text.contains("."), text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    package static func number(_ value: Float) -> String { number(Double(value), decimals: 6) }
}
