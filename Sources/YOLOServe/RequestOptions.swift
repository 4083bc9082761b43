import Foundation
@_spi(Engine) import YOLO
import YOLOReport

/// The detection options of one `POST /v1/detect`, from query parameters and form fields (a form field
/// wins over a query parameter of the same name). Unknown names are an error, so a typo is not ignored.
package enum RequestOptions {
    /// The names a request may set.
    package static let names = ["conf", "iou", "classes", "scale", "roi", "max_det", "agnostic", "size"]

    package static func parse(_ fields: [String: String], memoryBudget: Int) throws -> DetectionOptions {
        if let unknown = fields.keys.sorted().first(where: { !names.contains($0) }) {
            throw YOLOError.invalidArgument("unknown option '\(unknown)' (options: \(names.joined(separator: ", ")))")
        }
        var options = DetectionOptions()
        options.memoryBudget = memoryBudget
        if let text = fields["conf"] { options.confidenceThreshold = try OptionText.confidence(number(text, "conf"), name: "conf") }
        if let text = fields["iou"] { options.iouThreshold = try OptionText.iou(number(text, "iou"), name: "iou") }
        if let text = fields["classes"] { options.classes = try OptionText.classes(text, name: "classes") }
        if let text = fields["scale"] { try OptionText.setScaling(text, name: "scale", in: &options) }
        if let text = fields["roi"] { options.regionOfInterest = try OptionText.region(text, name: "roi") }
        if let text = fields["max_det"] {
            guard let n = Int(text), n >= 1 else { throw YOLOError.invalidArgument("max_det must be a whole number of at least 1, got '\(text)'") }
            options.maximumDetections = n
        }
        if let text = fields["agnostic"] {
            switch text.lowercased() {
            case "true", "1", "yes": options.classAgnostic = true
            case "false", "0", "no": options.classAgnostic = false
            default: throw YOLOError.invalidArgument("agnostic must be true or false, got '\(text)'")
            }
        }
        if let text = fields["size"] { options.inputSize = try OptionText.inputSize(text, name: "size") }
        return options
    }

    private static func number(_ text: String, _ name: String) throws -> Float {
        guard let value = Float(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw YOLOError.invalidArgument("\(name) must be a number, got '\(text)'")
        }
        return value
    }
}
