import ArgumentParser
import Foundation
@_spi(Engine) import YOLO

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two model files of the same network: per-layer weight error, raw heads, detections.",
        discussion: """
            MODEL_A is the reference (e.g. a float file from `yolo convert --quantize none`), MODEL_B the \
            candidate (e.g. lut8). Inputs ending in .npy are network input blobs (1x3xHxW float32): for them \
            the largest |difference| of each raw head is printed. Other inputs are images: a float detection \
            counts as matched when B has a detection of the same class with IoU >= --match-iou.
            """)

    @Argument(help: "Reference model file (.yolo).")
    var modelA: String

    @Argument(help: "Candidate model file (.yolo).")
    var modelB: String

    @Argument(help: "Images or .npy input blobs.")
    var inputs: [String] = []

    @Option(name: .customLong("match-iou"), help: "IoU a detection of B needs to match one of A (default: 0.9, or 0.85 / 0.8 when B is lut6 / lut4).")
    var matchIoU: Double?

    func validate() throws {
        if let matchIoU, !(matchIoU > 0 && matchIoU <= 1) {
            throw YOLOError.invalidArgument("--match-iou must be in (0, 1]; got \(matchIoU)")
        }
    }

    func run() throws {
        let a = try Model(contentsOf: modelA, residency: .codes)
        let b = try Model(contentsOf: modelB, residency: .codes)
        let coarsest = b.quantizedConvolutions.values.map(\.weights.type).min { $0.bits < $1.bits }
        try ModelComparison.printReport(reference: a, candidate: b, images: inputs,
                                        matchIoU: matchIoU ?? ModelComparison.defaultMatchIoU(for: coarsest))
    }
}
