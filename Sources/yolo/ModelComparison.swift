import Foundation
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOConversion

/// The accuracy report shared by `yolo convert --report` and `yolo compare`.
enum ModelComparison {
    /// The IoU a quantized detection needs to match a float one, by code width.
    static func defaultMatchIoU(for type: LUTType?) -> Double {
        switch type {
        case .lut4: return 0.8
        case .lut6: return 0.85
        default: return 0.9
        }
    }

    /// Prints per-layer weight errors of `candidate` against `reference`, then, on `inputs`, the
    /// agreement of their raw heads (`.npy` input blobs) and of their detections (image files).
    static func printReport(reference: Model, candidate: Model, images inputs: [String], matchIoU: Double) throws {
        let rows = try LayerWeightComparison.compare(reference, candidate)
        print("layer  storage A            storage B             bytes A    bytes B   weights        RMSE   rel RMSE   max |dw|  max |db|")
        for row in rows {
            let storage = row.storageA.padding(toLength: 20, withPad: " ", startingAt: 0) + " "
                + row.storageB.padding(toLength: 20, withPad: " ", startingAt: 0)
            print(String(format: "%5d  %@ %9d  %9d  %8d  %10.3g  %9.3g  %9.3g  %8.2g", row.layer,
                         storage, row.bytesA, row.bytesB, row.weights, row.error.rmse,
                         row.error.rms > 0 ? row.error.rmse / row.error.rms : 0, row.error.maxError, row.biasMaxError))
        }
        let totalA = rows.reduce(0) { $0 + $1.bytesA }, totalB = rows.reduce(0) { $0 + $1.bytesB }
        print("parameter bytes: \(totalA) (A) vs \(totalB) (B)")

        let blobs = inputs.filter { $0.hasSuffix(".npy") }
        let images = inputs.filter { !$0.hasSuffix(".npy") }
        if !blobs.isEmpty {
            var worst: [Float] = [], squares: [Double] = []
            for path in blobs {
                let input = try Tensor.readNumPy(path)
                let a = try Network(model: reference, width: input.shape.width, height: input.shape.height)
                let b = try Network(model: candidate, width: input.shape.width, height: input.shape.height)
                let differences = try HeadAgreement.differences(a, b, input: input)
                worst = worst.isEmpty ? differences.map(\.max) : zip(worst, differences).map { max($0, $1.max) }
                squares = squares.isEmpty ? differences.map { $0.rms * $0.rms } : zip(squares, differences).map { $0 + $1.rms * $1.rms }
                print("\(path): heads max |d| " + differences.map { String(format: "%.4g", $0.max) }.joined(separator: ", ")
                      + ", rms " + differences.map { String(format: "%.4g", $0.rms) }.joined(separator: ", "))
            }
            print("raw heads over \(blobs.count) inputs: max |d| " + worst.map { String(format: "%.4g", $0) }.joined(separator: ", ")
                  + ", rms " + squares.map { String(format: "%.4g", ($0 / Double(blobs.count)).squareRoot()) }.joined(separator: ", "))
        }
        if !images.isEmpty {
            let agreement = try detectionAgreement(reference: reference, candidate: candidate, images: images, matchIoU: matchIoU)
            for miss in agreement.misses { print("unmatched: \(miss)") }
            print("detections over \(images.count) images: \(agreement.summary)")
        }
    }

    /// Runs both models on every image (default detection options) and matches their detections.
    static func detectionAgreement(reference: Model, candidate: Model, images: [String], matchIoU: Double) throws -> DetectionAgreement {
        var agreement = DetectionAgreement(iouThreshold: matchIoU)
        let a = try Detector(model: reference), b = try Detector(model: candidate)
        for path in images {
            let image = try Image(contentsOf: path)
            agreement.add(reference: try a.detect(image), candidate: try b.detect(image), image: (path as NSString).lastPathComponent)
        }
        return agreement
    }
}
