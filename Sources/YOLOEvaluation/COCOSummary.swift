import Foundation
@_spi(Engine) import YOLO

/// The 12 standard COCO bbox figures, in `COCOeval.stats` order. -1 marks a figure with no ground truth
/// to measure (e.g. AP small on a set without small objects).
public struct COCOSummary: Sendable, Equatable {
    /// What each figure is: AP or AR, IoU range, area range and maxDets, in `stats` order.
    public static let layout: [(precision: Bool, iou: String, area: String, maxDets: Int)] = [
        (true, "0.50:0.95", "all", 100), (true, "0.50", "all", 100), (true, "0.75", "all", 100),
        (true, "0.50:0.95", "small", 100), (true, "0.50:0.95", "medium", 100), (true, "0.50:0.95", "large", 100),
        (false, "0.50:0.95", "all", 1), (false, "0.50:0.95", "all", 10), (false, "0.50:0.95", "all", 100),
        (false, "0.50:0.95", "small", 100), (false, "0.50:0.95", "medium", 100), (false, "0.50:0.95", "large", 100),
    ]

    /// The 12 figures: AP, AP50, AP75, AP small/medium/large, AR@1, AR@10, AR@100, AR small/medium/large.
    public let values: [Double]

    /// Wraps 12 figures in `stats` order.
    public init(values: [Double]) {
        precondition(values.count == 12, "a COCO summary has 12 figures")
        self.values = values
    }

    /// mAP@[.5:.95] (the COCO "AP").
    public var ap: Double { values[0] }
    /// mAP@.5 (the PASCAL-style figure).
    public var ap50: Double { values[1] }

    // MARK: Rendering

    /// The familiar pycocotools lines, e.g.
    /// ` Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.149`,
    /// with `decimals` digits (pycocotools prints 3).
    public func text(decimals: Int = 3) -> String {
        zip(Self.layout, values).map { item, value in
            let title = item.precision ? "Average Precision" : "Average Recall"
            let kind = item.precision ? "(AP)" : "(AR)"
            return " \(pad(title, 18)) \(kind) @[ IoU=\(pad(item.iou, 9)) | area=\(padLeft(item.area, 6)) | "
                + "maxDets=\(padLeft(String(item.maxDets), 3)) ] = \(String(format: "%.\(decimals)f", value))"
        }.joined(separator: "\n")
    }

    /// The 12 figures with short names for JSON output: AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl.
    @_spi(Engine) public var jsonFields: [(String, Double)] {
        zip(["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"], values).map { ($0, $1) }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
