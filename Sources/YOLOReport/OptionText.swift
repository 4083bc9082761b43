import Foundation
@_spi(Engine) import YOLO

/// Detection options as text, parsed the same way by `yolo detect`'s flags and `yolo serve`'s query and
/// form fields. `name` is how the caller names the option in an error (`--roi`, `roi`).
package enum OptionText {
    /// Scaling names and what they mean: the geometry and the resampler together, as `--scale` and `scale`
    /// name them (stretch and fill differ only in the resampler).
    package static let scalings: [(name: String, scaling: DetectionOptions.Scaling, resampling: DetectionOptions.Resampling)] = [
        ("fit", .scaleFit, .darknet), ("stretch", .scaleFill, .darknet), ("fill", .scaleFill, .openCV), ("crop", .centerCrop, .openCV),
    ]

    /// The name of a scaling and resampling pair (`scalings`), or both raw names when none has one.
    package static func name(_ scaling: DetectionOptions.Scaling, _ resampling: DetectionOptions.Resampling) -> String {
        scalings.first { $0.scaling == scaling && $0.resampling == resampling }?.name ?? "\(scaling.rawValue) (\(resampling.rawValue))"
    }

    /// Sets `options`' scaling and resampling from a `scalings` name.
    package static func setScaling(_ text: String, name: String, in options: inout DetectionOptions) throws {
        guard let found = scalings.first(where: { $0.name == text.lowercased() }) else {
            throw YOLOError.invalidArgument("\(name) must be one of \(scalings.map(\.name).joined(separator: ", ")), got '\(text)'")
        }
        options.scaling = found.scaling
        options.resampling = found.resampling
    }

    /// `x,y,w,h`, normalized to the upright image.
    package static func region(_ text: String, name: String) throws -> Rect {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3] else {
            throw YOLOError.invalidArgument("\(name) must be x,y,w,h (four numbers in [0, 1]), got '\(text)'")
        }
        return Rect(x: x, y: y, width: w, height: h)
    }

    /// Comma-separated class names or indices.
    package static func classes(_ text: String, name: String) throws -> Set<DetectionOptions.ClassSelector> {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else {
            throw YOLOError.invalidArgument("\(name) needs at least one class name or index (leave it out to report every class)")
        }
        return Set(names.map { Int($0).map(DetectionOptions.ClassSelector.index) ?? .label($0) })
    }

    /// `WxH` (e.g. `416x256`) with positive integers.
    package static func size(_ text: String, name: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
            throw YOLOError.invalidArgument("\(name) must be WxH with positive integers, e.g. 416x416; got '\(text)'")
        }
        return (w, h)
    }

    /// A network input size: `WxH`, or `auto` (the region's aspect ratio within a 416² pixel budget).
    package static func inputSize(_ text: String, name: String) throws -> DetectionOptions.InputSize {
        if text.lowercased() == "auto" { return .automatic(pixelBudget: 416 * 416) }
        let (width, height) = try size(text, name: name)
        return .fixed(width: width, height: height)
    }

    /// A confidence threshold in [0, 1).
    package static func confidence(_ value: Float, name: String) throws -> Float {
        guard value >= 0 && value < 1 else { throw YOLOError.invalidArgument("\(name) must be in [0, 1), got \(value)") }
        return value
    }

    /// An IoU threshold in (0, 1].
    package static func iou(_ value: Float, name: String) throws -> Float {
        guard value > 0 && value <= 1 else { throw YOLOError.invalidArgument("\(name) must be in (0, 1], got \(value)") }
        return value
    }
}
